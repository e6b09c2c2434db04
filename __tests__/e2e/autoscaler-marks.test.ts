// End to end through the bundle and the real kubectl: while a node is held (read from the twin while its
// drain evicts) it carries cluster-autoscaler's scale-down-disabled and Karpenter's do-not-disrupt, both
// "true", and the record of which the claim wrote; it is released without them. A node whose operator had
// set scale-down-disabled "true" keeps it after the release (docs/autoscaler-marks.md).
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { A, act, ann, byName, PREFIX, requireKubectl, REVISION, startCluster, verifiedRev } from './helpers.js';

const CA = 'cluster-autoscaler.kubernetes.io/scale-down-disabled';
const KARPENTER = 'karpenter.sh/do-not-disrupt';
const RECORD = `${PREFIX}/autoscaler-marks`;

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

describe('e2e: the autoscalers kept off held nodes', () => {
  it('held nodes carry both marks, released without them; an operator\'s own scale-down-disabled "true" kept', async () => {
    const cluster = (c = await startCluster({ defaultNodes: false }));
    cluster.addNode({ name: 'worker-1', role: 'worker' });
    cluster.addNode({ name: 'worker-2', role: 'worker', annotations: { [CA]: 'true' } });
    // One pod per node, so each drain evicts once: the node is read at that moment, while held.
    for (const n of ['worker-1', 'worker-2']) {
      cluster.kube.addPod({ namespace: 'default', name: `app-${n}`, nodeName: n, owner: { kind: 'ReplicaSet', name: 'app-5f' } });
    }
    const whileHeld: Record<string, Record<string, string>> = {};
    for (const n of ['worker-1', 'worker-2']) {
      cluster.kube.beforeWrite({ method: 'POST', path: new RegExp(`/pods/app-${n}/eviction$`), once: true }, () => {
        whileHeld[n] = { ...ann(cluster, n) };
      });
    }

    const run = await act(cluster, { 'max-unavailable': '2' }); // both held at once: one bundle run, half the wall time
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run);
    expect([d['worker-1'].outcome, d['worker-2'].outcome]).toEqual(['rebooted', 'rebooted']);

    // While held: claimed, and both marks "true"; the record names the run and only what its claim wrote.
    expect(whileHeld['worker-1']).toMatchObject({ [CA]: 'true', [KARPENTER]: 'true' });
    expect(whileHeld['worker-1'][A.owner]).toBeDefined();
    expect(JSON.parse(whileHeld['worker-1'][RECORD])).toEqual({
      run: whileHeld['worker-1'][A.owner],
      wrote: { [CA]: 'true', [KARPENTER]: 'true' },
    });
    expect(whileHeld['worker-2']).toMatchObject({ [CA]: 'true', [KARPENTER]: 'true' });
    expect(JSON.parse(whileHeld['worker-2'][RECORD])).toEqual({ run: whileHeld['worker-2'][A.owner], wrote: { [KARPENTER]: 'true' } });

    // Released: nothing of the claim is left, the operator's own mark is.
    const w1 = ann(cluster, 'worker-1');
    expect([w1[CA], w1[KARPENTER], w1[RECORD], w1[A.owner]]).toEqual([undefined, undefined, undefined, undefined]);
    expect(verifiedRev(w1)).toBe(REVISION);
    const w2 = ann(cluster, 'worker-2');
    expect(w2[CA]).toBe('true');
    expect([w2[KARPENTER], w2[RECORD], w2[A.owner]]).toEqual([undefined, undefined, undefined]);
    expect(verifiedRev(w2)).toBe(REVISION);
  });
});

