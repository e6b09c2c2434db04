// The autoscaler marks through every release path, on the in-memory fakes (node patches applied with
// the apiserver's JSON Patch semantics): the verified release, the release after a failed drain, the
// quarantine, the post step and recover-fences each remove exactly the marks the claim wrote; an
// operator's own value, or one changed during the hold, is kept and fails nothing.
import { describe, expect, it } from 'vitest';
import { postMode } from '../../src/action/post.js';
import { saveAccess, saveHeld, type StateStore } from '../../src/action/state.js';
import type { RunAttemptInfo, RunLookup } from '../../src/adapters/github.js';
import { ToolError, DrainTimeoutError } from '../../src/core/errors.js';
import type { JsonPatchOp } from '../../src/core/model/patch.js';
import { runFences } from '../../src/fences/run.js';
import { claimNode } from '../../src/pipeline/claim.js';
import { formatMarksRecord } from '../../src/rules/autoscalerMarks.js';
import { keys, makeCluster, OWNER, roll, verifiedRev } from './harness.js';

const CA = 'cluster-autoscaler.kubernetes.io/scale-down-disabled';
const KARPENTER = 'karpenter.sh/do-not-disrupt';
/** The record a claim by `owner` writes: the run and the marks it wrote (src/rules/autoscalerMarks.ts). */
const rec = (marks: Array<typeof CA | typeof KARPENTER>, owner = OWNER) => formatMarksRecord(owner, marks);
const removesOwner = (ops: JsonPatchOp[]) => ops.some((o) => o.op === 'remove' && o.path.endsWith('~1owner'));
type Cluster = ReturnType<typeof makeCluster>;

/** The node's annotations at each release-like patch (what the node carried while held). */
function atRelease(c: Cluster): Record<string, Record<string, string>> {
  const seen: Record<string, Record<string, string>> = {};
  const before = c.kube.beforePatch;
  c.kube.beforePatch = (name, ops) => {
    if (removesOwner(ops) && !seen[name]) seen[name] = { ...c.kube.state(name).annotations };
    before?.(name, ops);
  };
  return seen;
}

const log = (lines: string[]) => ({ info: (m: string) => void lines.push(m), group: () => () => {} });

