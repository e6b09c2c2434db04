// End to end: several workers in flight when one fails or the run is cancelled; each node ends as the
// twin's own writes show, never as the action says of itself.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { A, act, ann, byName, decisions, postFindsNothingHeld, REVISION, requireKubectl, startCluster, verifiedRev } from './helpers.js';
import { addWorkers } from './parallelWorkers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

describe('e2e: several workers at once', () => {
  it('a failure on one in-flight node: no node starts after it, the others finish, each ends as its phase says', async () => {
    c = await startCluster();
    addWorkers(c, ['worker-4', 'worker-5', 'worker-6']);
    // web-1 on worker-1 cannot be evicted: worker-1's drain times out and the node is released
    c.kube.setPdbAllowed('default', 'web', 0);
    const run = await act(c, { 'max-unavailable': '3', 'drain-timeout': '4s' });
    expect(run.exitCode).toBe(1);
    expect(run.outputs.result).toBe('failed');
    const d = byName(run);
    expect(d['worker-1'].outcome).toBe('failed');
    // no node started after worker-1's drain failed (the action's own times), and a node it never
    // started was never written to (the twin's writes)
    const drain = d['worker-1'].steps.find((s) => s.name === 'drain' && !s.ok)!;
    const failedAt = Date.parse(drain.startedAt!) + drain.durationMs;
    for (const x of decisions(run)) expect(Date.parse(x.startedAt!), x.name).toBeLessThanOrEqual(failedAt);
    const claimed = new Set(c.kube.nodeWrites.filter((x) => A.owner in x.annotations).map((x) => x.node));
    expect([...claimed].sort()).toEqual(Object.keys(d).sort());
    // every node started ended released (worker-1, its cordon restored) or verified; none stays claimed
    for (const n of c.kube.nodes()) {
      const a = n.metadata.annotations ?? {};
      expect(a[A.owner], n.metadata.name).toBeUndefined();
      if (d[n.metadata.name] && n.metadata.name !== 'worker-1') expect(verifiedRev(a), n.metadata.name).toBe(REVISION);
    }
    expect(c.kube.node('worker-1').spec.unschedulable ?? false).toBe(false);
    // control planes were never started
    for (const cp of ['cp-1', 'cp-2', 'cp-3']) expect(d[cp]).toBeUndefined();
    expect(Number(run.outputs.left)).toBe(6 + 3 - Object.keys(d).length);
  });

  it('cancelled during parallel drains: every drain ends at once and the main step gives each node back itself', async () => {
    c = await startCluster({ defaultNodes: false });
    addWorkers(c, ['w-1', 'w-2', 'w-3']);
    for (const n of ['w-1', 'w-2', 'w-3']) {
      c.kube.addPod({
        namespace: 'default',
        name: `db-${n}`,
        nodeName: n,
        owner: { kind: 'ReplicaSet', name: 'db-1' },
        labels: { app: 'db' },
      });
    }
    // a fourth replica Pending: the budget waits for it, so the drains are not refused before their claims
    c.kube.addPod({
      namespace: 'default',
      name: 'db-pending',
      owner: { kind: 'ReplicaSet', name: 'db-1' },
      labels: { app: 'db' },
      nodeSelector: { 'kubernetes.io/hostname': 'w-gone' },
    });
    c.kube.addPdb({ namespace: 'default', name: 'db', selector: { app: 'db' }, disruptionsAllowed: 0 });
    const run = await act(c, { 'max-unavailable': '3' }, { killWhen: (out) => (out.match(/: ▶ drain$/gm) ?? []).length >= 3 });
    // The channel to the API server outlives the cancellation (docs/kube-channel.md): every drain ends
    // at once, and the main step gives each node back itself; nothing is left for the post step.
    expect(run.stdout).toMatch(/received SIGINT/);
    expect(run.state.held ?? '', run.stdout).toBe('');
    const rows = byName(run);
    for (const n of ['w-1', 'w-2', 'w-3']) {
      expect(rows[n]?.reason, n).toMatch(/^drain ended: the run was cancelled/);
      expect(ann(c, n)[A.owner], n).toBeUndefined();
      expect(c.kube.node(n).spec.unschedulable ?? false, n).toBe(false);
    }
    await postFindsNothingHeld(c, run);
    expect(c.talos.mutatingCommands().filter((x) => x.command === 'reboot')).toEqual([]);
  });
});
