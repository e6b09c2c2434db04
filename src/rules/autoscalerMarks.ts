// The autoscaler marks: while the run holds a node it carries `cluster-autoscaler.kubernetes.io/scale-down-disabled`
// and `karpenter.sh/do-not-disrupt`, both "true" (src/core/model/autoscalerMarks.ts), so neither autoscaler
// removes a node that is cordoned and drained for a reboot. Pure: the claim's and every release's patch
// builders (src/rules/claim.ts, release.ts, quarantine.ts) take their ops from here.
//
// The rules (tests: __tests__/rules/autoscalerMarks.test.ts; docs/autoscaler-marks.md):
// - the claim writes a mark only where the node carries no such annotation at all, in its own patch, with
//   a `test` that it is still absent (an operator's value written between the read and the claim fails
//   the claim's CAS and the retry leaves it alone). A value already there, ANY value, "true" included,
//   is the operator's: kept, never counted as ours, never removed;
// - the claim records on the node which marks it wrote (`<prefix>/autoscaler-marks`, the keys comma
//   separated), in the same atomic write as the owner token, so the post step and `recover-fences` (a
//   later run, a fresh process) release exactly what the claim wrote, read from the node;
// - a release removes each recorded mark behind a `test` of "true", and the record. A mark someone
//   changed while the node was held (an operator set "false", or removed it) fails that `test`, so the
//   whole release fails with 422; the releaser reads the node again and, while it is still ours, sends
//   the release once more without the marks that no longer say "true" (marksStillOurs): their change is
//   kept, and the release does not fail over it;
// - no guard compares them: they are not what drain safety depends on (which pods may run on the node
//   and who holds it), so an autoscaler or operator changing them during the hold is not a conflict.
import { AUTOSCALER_MARK_VALUE, AUTOSCALER_MARKS, type AutoscalerMark } from '../core/model/autoscalerMarks.js';
import type { AnnotationKeys, ClaimCapture, NodeState } from '../core/model/node.js';
import type { JsonPatchOp } from '../core/model/patch.js';
import { annotationPath } from './pointer.js';

/** The marks a claim of `node` writes: each one it does not carry at all (a value already there is the operator's). */
export function marksToWrite(node: Pick<NodeState, 'annotations'>): AutoscalerMark[] {
  return AUTOSCALER_MARKS.filter((m) => node.annotations[m] === undefined);
}

/** The record's text: the marks' keys, comma separated (an annotation key never holds a comma). */
export function formatMarksRecord(marks: readonly AutoscalerMark[]): string {
  return marks.join(',');
}

/** The marks a record names; an entry that is not one of the marks (a hand edit) is ignored. */
export function parseMarksRecord(text: string): AutoscalerMark[] {
  const named = new Set(text.split(',').map((s) => s.trim()));
  return AUTOSCALER_MARKS.filter((m) => named.has(m));
}

/** The marks the node's record says its claim wrote; undefined when it carries no record. */
export function recordedMarks(
  node: Pick<NodeState, 'annotations'>,
  keys: Pick<AnnotationKeys, 'autoscalerMarks'>,
): AutoscalerMark[] | undefined {
  const text = node.annotations[keys.autoscalerMarks];
  return text === undefined ? undefined : parseMarksRecord(text);
}

/** The annotations the claim writes for `marks` (each "true", and the record); none when it writes no mark. */
export function claimMarkValues(marks: readonly AutoscalerMark[], keys: Pick<AnnotationKeys, 'autoscalerMarks'>): Record<string, string> {
  if (marks.length === 0) return {};
  return { ...Object.fromEntries(marks.map((m) => [m, AUTOSCALER_MARK_VALUE])), [keys.autoscalerMarks]: formatMarksRecord(marks) };
}

/**
 * The claim's ops on a node that has an annotations map: each mark `test`ed absent (null: the test of a
 * missing key, docs/kubernetes-facts.md#k5-json-patch-semantics) and added, then the record added. Without
 * the test, an operator's value written after the claim's read would be overwritten by the `add` and
 * then removed at the release as if it were ours.
 */
export function claimMarkOps(marks: readonly AutoscalerMark[], keys: Pick<AnnotationKeys, 'autoscalerMarks'>): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  for (const [key, value] of Object.entries(claimMarkValues(marks, keys))) {
    if (key !== keys.autoscalerMarks) ops.push({ op: 'test', path: annotationPath(key), value: null });
    ops.push({ op: 'add', path: annotationPath(key), value });
  }
  return ops;
}

/**
 * The release's ops for the marks `capture` says its claim wrote: each `test`ed "true" then removed, and
 * the record added then removed (a record deleted by hand must not fail the release: a `remove` of a
 * missing key fails the whole patch). Nothing when the claim wrote no record.
 */
export function releaseMarkOps(
  capture: Pick<ClaimCapture, 'autoscalerMarks'>,
  keys: Pick<AnnotationKeys, 'autoscalerMarks'>,
): JsonPatchOp[] {
  if (capture.autoscalerMarks === undefined) return [];
  const ops: JsonPatchOp[] = [];
  for (const m of capture.autoscalerMarks) {
    ops.push({ op: 'test', path: annotationPath(m), value: AUTOSCALER_MARK_VALUE });
    ops.push({ op: 'remove', path: annotationPath(m) });
  }
  ops.push({ op: 'add', path: annotationPath(keys.autoscalerMarks), value: '' });
  ops.push({ op: 'remove', path: annotationPath(keys.autoscalerMarks) });
  return ops;
}

/**
 * After a release failed its CAS (422) on a node still ours: the capture to release with instead, without
 * the marks the node no longer shows as "true" (someone changed or removed them during the hold: theirs
 * now, kept), and what changed, for the log. Undefined when every recorded mark still says "true": the
 * 422 came from something else, and the refusal stands.
 */
export function withoutChangedMarks<C extends Pick<ClaimCapture, 'autoscalerMarks'>>(
  capture: C,
  node: Pick<NodeState, 'annotations'>,
): { capture: C; changed: string[] } | undefined {
  const ours = capture.autoscalerMarks ?? [];
  const changed = ours.filter((m) => node.annotations[m] !== AUTOSCALER_MARK_VALUE);
  if (changed.length === 0) return undefined;
  return {
    capture: { ...capture, autoscalerMarks: ours.filter((m) => !changed.includes(m)) },
    changed: changed.map((m) => {
      const now = node.annotations[m];
      return `${m} was ${now === undefined ? 'removed' : `set to ${JSON.stringify(now)}`} by someone else while the node was held: kept as they set it`;
    }),
  };
}

/** The marks the claim was to write that a re-read shows someone else wrote meanwhile (a benign move: the retry leaves them be). */
export function marksAppeared(capture: Pick<ClaimCapture, 'autoscalerMarks'>, reread: Pick<NodeState, 'annotations'>): string[] {
  return (capture.autoscalerMarks ?? []).filter((m) => reread.annotations[m] !== undefined).map((m) => `${m} appeared (kept as set)`);
}
