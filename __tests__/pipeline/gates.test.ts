// The health gates in a run (src/pipeline/gates.ts, the scheduler's check before each start): a start
// waits while a gate is false, a gate false past gate-timeout ends the run partial naming it and its
// last value, a converged run reads no gate, an unserved user kind is an input error before the Lease,
// and plan shows each gate's value now.
import { describe, expect, it } from 'vitest';
import type { GateObject, GateSpec } from '../../src/core/model/gates.js';
import { keys, makeCluster, roll, provenMarker } from './harness.js';

const MIN = 60_000;
const GATE: GateSpec = {
  name: 'db-ready',
  kind: 'Cluster',
  group: 'example.com',
  namespace: 'db',
  expression: 'self.status.ready == true',
};
const CLUSTER_KIND = { resource: 'clusters', group: 'example.com', version: 'v1', kind: 'Cluster', namespaced: true };
const LONGHORN_KIND = { resource: 'volumes', group: 'longhorn.io', version: 'v1beta2', kind: 'Volume', namespaced: true };
const dbCluster = (ready: boolean): GateObject => ({
  group: 'example.com',
  kind: 'Cluster',
  namespace: 'db',
  name: 'pg',
  labels: {},
  object: { status: { ready } },
});
const workers = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `w-${i + 1}`, role: 'worker' as const }));
const logOf = () => {
  const lines: string[] = [];
  return { lines, log: { info: (m: string) => lines.push(m), group: () => () => undefined } };
};
const claimsOf = (c: ReturnType<typeof makeCluster>) =>
  c.kube.calls
    .filter((x) => x.method === 'patchNode' && x.ops?.some((o) => o.op === 'add' && o.path.includes(keys.owner.replace('/', '~1'))))
    .map((x) => x.name);

