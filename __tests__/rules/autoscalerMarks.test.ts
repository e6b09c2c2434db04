// The autoscaler marks (src/rules/autoscalerMarks.ts): written by the claim's own patch where absent and
// recorded; an operator's own value kept and never recorded; every release removes exactly the recorded
// ones, each behind a `test` of "true". Applied with the apiserver-faithful JSON Patch applier, so a
// patch that would fail on the server fails here.
import { describe, expect, it } from 'vitest';
import type { NodeState } from '../../src/core/model/node.js';
import { buildClaimPatch, captureClaim, checkGuard, judgeClaimRejection } from '../../src/rules/claim.js';
import {
  claimMarkOps,
  formatMarksRecord,
  foundMarkNotes,
  marksToWrite,
  parseMarksRecord,
  recordedMarks,
  releaseMarkOps,
  withoutChangedMarks,
} from '../../src/rules/autoscalerMarks.js';
import { fenceCapture } from '../../src/rules/fences.js';
import { markerWrite } from '../../src/rules/marker.js';
import { buildQuarantinePatch, quarantineRecord } from '../../src/rules/quarantine.js';
import { buildReleasePatch, guardedReleasePatch } from '../../src/rules/release.js';
import { applyJsonPatch, nodeFromJson, nodeJson, PatchRejected, type NodeJson } from '../fakes/jsonPatch.js';
import { keys, node, OTHER_OWNER, OWNER } from './fixtures.js';

const CA = 'cluster-autoscaler.kubernetes.io/scale-down-disabled';
const KARPENTER = 'karpenter.sh/do-not-disrupt';
const RECORD = 'registry-auth-rollout/autoscaler-marks';
/** The record a claim by `owner` writes: the run and each mark it wrote with the value written. */
const rec = (marks: Array<typeof CA | typeof KARPENTER>, owner = OWNER) => formatMarksRecord(owner, marks);

/** The node as the apiserver stores it after `ops`, read back through the real parser. */
function apply(n: NodeState | NodeJson, ops: ReturnType<typeof buildClaimPatch>): NodeState {
  const json = 'spec' in n ? n : nodeJson(n);
  return nodeFromJson(applyJsonPatch(json, ops), 'worker');
}

const claimed = (n: NodeState) => apply(n, buildClaimPatch(n, OWNER, keys));