describe('the main step: held with the marks, released without them', () => {
  it('verified release: the marks on while held, gone after; an operator\'s own scale-down-disabled "true" kept', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2', annotations: { [CA]: 'true' } }]);
    const held = atRelease(c);
    const res = await roll(c);
    expect(res.result, res.error?.message).toBe('processed');
    expect(held.w1).toMatchObject({ [CA]: 'true', [KARPENTER]: 'true', [keys.autoscalerMarks]: rec([CA, KARPENTER]) });
    expect(held.w2).toMatchObject({ [CA]: 'true', [KARPENTER]: 'true', [keys.autoscalerMarks]: rec([KARPENTER]) });
    const w1 = c.kube.state('w1').annotations;
    expect([w1[CA], w1[KARPENTER], w1[keys.autoscalerMarks]]).toEqual([undefined, undefined, undefined]);
    const w2 = c.kube.state('w2').annotations;
    expect(w2[CA]).toBe('true');
    expect([w2[KARPENTER], w2[keys.autoscalerMarks]]).toEqual([undefined, undefined]);
  });

  // Not what drain safety depends on: a mark changed during the hold is no conflict (src/rules/autoscalerMarks.ts).
  it('an operator sets do-not-disrupt "false" during the drain: no guard fences the node, the release keeps their value and lands', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.kube.drainBody = async (name) => {
      c.kube.mutate(name, (o) => (o.metadata.annotations[KARPENTER] = 'false'));
    };
    const lines: string[] = [];
    const res = await roll(c, {}, { log: log(lines) });
    expect(res.result, res.error?.message).toBe('processed');
    expect(res.records[0].outcome).toBe('rebooted');
    const a = c.kube.state('w1').annotations;
    expect(a[KARPENTER]).toBe('false');
    expect([a[CA], a[keys.autoscalerMarks], a[keys.owner]]).toEqual([undefined, undefined, undefined]);
    expect(verifiedRev(c.kube.state('w1'))).toBe('rev-2');
    expect(c.kube.state('w1').unschedulable).toBe(false);
    const line = `${KARPENTER} was set to "false" by someone else while the node was held: kept as they set it`;
    expect(lines.join('\n')).toContain(`w1: ${line}`);
    // said beyond the log: the record (its summary row) and the Released Event
    expect(res.records[0].autoscalerMarks).toEqual({ found: [], kept: [line] });
  });

  // The record names the run; changed or removed, nothing of the marks is provably the run's any more.
  it.each([
    ['removed', undefined],
    ['rewritten by another run', rec([CA, KARPENTER], 'acme/other/runs/9/attempts/1/bbbb')],
  ])('an operator takes the marks over during the drain (the record %s): both marks kept, the release lands', async (_, record) => {
    const c = makeCluster([{ name: 'w1' }]);
    c.kube.drainBody = async (name) => {
      c.kube.mutate(name, (o) => {
        if (record === undefined) delete o.metadata.annotations[keys.autoscalerMarks];
        else o.metadata.annotations[keys.autoscalerMarks] = record;
      });
    };
    const lines: string[] = [];
    const res = await roll(c, {}, { log: log(lines) });
    expect(res.result, res.error?.message).toBe('processed');
    const a = c.kube.state('w1').annotations;
    expect([a[CA], a[KARPENTER], a[keys.autoscalerMarks], a[keys.owner]]).toEqual(['true', 'true', record, undefined]);
    expect(verifiedRev(c.kube.state('w1'))).toBe('rev-2');
    const line = `${keys.autoscalerMarks} was ${record === undefined ? 'removed' : 'changed'} by someone else while the node was held: the marks it named (${CA}, ${KARPENTER}) are theirs now, kept as they are`;
    expect(res.records[0].autoscalerMarks).toEqual({ found: [], kept: [line] });
    expect(lines.join('\n')).toContain(`w1: ${line}`);
  });

  it('marks set before the claim, "true" or not, are left exactly as found and said; a "false" with how to keep the autoscaler off', async () => {
    const c = makeCluster([{ name: 'w1', annotations: { [CA]: 'false', [KARPENTER]: 'true' } }]);
    const lines: string[] = [];
    const res = await roll(c, {}, { log: log(lines) });
    expect(res.result, res.error?.message).toBe('processed');
    expect(c.kube.state('w1').annotations).toMatchObject({ [CA]: 'false', [KARPENTER]: 'true' });
    expect(c.kube.state('w1').annotations[keys.autoscalerMarks]).toBeUndefined();
    const found = res.records[0].autoscalerMarks?.found ?? [];
    expect(found).toHaveLength(2);
    expect(found[0]).toMatch(
      /^cluster-autoscaler\.kubernetes\.io\/scale-down-disabled="false" was set before the claim and is left as found: the cluster autoscaler may remove this node while it is drained/,
    );
    expect(found[0]).toContain(`kubectl annotate node w1 ${CA}=true --overwrite`);
    expect(found[1]).toMatch(/^karpenter\.sh\/do-not-disrupt="true" was set before the claim: not this run's, left as found/);
    expect(lines.join('\n')).toContain(`w1: ${found[0]}`);
  });

  it('the release after a failed drain removes the marks too', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.kube.drainErrorFor = () =>
      new ToolError({
        tool: 'kubectl',
        command: 'kubectl drain w1',
        kind: 'forbidden',
        exitCode: 1,
        stderr: 'Error from server (Forbidden): no',
      });
    const res = await roll(c);
    expect(res.records[0].outcome).toBe('failed');
    const a = c.kube.state('w1').annotations;
    expect([a[CA], a[KARPENTER], a[keys.autoscalerMarks], a[keys.owner]]).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('the quarantine gives up the marks with the claim; a mark removed by hand meanwhile fails nothing', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.kube.drainErrorFor = (name) => {
      c.kube.mutate(name, (o) => delete o.metadata.annotations[CA]);
      return new DrainTimeoutError({
        tool: 'kubectl',
        command: 'kubectl drain w1',
        kind: 'timeout',
        exitCode: 1,
        stderr: 'timed out',
        node: name,
        blockedPods: [],
      });
    };
    const res = await roll(c, { undrainable: 'quarantine' });
    expect(res.records[0].outcome).toBe('quarantined');
    const a = c.kube.state('w1').annotations;
    expect(a[keys.quarantined]).toBeDefined();
    expect([a[CA], a[KARPENTER], a[keys.autoscalerMarks], a[keys.owner]]).toEqual([undefined, undefined, undefined, undefined]);
  });
});

const isClaimPatch = (ops: JsonPatchOp[]) =>
  ops.some((o) => o.op === 'add' && (o.path.endsWith('~1owner') || o.path === '/metadata/annotations'));
const TIMEOUT_504 = 'Error from server (Timeout): Timeout: request did not complete within requested timeout - context deadline exceeded';