describe('health gates before each start', () => {
  it('a gate false after the first node rolled holds the next start until it holds again; the wait is a hold', async () => {
    const c = makeCluster(workers(2));
    c.kube.served.push(CLUSTER_KIND);
    // false from the first node's end for 5 minutes (a database re-electing after its reboot)
    let falseUntil = 0;
    c.kube.gateObjects = () => [dbCluster(c.clock.now() >= falseUntil)];
    const { lines, log } = logOf();
    let firstEnded = 0;
    const res = await roll(
      c,
      { healthGates: [GATE], storageGate: true },
      {
        log,
        publishHeld: (held) => {
          if (held.length === 0 && !firstEnded) {
            firstEnded = c.clock.now();
            falseUntil = firstEnded + 5 * MIN;
          }
        },
      },
    );
    expect(res.result).toBe('processed');
    expect(res.records.map((r) => r.node)).toEqual(['w-1', 'w-2']);
    const w2Start = Date.parse(res.records[1].startedAt!);
    expect(w2Start).toBeGreaterThanOrEqual(falseUntil);
    expect(res.holds).toEqual([
      { kind: 'gate', startedAt: expect.any(String), endedAt: expect.any(String), detail: 'db-ready: Cluster db/pg: false', node: 'w-2' },
    ]);
    expect(lines).toContain('health gates: new starts (next: w-2) wait for db-ready: Cluster db/pg: false');
    expect(lines.some((l) => /^health gates: all hold again after 5m/.test(l))).toBe(true);
    // discovery once per run; one listing per check
    expect(c.kube.calls.filter((x) => x.method === 'servedKinds')).toHaveLength(1);
    expect(c.kube.calls.filter((x) => x.method === 'listGateObjects')[0].name).toBe(
      'persistentvolumes,persistentvolumeclaims,volumeattachments,clusters',
    );
  });

  it('a gate false past gate-timeout stops new starts: the run ends partial naming the gate and its last value, no claim', async () => {
    const c = makeCluster(workers(2));
    c.kube.served.push(CLUSTER_KIND);
    c.kube.gateObjects = () => [dbCluster(false)];
    const res = await roll(c, { healthGates: [GATE], gateTimeoutMs: 3 * MIN, storageGate: false });
    expect(res.result).toBe('partial');
    expect(res.records).toEqual([]);
    expect(res.notReached).toEqual(['w-1', 'w-2']);
    expect(res.notice).toBe(
      'health gate db-ready stayed false for 3m0s (gate-timeout): db-ready: Cluster db/pg: false; no further node was started',
    );
    expect(claimsOf(c)).toEqual([]);
    expect(c.kube.calls.filter((x) => x.method === 'patchNode')).toEqual([]);
  });

  it('a listing that fails is a gate that does not hold (retried), never one that holds', async () => {
    const c = makeCluster(workers(1));
    const { ToolError } = await import('../../src/core/errors.js');
    // the tool's words may quote what it read (an answer that did not parse is excerpted): only the classified cause is said
    const stderr = 'error: unexpected answer {"items":[{"status":{"message":"token=s3cr3t"}}]}';
    c.kube.gateListError = new ToolError({ tool: 'kubectl', command: 'kubectl get', kind: 'forbidden', exitCode: 1, stderr });
    const res = await roll(c, { storageGate: true, gateTimeoutMs: MIN });
    expect(res.result).toBe('partial');
    expect(res.notice).toMatch(
      /^health gate storage\/persistentvolumes, storage\/persistentvolumeclaims, storage\/volumeattachments stayed false for 1m0s \(gate-timeout\): storage\/persistentvolumes: could not be read: the listing failed \(forbidden\);/,
    );
    expect(JSON.stringify(res)).not.toContain('s3cr3t');
  });

  it('the storage gate: a kind the cluster does not serve (no Longhorn) is skipped and said once', async () => {
    const c = makeCluster(workers(2));
    const { lines, log } = logOf();
    const res = await roll(c, { storageGate: true }, { log });
    expect(res.result).toBe('processed');
    expect(lines.filter((l) => l.includes('skipped'))).toEqual([
      'health gates: storage/longhorn-volumes skipped: the cluster does not serve its kind',
    ]);
    expect(c.kube.calls.filter((x) => x.method === 'listGateObjects')).toHaveLength(2);
  });

  it('a degraded Longhorn volume holds the start', async () => {
    const c = makeCluster(workers(1));
    c.kube.served.push(LONGHORN_KIND);
    const t0 = c.clock.now();
    c.kube.gateObjects = () => [
      {
        group: 'longhorn.io',
        kind: 'Volume',
        namespace: 'longhorn-system',
        name: 'pvc-1',
        labels: {},
        object: { status: { robustness: c.clock.now() - t0 < 2 * MIN ? 'degraded' : 'healthy' } },
      },
    ];
    const res = await roll(c, { storageGate: true });
    expect(res.result).toBe('processed');
    expect(Date.parse(res.records[0].startedAt!) - t0).toBeGreaterThanOrEqual(2 * MIN);
    expect(res.holds?.[0]).toMatchObject({
      kind: 'gate',
      detail: 'storage/longhorn-volumes: Volume longhorn-system/pvc-1: robustness degraded',
    });
  });

  it('a converged run reads no gate: the node listing alone', async () => {
    const c = makeCluster([{ name: 'w-1', role: 'worker', annotations: { [keys.verified]: provenMarker('rev-2') } }]);
    c.kube.served.push(CLUSTER_KIND);
    const res = await roll(c, { storageGate: true, healthGates: [GATE] });
    expect(res.result).toBe('clean');
    expect(c.kube.calls.map((x) => x.method)).toEqual(['listNodes']);
  });

  it('a user gate over a kind the cluster does not serve is an input error before the Lease, nothing touched', async () => {
    const c = makeCluster(workers(1));
    const err = await roll(c, { healthGates: [GATE] }).catch((e: Error) => e);
    expect(err).toMatchObject({ name: 'InputError', input: 'health-gates' });
    expect((err as Error).message).toBe(
      'input "health-gates": gate "db-ready": the cluster serves no kind Cluster.example.com (kubectl api-resources); nothing was changed',
    );
    expect(c.kube.mutatingCalls()).toEqual([]);
    expect(c.kube.leases.size).toBe(0);
  });

  it('plan shows each gate value now and changes nothing', async () => {
    const c = makeCluster(workers(1));
    c.kube.served.push(CLUSTER_KIND);
    c.kube.gateObjects = () => [dbCluster(false)];
    const { lines, log } = logOf();
    const res = await roll(c, { mode: 'plan', storageGate: true, healthGates: [GATE] }, { log });
    expect(res.result).toBe('planned');
    expect(res.gates).toEqual([
      { name: 'storage/persistentvolumes', holds: true, kind: 'PersistentVolume', selected: 0 },
      { name: 'storage/persistentvolumeclaims', holds: true, kind: 'PersistentVolumeClaim', selected: 0 },
      { name: 'storage/volumeattachments', holds: true, kind: 'VolumeAttachment', selected: 0 },
      {
        name: 'db-ready',
        holds: false,
        kind: 'Cluster',
        selected: 1,
        failing: { count: 1, object: { kind: 'Cluster', namespace: 'db', name: 'pg' }, finding: { type: 'boolean', value: false } },
      },
    ]);
    expect(lines).toContain('health gate db-ready: does not hold (Cluster db/pg: false)');
    expect(lines).toContain('health gate storage/persistentvolumes: holds (no PersistentVolume selected)');
    expect(c.kube.mutatingCalls()).toEqual([]);
  });
});
