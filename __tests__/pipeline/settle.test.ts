// The settle gate in the pipeline, on the in-memory fakes and virtual time (the e2e test checks the
// same through the bundle, the real kubectl and the twin's own event log).
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/errors.js';
import type { WorkloadStatus } from '../../src/core/workloads.js';
import { SettleTimeoutError } from '../../src/pipeline/settle.js';
import { keys, makeCluster, roll } from './harness.js';

const MIN = 60_000;
const workers = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `w${i + 1}` }));

/** A Deployment `web` (its ReplicaSet web-5f6 has a pod on w1) whose evicted pod is available again `delayMs` after w1's drain. */
function webOnW1(c: ReturnType<typeof makeCluster>, delayMs: number | 'never') {
  c.kube.podOwners = [
    {
      namespace: 'shop',
      name: 'web-5f6-a',
      nodeName: 'w1',
      phase: 'Running',
      mirror: false,
      controller: { kind: 'ReplicaSet', name: 'web-5f6' },
    },
    {
      namespace: 'kube-system',
      name: 'agent-x',
      nodeName: 'w1',
      phase: 'Running',
      mirror: false,
      controller: { kind: 'DaemonSet', name: 'agent' },
    },
  ];
  const drainedAt = new Map<string, number>();
  c.kube.drainBody = async (name) => {
    drainedAt.set(name, c.clock.now());
  };
  const availableAt = () => (delayMs === 'never' || !drainedAt.has('w1') ? Infinity : drainedAt.get('w1')! + delayMs);
  c.kube.workloads = () => {
    const down = drainedAt.has('w1') && c.clock.now() < availableAt() ? 1 : 0;
    const common = { namespace: 'shop', generation: 1, observedGeneration: 1, specReplicas: 2, replicas: 2, unavailableReplicas: down };
    const st: WorkloadStatus[] = [
      { ...common, kind: 'Deployment', name: 'web', readyReplicas: 2 - down, availableReplicas: 2 - down, updatedReplicas: 2 },
      {
        ...common,
        kind: 'ReplicaSet',
        name: 'web-5f6',
        readyReplicas: 2 - down,
        availableReplicas: 2 - down,
        updatedReplicas: 0,
        ownerDeployment: 'web',
      },
    ];
    return st;
  };
  return { drainedAt, availableAt };
}