describe('the claim writes the marks where absent, and records them', () => {
  const variants: Array<[string, NodeState]> = [
    ['no annotations map', node({ name: 'w1' })],
    ['an annotations map', node({ name: 'w1', annotations: { 'example.com/a': '1' }, hasAnnotationsMap: true })],
  ];
  it.each(variants)('%s: both marks "true" and the record naming both, in the claim itself', (_, n) => {
    const after = claimed(n);
    expect(after.annotations[CA]).toBe('true');
    expect(after.annotations[KARPENTER]).toBe('true');
    expect(after.annotations[RECORD]).toBe(rec([CA, KARPENTER]));
    expect(JSON.parse(after.annotations[RECORD])).toEqual({ run: OWNER, wrote: { [CA]: 'true', [KARPENTER]: 'true' } });
    expect(after.annotations[keys.owner]).toBe(OWNER);
    expect(captureClaim(n, OWNER, keys).autoscalerMarks).toEqual([CA, KARPENTER]);
  });

  // Any value an operator set is theirs, "true" included: not written, not recorded, never removed.
  it.each(['true', 'false', ''])("an operator's own %j on scale-down-disabled: kept, not recorded; only Karpenter's is ours", (value) => {
    const n = node({ name: 'w1', annotations: { [CA]: value }, hasAnnotationsMap: true });
    expect(marksToWrite(n)).toEqual([KARPENTER]);
    const after = claimed(n);
    expect(after.annotations[CA]).toBe(value);
    expect(after.annotations[KARPENTER]).toBe('true');
    expect(after.annotations[RECORD]).toBe(rec([KARPENTER]));
    const released = apply(after, buildReleasePatch(captureClaim(n, OWNER, keys), keys, {}));
    expect(released.annotations).toEqual({ [CA]: value });
  });

  it('both set by an operator: the claim writes no mark and no record, the release touches neither', () => {
    const n = node({ name: 'w1', annotations: { [CA]: 'true', [KARPENTER]: 'true' }, hasAnnotationsMap: true });
    const capture = captureClaim(n, OWNER, keys);
    expect(capture.autoscalerMarks).toBeUndefined();
    const ops = buildClaimPatch(n, OWNER, keys);
    expect(ops.filter((o) => o.path.includes('autoscaler') || o.path.includes('karpenter'))).toEqual([]);
    const released = apply(claimed(n), buildReleasePatch(capture, keys, {}));
    expect(released.annotations).toEqual({ [CA]: 'true', [KARPENTER]: 'true' });
  });

  it('an operator writes scale-down-disabled between the read and the claim: the claim fails its CAS (never overwrites), the retry leaves it theirs', () => {
    const n = node({ name: 'w1', annotations: { 'example.com/a': '1' }, hasAnnotationsMap: true });
    const stored = nodeJson(n);
    stored.metadata.annotations![CA] = 'false';
    expect(() => applyJsonPatch(stored, buildClaimPatch(n, OWNER, keys))).toThrow(PatchRejected);
    const reread = nodeFromJson(stored, 'worker');
    const judged = judgeClaimRejection(captureClaim(n, OWNER, keys), reread, keys);
    expect(judged).toEqual({ kind: 'retry', changed: [`${CA} appeared (kept as set)`] });
    const after = apply(stored, buildClaimPatch(reread, OWNER, keys));
    expect(after.annotations[CA]).toBe('false');
    expect(after.annotations[RECORD]).toBe(rec([KARPENTER]));
  });

  it('the claim ops on a map: each mark tested absent before its add (null: the test of a missing key)', () => {
    expect(claimMarkOps({ autoscalerMarks: [CA], marksRecord: rec([CA]) }, keys)).toEqual([
      { op: 'test', path: '/metadata/annotations/cluster-autoscaler.kubernetes.io~1scale-down-disabled', value: null },
      { op: 'add', path: '/metadata/annotations/cluster-autoscaler.kubernetes.io~1scale-down-disabled', value: 'true' },
      { op: 'add', path: '/metadata/annotations/registry-auth-rollout~1autoscaler-marks', value: rec([CA]) },
    ]);
    expect(claimMarkOps({}, keys)).toEqual([]);
  });
});

