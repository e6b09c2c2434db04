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

    // While held: claimed, and both marks "true"; the record names only what the claim wrote.
    expect(whileHeld['worker-1']).toMatchObject({ [CA]: 'true', [KARPENTER]: 'true', [RECORD]: `${CA},${KARPENTER}` });
    expect(whileHeld['worker-1'][A.owner]).toBeDefined();
    expect(whileHeld['worker-2']).toMatchObject({ [CA]: 'true', [KARPENTER]: 'true', [RECORD]: KARPENTER });

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