describe('settle gate (fakes)', () => {
  it("one at a time: w2's drain waits until the Deployment whose pod w1's drain evicted is available again", async () => {
    const c = makeCluster(workers(2));
    const { drainedAt, availableAt } = webOnW1(c, 5 * MIN);
    const res = await roll(c, { settleTimeoutMs: 10 * MIN });
    expect(res.result).toBe('processed');
    expect(drainedAt.get('w2')!).toBeGreaterThanOrEqual(availableAt());
    expect(res.holds).toEqual([
      expect.objectContaining({ kind: 'settle', node: 'w2', detail: 'Deployment shop/web: available 1 of 2 desired' }),
    ]);
    const hold = res.holds![0];
    expect(Date.parse(hold.endedAt!)).toBeGreaterThanOrEqual(availableAt());
    const w2 = res.records.find((r) => r.node === 'w2')!;
    expect(w2.steps.map((s) => s.name)).toContain('settle gate (before drain)');
    // one pod list per drained node, no more
    expect(c.kube.calls.filter((x) => x.method === 'listPodOwners').map((x) => x.name)).toEqual(['w1', 'w2']);
  });

  it('a workload that never becomes available: w2 is released undrained, w3 never starts, the error names the workload', async () => {
    const c = makeCluster(workers(3));
    const { drainedAt } = webOnW1(c, 'never');
    const res = await roll(c, { settleTimeoutMs: 3 * MIN });
    expect(res.result).toBe('failed');
    expect(res.error?.message).toMatch(
      /w2: settle gate: Deployment shop\/web \(available 1 of 2 desired\) did not become available again within settle-timeout 3m/,
    );
    expect(res.error?.cause).toBeDefined();
    const w2 = res.records.find((r) => r.node === 'w2')!;
    expect(w2.outcome).toBe('failed');
    expect([...drainedAt.keys()]).toEqual(['w1']);
    const w2Address = c.kube.state('w2').internalIPs[0];
    expect(c.talos.calls.filter((x) => x.method === 'reboot' && x.addresses?.includes(w2Address))).toEqual([]);
    expect(c.kube.state('w2').unschedulable).toBe(false);
    expect(c.kube.state('w2').annotations[keys.owner]).toBeUndefined();
    expect(res.notReached).toEqual(['w3']);
  });

  it('settle-timeout 0: no pod list, no status list, no wait', async () => {
    const c = makeCluster(workers(2));
    const { drainedAt } = webOnW1(c, 5 * MIN);
    const res = await roll(c, { settleTimeoutMs: 0 });
    expect(res.result).toBe('processed');
    expect(drainedAt.get('w2')!).toBeLessThan(drainedAt.get('w1')! + 5 * MIN);
    expect(c.kube.calls.filter((x) => x.method === 'listPodOwners' || x.method === 'listWorkloads')).toEqual([]);
    expect(res.holds).toEqual([]);
  });

  it('several workers: a new start is held while a finished node evicted pods are not available again', async () => {
    const c = makeCluster(workers(3));
    const { availableAt } = webOnW1(c, 20 * MIN);
    const res = await roll(c, { settleTimeoutMs: 30 * MIN, maxUnavailable: { count: 2 } });
    expect(res.result).toBe('processed');
    const w3 = res.records.find((r) => r.node === 'w3')!;
    expect(Date.parse(w3.startedAt!)).toBeGreaterThanOrEqual(availableAt());
    expect(res.holds?.some((h) => h.kind === 'settle' && h.node === 'w3')).toBe(true);
  });

  it('several workers, never available: starts stop after settle-timeout with the typed error', async () => {
    const c = makeCluster(workers(3));
    webOnW1(c, 'never');
    const res = await roll(c, { settleTimeoutMs: 3 * MIN, maxUnavailable: { count: 2 } });
    expect(res.result).toBe('failed');
    expect(res.error).toBeInstanceOf(SettleTimeoutError);
    expect((res.error as SettleTimeoutError).unsettled.map((u) => u.workload.name)).toEqual(['web']);
    expect(res.notReached).toEqual(['w3']);
  });

  it('plan predicts the workloads the roll would wait for from one cluster-wide pod list, whatever the node count', async () => {
    const c = makeCluster(workers(3));
    webOnW1(c, 5 * MIN);
    c.kube.podOwners.push({
      namespace: 'shop',
      name: 'db-0',
      nodeName: 'w3',
      phase: 'Running',
      mirror: false,
      controller: { kind: 'StatefulSet', name: 'db' },
    });
    const res = await roll(c, { mode: 'plan', settleTimeoutMs: 10 * MIN });
    expect(res.result).toBe('planned');
    expect(res.settleWaits).toEqual(['Deployment shop/web', 'StatefulSet shop/db']);
    expect(c.kube.calls.filter((x) => x.method === 'listPodOwners')).toEqual([{ method: 'listPodOwners', name: undefined }]);
    expect(c.kube.calls.filter((x) => x.method === 'listWorkloads')).toHaveLength(1);
    const off = makeCluster(workers(1));
    expect((await roll(off, { mode: 'plan', settleTimeoutMs: 0 })).settleWaits).toBeUndefined();
  });

  it('a status list that fails: the held node is released undrained, the run fails saying the gate could not read', async () => {
    const c = makeCluster(workers(2));
    const { drainedAt } = webOnW1(c, 5 * MIN);
    c.kube.workloads = () => {
      throw new ToolError({
        tool: 'kubectl',
        command: 'kubectl get deployments.apps,replicasets.apps,statefulsets.apps -A',
        kind: 'forbidden',
        exitCode: 1,
        stderr: 'Error from server (Forbidden): deployments.apps is forbidden',
      });
    };
    const res = await roll(c, { settleTimeoutMs: 10 * MIN });
    expect(res.result).toBe('failed');
    const w2 = res.records.find((r) => r.node === 'w2')!;
    expect(w2.outcome).toBe('failed');
    expect(w2.reason).toMatch(/^settle gate: .*forbidden/i);
    expect([...drainedAt.keys()]).toEqual(['w1']);
    expect(c.kube.state('w2').unschedulable).toBe(false);
    expect(c.kube.state('w2').annotations[keys.owner]).toBeUndefined();
  });
});