describe('every release removes exactly the recorded marks', () => {
  const before = node({ name: 'w1', annotations: { 'example.com/a': '1' }, hasAnnotationsMap: true });
  const capture = captureClaim(before, OWNER, keys);
  const held = claimed(before);

  const releases: Array<[string, (c: typeof capture) => ReturnType<typeof buildClaimPatch>]> = [
    [
      'verified release',
      (c) => buildReleasePatch(c, keys, { marker: markerWrite({}, keys, { hosts: ['ghcr.io'], revision: 'r2' }, 'now', 'evidence') }),
    ],
    ['drain-failure release', (c) => buildReleasePatch(c, keys, {})],
    ['post step / recover-fences (guarded)', (c) => guardedReleasePatch(c, keys, 'claimed')],
    [
      'quarantine',
      (c) => buildQuarantinePatch(c, keys, quarantineRecord({ capture: c, drainTimeout: '30s', blockedBy: [], atMs: 0, run: OWNER })),
    ],
  ];
  it.each(releases)('%s: released without the marks or their record', (_, build) => {
    const after = apply(held, build(capture));
    for (const k of [CA, KARPENTER, RECORD, keys.owner]) expect(after.annotations[k]).toBeUndefined();
    expect(after.annotations['example.com/a']).toBe('1');
  });

  it.each(releases)(
    '%s: a mark someone set to "false" during the hold fails the test (422); without it, the release lands and keeps theirs',
    (_, build) => {
      const changed = nodeJson(held);
      changed.metadata.annotations![KARPENTER] = 'false';
      expect(() => applyJsonPatch(changed, build(capture))).toThrow(PatchRejected);
      const next = withoutChangedMarks(capture, nodeFromJson(changed, 'worker'), keys)!;
      expect(next.changed).toEqual([`${KARPENTER} was set to "false" by someone else while the node was held: kept as they set it`]);
      expect(next.capture.autoscalerMarks).toEqual([CA]);
      const after = apply(changed, build(next.capture));
      expect(after.annotations[KARPENTER]).toBe('false');
      expect(after.annotations[CA]).toBeUndefined();
      expect(after.annotations[RECORD]).toBeUndefined();
    },
  );

  it('a mark removed by hand during the hold: dropped too, the other one and the record still removed', () => {
    const changed = nodeJson(held);
    delete changed.metadata.annotations![CA];
    const next = withoutChangedMarks(capture, nodeFromJson(changed, 'worker'), keys)!;
    expect(next.changed).toEqual([`${CA} was removed by someone else while the node was held: kept as they set it`]);
    const after = apply(changed, buildReleasePatch(next.capture, keys, {}));
    expect(after.annotations[KARPENTER]).toBeUndefined();
    expect(after.annotations[RECORD]).toBeUndefined();
  });

  // The record names the run and what it wrote; the release tests it byte for byte. A record someone
  // removed or rewrote (an operator taking the marks over, as docs/autoscaler-marks.md says how) fails
  // the release, and the resend leaves every mark, and the record as they left it.
  it.each([
    ['removed', undefined],
    ['rewritten naming another run', rec([CA, KARPENTER], 'acme/other/runs/9/attempts/1/bbbb')],
    ['edited to name one mark only', rec([KARPENTER])],
  ])('the record %s during the hold: 422, then released keeping both marks and their record as left', (_, record) => {
    for (const build of releases.map(([, b]) => b)) {
      const changed = nodeJson(held);
      if (record === undefined) delete changed.metadata.annotations![RECORD];
      else changed.metadata.annotations![RECORD] = record;
      expect(() => applyJsonPatch(changed, build(capture))).toThrow(PatchRejected);
      const next = withoutChangedMarks(capture, nodeFromJson(changed, 'worker'), keys)!;
      expect(next.changed).toEqual([
        `${RECORD} was ${record === undefined ? 'removed' : 'changed'} by someone else while the node was held: the marks it named (${CA}, ${KARPENTER}) are theirs now, kept as they are`,
      ]);
      expect(next.capture.autoscalerMarks).toBeUndefined();
      expect(next.capture.marksRecord).toBeUndefined();
      const after = apply(changed, build(next.capture));
      expect([after.annotations[CA], after.annotations[KARPENTER], after.annotations[RECORD]]).toEqual(['true', 'true', record]);
      expect(after.annotations[keys.owner]).toBeUndefined();
    }
  });

  // What cannot be proven (docs/autoscaler-marks.md "What the release cannot tell"): a "true" written over
  // ours is no change at all, so the node is exactly as the claim left it and the release removes it.
  it('the residual: someone writes "true" over our "true" (a no-op on the server): indistinguishable, removed as ours', () => {
    const same = nodeJson(held);
    same.metadata.annotations![CA] = 'true';
    const after = apply(same, buildReleasePatch(capture, keys, {}));
    expect(after.annotations[CA]).toBeUndefined();
  });

  it('everything still as written: nothing to drop (the 422 came from elsewhere and stands)', () => {
    expect(withoutChangedMarks(capture, held, keys)).toBeUndefined();
    expect(withoutChangedMarks({ autoscalerMarks: undefined }, held, keys)).toBeUndefined();
  });

  it('the release ops: test "true" then remove per recorded mark, the record tested as written then removed; none without a record', () => {
    expect(releaseMarkOps({ autoscalerMarks: [KARPENTER], marksRecord: rec([KARPENTER]) }, keys)).toEqual([
      { op: 'test', path: '/metadata/annotations/karpenter.sh~1do-not-disrupt', value: 'true' },
      { op: 'remove', path: '/metadata/annotations/karpenter.sh~1do-not-disrupt' },
      { op: 'test', path: '/metadata/annotations/registry-auth-rollout~1autoscaler-marks', value: rec([KARPENTER]) },
      { op: 'remove', path: '/metadata/annotations/registry-auth-rollout~1autoscaler-marks' },
    ]);
    expect(releaseMarkOps({}, keys)).toEqual([]);
  });
});