describe('the claim: its retry and the adoption of a lost answer', () => {
  it("an operator's scale-down-disabled written between the claim's read and its PATCH: the CAS fails, the retry keeps theirs, the release leaves it", async () => {
    const c = makeCluster([{ name: 'w1' }]);
    let written = false;
    c.kube.beforePatch = (name, ops) => {
      if (written || !isClaimPatch(ops)) return;
      written = true;
      c.kube.mutate(name, (o) => (o.metadata.annotations = { ...o.metadata.annotations, [CA]: 'false' }));
    };
    const held = atRelease(c);
    const res = await roll(c);
    expect(res.result, res.error?.message).toBe('processed');
    expect(res.records[0].claim?.attempts).toBe(2);
    expect(res.records[0].claim?.conflicts.join(' ')).toContain(`${CA} appeared (kept as set)`);
    expect(held.w1).toMatchObject({ [CA]: 'false', [KARPENTER]: 'true', [keys.autoscalerMarks]: rec([KARPENTER]) });
    expect(c.kube.state('w1').annotations[CA]).toBe('false');
    expect(c.kube.state('w1').annotations[KARPENTER]).toBeUndefined();
  });

  it('the claim lands, its answer lost (504): adopted from the re-read, and the release still removes the marks it wrote', async () => {
    const c = makeCluster([{ name: 'w1', annotations: { [CA]: 'true' } }]);
    const orig = c.kube.patchNode.bind(c.kube);
    let lost = false;
    c.kube.patchNode = async (name, ops) => {
      const r = await orig(name, ops);
      if (!lost && isClaimPatch(ops)) {
        lost = true;
        throw new ToolError({ tool: 'kubectl', command: 'kubectl patch node w1', kind: 'server', exitCode: 1, stderr: TIMEOUT_504 });
      }
      return r;
    };
    const held = atRelease(c);
    const res = await roll(c);
    expect(lost).toBe(true);
    expect(res.result, res.error?.message).toBe('processed');
    expect(res.records[0].claim?.attempts).toBe(1);
    expect(held.w1).toMatchObject({ [KARPENTER]: 'true', [keys.autoscalerMarks]: rec([KARPENTER]) });
    expect(c.kube.state('w1').annotations).toEqual(expect.objectContaining({ [CA]: 'true' }));
    expect(c.kube.state('w1').annotations[KARPENTER]).toBeUndefined();
    expect(c.kube.state('w1').annotations[keys.autoscalerMarks]).toBeUndefined();
  });
});

function store(): StateStore {
  const m = new Map<string, string>();
  return { saveState: (k, v) => void m.set(k, v), getState: (k) => m.get(k) ?? '' };
}

describe('the post step and recover-fences remove them with the claim', () => {
  it('post step: the recorded marks removed, the one an operator changed to "false" meanwhile kept, their own untouched', async () => {
    const c = makeCluster([{ name: 'w1', annotations: { 'team.example/keep': 'me' } }]);
    const { capture } = await claimNode(
      { kube: c.kube, keys, owner: OWNER, config: { claimAttempts: 1 } },
      await c.kube.getNode('w1'),
      c.clock,
    );
    expect(capture.autoscalerMarks).toEqual([CA, KARPENTER]);
    c.kube.mutate('w1', (o) => (o.metadata.annotations[CA] = 'false'));
    const state = store();
    saveAccess(state, { annotationPrefix: 'registry-auth-rollout' });
    saveHeld(state, [{ node: 'w1', phase: 'claimed', capture, owner: OWNER }]);
    const lines: string[] = [];
    const report = await postMode({ state, log: (l) => lines.push(l), kube: () => c.kube, clock: c.clock });
    expect(report.nodes[0].releaseError).toBeUndefined();
    expect(c.kube.state('w1').annotations).toEqual({ 'team.example/keep': 'me', [CA]: 'false' });
    expect(c.kube.state('w1').unschedulable).toBe(false);
    expect(lines.join('\n')).toContain(`${CA} was set to "false"`);
  });

  it('recover-fences: an abandoned claim released with the marks its record names; the operator\'s own "true" kept', async () => {
    const c = makeCluster([{ name: 'w1', annotations: { [CA]: 'true' } }]);
    const owner = 'acme/infra/runs/101/attempts/1/aaaa';
    await claimNode({ kube: c.kube, keys, owner, config: { claimAttempts: 1 } }, await c.kube.getNode('w1'), c.clock);
    expect(c.kube.state('w1').annotations[keys.autoscalerMarks]).toBe(rec([KARPENTER], owner));
    const runs: RunLookup = {
      runAttempt: async (): Promise<RunAttemptInfo> => ({ state: 'completed', conclusion: 'failure', url: 'https://github.com/x' }),
    };
    const config = { annotationPrefix: 'registry-auth-rollout', leaseNamespace: 'kube-system', leaseName: 'registry-auth-rollout' };
    const r = await runFences({ mode: 'recover-fences', kube: c.kube, runs, config, clock: c.clock });
    expect(r.releasedNodes).toEqual(['w1']);
    expect(c.kube.state('w1').annotations).toEqual({ [CA]: 'true' });
  });

  it('recover-fences: a recorded mark changed since is kept, noted, and the fence still released', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const owner = 'acme/infra/runs/101/attempts/1/aaaa';
    await claimNode({ kube: c.kube, keys, owner, config: { claimAttempts: 1 } }, await c.kube.getNode('w1'), c.clock);
    c.kube.mutate('w1', (o) => (o.metadata.annotations[KARPENTER] = 'false'));
    const runs: RunLookup = { runAttempt: async () => ({ state: 'completed', conclusion: 'failure', url: 'https://github.com/x' }) };
    const config = { annotationPrefix: 'registry-auth-rollout', leaseNamespace: 'kube-system', leaseName: 'registry-auth-rollout' };
    const r = await runFences({ mode: 'recover-fences', kube: c.kube, runs, config, clock: c.clock });
    expect(r.ok).toBe(true);
    expect(r.releasedNodes).toEqual(['w1']);
    expect(c.kube.state('w1').annotations).toEqual({ [KARPENTER]: 'false' });
    expect(r.actions.join('\n')).toContain(`w1: ${KARPENTER} was set to "false"`);
  });
});
