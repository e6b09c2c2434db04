// End to end: lifting a quarantine (`undrainable: quarantine`) once the PDB allows the eviction, and what
// an operator's own cordon keeps.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { parseQuarantine } from '../../src/rules/quarantine.js';
import { act, ann, byName, node, REVISION, requireKubectl, startCluster, verifiedRev } from './helpers.js';
import { blockedCluster, PENDING_POD, QUARANTINE_INPUTS, QUARANTINED } from './quarantineCluster.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

describe('e2e: undrainable: quarantine', () => {
  it('a worker an operator cordoned before the first run stays cordoned once its quarantine is lifted', async () => {
    const cluster = (c = await blockedCluster({ worker2Cordoned: true }));
    const run = await act(cluster, { ...QUARANTINE_INPUTS, nodes: 'worker-2' });
    expect(run.exitCode, run.stdout).toBe(1);
    expect(byName(run)['worker-2'].outcome).toBe('quarantined');
    expect(parseQuarantine(ann(cluster, 'worker-2')[QUARANTINED])).toMatchObject({ ok: true, record: { wasCordoned: true } });
    cluster.kube.setPdbAllowed('shop', 'db', 1);
    const again = await act(cluster, { ...QUARANTINE_INPUTS, nodes: 'worker-2' });
    expect(again.exitCode, again.stdout).toBe(0);
    expect(byName(again)['worker-2'].outcome).toBe('rebooted');
    expect(node(cluster, 'worker-2').spec.unschedulable).toBe(true);
    expect(ann(cluster, 'worker-2')[QUARANTINED]).toBeUndefined();
    expect(verifiedRev(ann(cluster, 'worker-2'))).toBe(REVISION);
  });

  it('four workers each behind a PDB that never allows an eviction, max-unavailable 1: one is quarantined, the run fails naming it, the other three are never touched', async () => {
    const cluster = (c = await startCluster({ defaultNodes: false }));
    const workers = ['worker-1', 'worker-2', 'worker-3', 'worker-4'];
    for (const w of workers) {
      cluster.addNode({ name: w, role: 'worker' });
      cluster.kube.addPod({
        namespace: 'shop',
        name: `db-${w}`,
        nodeName: w,
        owner: { kind: 'StatefulSet', name: `db-${w}` },
        labels: { app: `db-${w}` },
      });
      // a second replica Pending: the budget waits for it, the drain is not refused but times out
      cluster.kube.addPod({
        ...PENDING_POD,
        name: `db-${w}-1`,
        owner: { kind: 'StatefulSet', name: `db-${w}` },
        labels: { app: `db-${w}` },
      });
      cluster.kube.addPdb({ namespace: 'shop', name: `db-${w}`, selector: { app: `db-${w}` }, disruptionsAllowed: 0 });
    }
    const run = await act(cluster, { 'max-unavailable': '1', undrainable: 'quarantine', 'drain-timeout': '4s' });
    expect(run.exitCode, run.stdout).toBe(1);
    expect(run.outputs.result).toBe('failed');
    expect(Object.entries(byName(run)).map(([n, d]) => [n, d.outcome])).toEqual([['worker-1', 'quarantined']]);
    expect(run.outputs.left).toBe('3');
    // From the twin: only worker-1 is cordoned; the others were never written to, nothing was rebooted.
    expect(workers.filter((w) => node(cluster, w).spec.unschedulable)).toEqual(['worker-1']);
    for (const w of workers.slice(1)) {
      expect(cluster.kube.requests.filter((r) => r.method === 'PATCH' && r.path === `/api/v1/nodes/${w}`)).toEqual([]);
    }
    expect(cluster.talos.mutatingCommands().filter((x) => x.command === 'reboot')).toEqual([]);
    // The error names the quarantined node and why nothing more started.
    const failure = run.annotations.find((a) => a.kind === 'error' && a.message.includes('node(s) quarantined'));
    expect(failure?.message).toContain('the roll stopped with 3 node(s) not started (worker-2, worker-3, worker-4)');
    expect(failure?.message).toContain('Quarantined: worker-1 (quarantined by this run)');
    expect(failure?.message).toContain('worker-2: 1 worker out (quarantined: worker-1), max-unavailable is 1');
    expect(failure?.message).toContain('worker-1: drain timed out after 4.0 s, blocked by PodDisruptionBudget shop/db-worker-1');
  });
});