describe('recover-fences and the printed commands read the record on the node', () => {
  it('fenceCapture takes the recorded marks, never the ones the node merely carries', () => {
    const operators = node({ name: 'w1', annotations: { [CA]: 'true' }, hasAnnotationsMap: true });
    const held = claimed(operators);
    expect(fenceCapture(held, keys).autoscalerMarks).toEqual([KARPENTER]);
    const after = apply(held, guardedReleasePatch(fenceCapture(held, keys), keys, 'claimed'));
    expect(after.annotations).toEqual({ [CA]: 'true' });
  });

  it('a fence claimed before the marks existed (no record): released as before, nothing of the operator touched', () => {
    const old = node({
      name: 'w1',
      unschedulable: true,
      annotations: { [keys.owner]: OWNER, [keys.phase]: 'claimed', [keys.wasCordoned]: 'false', [CA]: 'true' },
      hasAnnotationsMap: true,
    });
    expect(fenceCapture(old, keys).autoscalerMarks).toBeUndefined();
    expect(apply(old, guardedReleasePatch(fenceCapture(old, keys), keys, 'claimed')).annotations).toEqual({ [CA]: 'true' });
  });

  it('a record edited by hand: only the known marks it names with the value written count; a broken one names nothing', () => {
    expect(parseMarksRecord(`${KARPENTER}, example.com/x,`)).toEqual({ marks: [KARPENTER] });
    expect(parseMarksRecord(JSON.stringify({ run: OWNER, wrote: { [CA]: 'false', [KARPENTER]: 'true', x: 'true' } }))).toEqual({
      run: OWNER,
      marks: [KARPENTER],
    });
    for (const broken of ['{', '{"wrote":{}}', '{"run":"a"}', 'null']) expect(parseMarksRecord(broken)?.marks ?? []).toEqual([]);
    const claimedBy = (record: string) => ({ annotations: { [keys.owner]: OWNER, [RECORD]: record } });
    expect(recordedMarks({ annotations: {} }, keys)).toBeUndefined();
    expect(recordedMarks(claimedBy(''), keys)).toEqual({ marks: [], text: '' });
    expect(recordedMarks(claimedBy(rec([CA])), keys)).toEqual({ marks: [CA], text: rec([CA]) });
  });

  // A record left by an earlier claim (a hand release that kept it, say) names another run: a later claim
  // that writes no mark leaves it, and neither recover-fences nor a printed command may take it for its own.
  it("a record naming another run than the owner token: nobody's to remove; a record without a claim is nobody's", () => {
    const stale = rec([CA, KARPENTER], OTHER_OWNER);
    const n = node({ name: 'w1', annotations: { [CA]: 'true', [KARPENTER]: 'true', [RECORD]: stale }, hasAnnotationsMap: true });
    const held = claimed(n);
    expect(held.annotations[RECORD]).toBe(stale);
    expect(recordedMarks(held, keys)).toBeUndefined();
    expect(fenceCapture(held, keys).autoscalerMarks).toBeUndefined();
    const after = apply(held, guardedReleasePatch(fenceCapture(held, keys), keys, 'claimed'));
    expect(after.annotations).toEqual({ [CA]: 'true', [KARPENTER]: 'true', [RECORD]: stale });
    expect(recordedMarks({ annotations: { [RECORD]: rec([CA]) } }, keys)).toBeUndefined();
  });

  it("the previous version's record (the keys comma separated, no run named) on a claimed node: its marks released, behind a test of its text", () => {
    const legacy = `${CA},${KARPENTER}`;
    const old = node({
      name: 'w1',
      unschedulable: true,
      annotations: {
        [keys.owner]: OWNER,
        [keys.phase]: 'claimed',
        [keys.wasCordoned]: 'false',
        [CA]: 'true',
        [KARPENTER]: 'true',
        [RECORD]: legacy,
      },
      hasAnnotationsMap: true,
    });
    const capture = fenceCapture(old, keys);
    expect([capture.autoscalerMarks, capture.marksRecord]).toEqual([[CA, KARPENTER], legacy]);
    expect(apply(old, guardedReleasePatch(capture, keys, 'claimed')).annotations).toEqual({});
  });
});