// Whose mark is whose (docs/autoscaler-marks.md "Whose mark it is"): the record names the run and what it
// wrote, and the release removes a mark only behind `test`s that the record is still exactly that and the
// mark still "true". Anything else is someone else's now: kept, and said in the summary and the Events.
describe('e2e: the marks belong to whoever wrote them', () => {
  it('a "false" before the claim kept and said; an operator taking the marks over, or changing one, during the hold kept and said', async () => {
    const cluster = (c = await startCluster({ defaultNodes: false }));
    cluster.addNode({ name: 'worker-1', role: 'worker', annotations: { [CA]: 'false' } });
    cluster.addNode({ name: 'worker-2', role: 'worker' });
    cluster.addNode({ name: 'worker-3', role: 'worker' });
    for (const n of ['worker-1', 'worker-2', 'worker-3']) {
      cluster.kube.addPod({ namespace: 'default', name: `app-${n}`, nodeName: n, owner: { kind: 'ReplicaSet', name: 'app-5f' } });
    }
    const whileHeld: Record<string, Record<string, string>> = {};
    cluster.kube.beforeWrite({ method: 'POST', path: /\/pods\/app-worker-1\/eviction$/, once: true }, () => {
      whileHeld['worker-1'] = { ...ann(cluster, 'worker-1') };
    });
    // worker-2: an operator keeps the marks for themselves while the node is held, as the docs say:
    // `kubectl annotate node worker-2 cluster-autoscaler…=true --overwrite registry-auth-rollout/autoscaler-marks-`
    cluster.kube.beforeWrite({ method: 'POST', path: /\/pods\/app-worker-2\/eviction$/, once: true }, () => {
      whileHeld['worker-2'] = { ...ann(cluster, 'worker-2') };
      cluster.kube.mutateNode('worker-2', (o) => {
        o.metadata.annotations[CA] = 'true';
        delete o.metadata.annotations[RECORD];
      });
    });
    // worker-3: another controller turns Karpenter's mark "false" while the node is held.
    cluster.kube.beforeWrite({ method: 'POST', path: /\/pods\/app-worker-3\/eviction$/, once: true }, () => {
      cluster.kube.mutateNode('worker-3', (o) => {
        o.metadata.annotations[KARPENTER] = 'false';
      });
    });

    const run = await act(cluster, { 'max-unavailable': '3' });
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run);
    expect(['worker-1', 'worker-2', 'worker-3'].map((n) => d[n].outcome)).toEqual(['rebooted', 'rebooted', 'rebooted']);

    // worker-1: its "false" left exactly as it was (not written over while held), Karpenter's ours and gone.
    expect(whileHeld['worker-1'][CA]).toBe('false');
    expect(whileHeld['worker-1'][KARPENTER]).toBe('true');
    const w1 = ann(cluster, 'worker-1');
    expect([w1[CA], w1[KARPENTER], w1[RECORD], w1[A.owner]]).toEqual(['false', undefined, undefined, undefined]);
    // said: in the summary's row, with how to keep the autoscaler off, and in the node's Events
    const row1 = summaryRow(run.summary, 'worker-1');
    expect(row1).toMatch(/scale-down-disabled.*false.*set before the claim/);
    expect(row1).toMatch(/cluster autoscaler may remove this node while it is drained/);
    expect(run.summary).toContain('kubectl annotate node worker-1 cluster-autoscaler.kubernetes.io/scale-down-disabled=true --overwrite');
    expect(nodeEventText(cluster, 'worker-1')).toMatch(/cluster autoscaler may remove this node while it is drained/);
    expect(run.stdout).toMatch(/worker-1.*scale-down-disabled.*may remove this node while it is drained/);

    // worker-2: held with the run's record naming the run; the operator's takeover kept both marks.
    expect(JSON.parse(whileHeld['worker-2'][RECORD])).toEqual({
      run: whileHeld['worker-2'][A.owner],
      wrote: { [CA]: 'true', [KARPENTER]: 'true' },
    });
    const w2 = ann(cluster, 'worker-2');
    expect([w2[CA], w2[KARPENTER], w2[RECORD], w2[A.owner]]).toEqual(['true', 'true', undefined, undefined]);
    expect(verifiedRev(w2)).toBe(REVISION);
    expect(summaryRow(run.summary, 'worker-2')).toMatch(/autoscaler-marks was removed by someone else while the node was held/);
    expect(nodeEventText(cluster, 'worker-2')).toMatch(/autoscaler-marks was removed by someone else while the node was held/);

    // worker-3: the changed mark kept as set, the other one (still ours) removed; said beyond the log.
    const w3 = ann(cluster, 'worker-3');
    expect([w3[CA], w3[KARPENTER], w3[RECORD], w3[A.owner]]).toEqual([undefined, 'false', undefined, undefined]);
    expect(summaryRow(run.summary, 'worker-3')).toMatch(/do-not-disrupt was set to .*false.* by someone else while the node was held/);
    expect(nodeEventText(cluster, 'worker-3')).toMatch(/do-not-disrupt was set to "false" by someone else while the node was held/);
  });
});

/** The summary table's row of `node` (its cells' text, tags kept). */
function summaryRow(summary: string, node: string): string {
  const row = summary.split('<tr>').find((r) => r.startsWith(`<td>${node}</td>`));
  if (!row) throw new Error(`no summary row for ${node}`);
  return row;
}

/** Every Event message the run wrote about `node`, one per line. */
function nodeEventText(cluster: SimCluster, node: string): string {
  return cluster.kube
    .events()
    .filter((e) => e.involvedObject?.name === node)
    .map((e) => `${e.reason}: ${e.message}`)
    .join('\n');
}