// Not what drain safety depends on (which pods may run on the node, and who holds it): an autoscaler or
// an operator changing these marks during the hold is no conflict, so no guard fences the node over it
// (src/rules/autoscalerMarks.ts header).
describe('the guards never count the marks', () => {
  const before = node({ name: 'w1', annotations: { 'example.com/a': '1' }, hasAnnotationsMap: true });
  const capture = captureClaim(before, OWNER, keys);
  const held = claimed(before);
  it.each([
    ['set to "false"', { [CA]: 'false' }],
    ['removed, record too', { [KARPENTER]: undefined, [RECORD]: undefined }],
  ])('a mark %s during the hold: the guard sees nothing', (_, change) => {
    const annotations = { ...held.annotations, ...change } as Record<string, string>;
    for (const [k, v] of Object.entries(change)) if (v === undefined) delete annotations[k];
    expect(checkGuard(capture, { ...held, annotations }, keys)).toEqual([]);
  });
  it('our own marks on the node after the claim are no foreign write: the guard is clean', () => {
    expect(checkGuard(capture, held, keys)).toEqual([]);
  });
});

// A mark the node carried before the claim is someone else's: left exactly as found, and said. Both
// autoscalers honour only "true", so any other value means that autoscaler may take the drained node.
describe('marks found at the claim are said', () => {
  it('the capture keeps what it found; "true" said as kept, any other value as a node the autoscaler may take, with the command', () => {
    const n = node({ name: 'w 1', annotations: { [CA]: 'false', [KARPENTER]: 'true' }, hasAnnotationsMap: true });
    const capture = captureClaim(n, OWNER, keys);
    expect(capture.marksFound).toEqual({ [CA]: 'false', [KARPENTER]: 'true' });
    expect(capture.autoscalerMarks).toBeUndefined();
    const notes = foundMarkNotes(n.name, capture.marksFound);
    expect(notes).toEqual([
      `${CA}="false" was set before the claim and is left as found: the cluster autoscaler may remove this node while it is drained and rebooted. ` +
        `To keep it off during a roll, set it "true" before the run (kubectl annotate node 'w 1' ${CA}=true --overwrite; it is then yours to remove) ` +
        'or remove it, so the claim writes its own and the release removes it',
      `${KARPENTER}="true" was set before the claim: not this run's, left as found (Karpenter keeps off the node by it, and no release removes it)`,
    ]);
    expect(foundMarkNotes('w1', captureClaim(node({ name: 'w1' }), OWNER, keys).marksFound)).toEqual([]);
    expect(foundMarkNotes('w1', { [KARPENTER]: '' })[0]).toMatch(/^karpenter\.sh\/do-not-disrupt="" .*Karpenter may remove this node/);
  });
});
