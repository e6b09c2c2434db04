// The autoscaler marks: while the run holds a node it carries `cluster-autoscaler.kubernetes.io/scale-down-disabled`
// and `karpenter.sh/do-not-disrupt`, both "true" (src/core/model/autoscalerMarks.ts), so neither autoscaler
// removes a node that is cordoned and drained for a reboot. Pure: the claim's and every release's patch
// builders (src/rules/claim.ts, release.ts, quarantine.ts) take their ops from here.
//
// The rules (tests: __tests__/rules/autoscalerMarks.test.ts; the argument: docs/autoscaler-marks.md):
// - the claim writes a mark only where the node carries no such annotation at all, in its own patch, with
//   a `test` that it is still absent (an operator's value written between the read and the claim fails
//   the claim's CAS and the retry leaves it alone). A value already there, ANY value, "true" included,
//   is someone else's: kept exactly as found, never counted as ours, never removed, and said
//   (foundMarkNotes: a value other than "true" means the autoscaler may take the node while drained);
// - the claim records on the node, in the same atomic write as the owner token, which run wrote which
//   marks with which value (`<prefix>/autoscaler-marks`, a JSON object `{"run": owner token, "wrote":
//   {mark: "true"}}`), so the post step and `recover-fences` (a later run, a fresh process) know what is
//   the run's, read from the node; a record naming another run is never taken for this one's;
// - a release removes each recorded mark behind a `test` of the value written ("true") AND a `test` that
//   the record is still exactly the text the claim wrote (naming this run), then removes the record. A
//   mark someone changed, or a record someone changed or removed, fails the whole release (422); the
//   releaser reads the node again and, while it is still ours, sends the release once more without what
//   is no longer provably ours (withoutChangedMarks): a changed mark is kept, a changed or removed record
//   keeps every mark it named. The release never fails over a mark;
// - what cannot be proven: a write of the same value ("true" over our "true") is a no-op the apiserver
//   does not even store, and a delete then re-add of "true" leaves the value and the record as they were;
//   such a mark is removed as ours. The documented way for an operator to keep the run's marks is to
//   remove the record (or any change to it): the release then leaves every mark in place and says so;
// - no guard compares them: they are not what drain safety depends on (which pods may run on the node
//   and who holds it), so an autoscaler or operator changing them during the hold is not a conflict.
import { AUTOSCALER_MARK_VALUE, AUTOSCALER_MARKS, type AutoscalerMark } from '../core/model/autoscalerMarks.js';
import type { AnnotationKeys, ClaimCapture, NodeState } from '../core/model/node.js';
import type { JsonPatchOp } from '../core/model/patch.js';
import { shellWord } from '../core/shell.js';
import { annotationPath } from './pointer.js';

/** The marks a claim of `node` writes: each one it does not carry at all (a value already there is someone else's). */
export function marksToWrite(node: Pick<NodeState, 'annotations'>): AutoscalerMark[] {
  return AUTOSCALER_MARKS.filter((m) => node.annotations[m] === undefined);
}

/** The marks `node` carries before a claim, with their values: none of them is the claim's to write or remove. */
export function marksFound(node: Pick<NodeState, 'annotations'>): Partial<Record<AutoscalerMark, string>> {
  const found: Partial<Record<AutoscalerMark, string>> = {};
  for (const m of AUTOSCALER_MARKS) if (node.annotations[m] !== undefined) found[m] = node.annotations[m];
  return found;
}

/**
 * The record's text: the run (its owner token) and each mark it wrote with the value written, as one
 * JSON object (`{"run":"…","wrote":{"cluster-autoscaler.kubernetes.io/scale-down-disabled":"true"}}`).
 * Deterministic, so the release's `test` compares it byte for byte.
 */
export function formatMarksRecord(run: string, marks: readonly AutoscalerMark[]): string {
  return JSON.stringify({ run, wrote: Object.fromEntries(marks.map((m) => [m, AUTOSCALER_MARK_VALUE])) });
}

/** A record as read: the run it names (undefined: the comma list of the previous version, which named none) and its marks. */
export interface MarksRecord {
  run?: string;
  marks: AutoscalerMark[];
}

/**
 * The run and marks a record names. The previous version's record, the keys comma separated, names no
 * run; an entry that is not one of the marks (a hand edit) is ignored; JSON that is not a record's
 * shape names nothing (undefined: nobody's).
 */
export function parseMarksRecord(text: string): MarksRecord | undefined {
  if (text.trimStart().startsWith('{')) {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      return undefined;
    }
    if (typeof v !== 'object' || v === null) return undefined;
    const { run, wrote } = v as { run?: unknown; wrote?: unknown };
    if (typeof run !== 'string' || typeof wrote !== 'object' || wrote === null) return undefined;
    const named = wrote as Record<string, unknown>;
    return { run, marks: AUTOSCALER_MARKS.filter((m) => named[m] === AUTOSCALER_MARK_VALUE) };
  }
  const named = new Set(text.split(',').map((s) => s.trim()));
  return { marks: AUTOSCALER_MARKS.filter((m) => named.has(m)) };
}

/**
 * The marks the node's record says the claim that holds it wrote, with the record's exact text (what a
 * release tests); undefined when there is no record, or it names another run than the node's owner
 * token (a record left by an earlier claim is not this claim's). A record of the previous version (no
 * run named) counts on a claimed node: that version wrote it in the same atomic write as the token.
 */
export function recordedMarks(
  node: Pick<NodeState, 'annotations'>,
  keys: Pick<AnnotationKeys, 'autoscalerMarks' | 'owner'>,
): { marks: AutoscalerMark[]; text: string } | undefined {
  const text = node.annotations[keys.autoscalerMarks];
  const owner = node.annotations[keys.owner];
  if (text === undefined || owner === undefined) return undefined;
  const record = parseMarksRecord(text);
  if (!record || (record.run !== undefined && record.run !== owner)) return undefined;
  return { marks: record.marks, text };
}

/** The annotations the claim writes for its marks (each "true", and the record); none when it writes no mark. */
export function claimMarkValues(
  capture: Pick<ClaimCapture, 'autoscalerMarks' | 'marksRecord'>,
  keys: Pick<AnnotationKeys, 'autoscalerMarks'>,
): Record<string, string> {
  const marks = capture.autoscalerMarks ?? [];
  if (marks.length === 0 || capture.marksRecord === undefined) return {};
  return { ...Object.fromEntries(marks.map((m) => [m, AUTOSCALER_MARK_VALUE])), [keys.autoscalerMarks]: capture.marksRecord };
}

/**
 * The claim's ops on a node that has an annotations map: each mark `test`ed absent (null: the test of a
 * missing key, docs/kubernetes-facts.md#k5-json-patch-semantics) and added, then the record added (over
 * a record of an earlier claim, if one was left: it named another run). Without the test, an operator's
 * value written after the claim's read would be overwritten by the `add` and then removed at the
 * release as if it were ours.
 */
export function claimMarkOps(
  capture: Pick<ClaimCapture, 'autoscalerMarks' | 'marksRecord'>,
  keys: Pick<AnnotationKeys, 'autoscalerMarks'>,
): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  for (const [key, value] of Object.entries(claimMarkValues(capture, keys))) {
    if (key !== keys.autoscalerMarks) ops.push({ op: 'test', path: annotationPath(key), value: null });
    ops.push({ op: 'add', path: annotationPath(key), value });
  }
  return ops;
}

/**
 * The release's ops for the marks `capture` says its claim wrote: each `test`ed "true" (the value
 * written) then removed, and the record `test`ed to be exactly the text the claim wrote (naming this
 * run) then removed. Nothing when the claim wrote no record.
 */
export function releaseMarkOps(
  capture: Pick<ClaimCapture, 'autoscalerMarks' | 'marksRecord'>,
  keys: Pick<AnnotationKeys, 'autoscalerMarks'>,
): JsonPatchOp[] {
  if (capture.marksRecord === undefined) return [];
  const ops: JsonPatchOp[] = [];
  for (const m of capture.autoscalerMarks ?? []) {
    ops.push({ op: 'test', path: annotationPath(m), value: AUTOSCALER_MARK_VALUE });
    ops.push({ op: 'remove', path: annotationPath(m) });
  }
  ops.push({ op: 'test', path: annotationPath(keys.autoscalerMarks), value: capture.marksRecord });
  ops.push({ op: 'remove', path: annotationPath(keys.autoscalerMarks) });
  return ops;
}

/**
 * After a release failed its CAS (422) on a node still ours: the capture to release with instead, and
 * what is kept, one line each (the log, the summary, the Events). Undefined when everything recorded is
 * still as written: the 422 came from something else, and the refusal stands.
 * - the record no longer the text the claim wrote (changed, removed: someone took the marks over, or
 *   another claim's record): nothing of the marks is provably ours any more; every mark is kept, and
 *   the record is left as it is;
 * - otherwise each recorded mark that no longer says "true" (changed or removed) is theirs now: kept as
 *   they set it; the others and the record are still removed.
 */
export function withoutChangedMarks<C extends Pick<ClaimCapture, 'autoscalerMarks' | 'marksRecord'>>(
  capture: C,
  node: Pick<NodeState, 'annotations'>,
  keys: Pick<AnnotationKeys, 'autoscalerMarks'>,
): { capture: C; changed: string[] } | undefined {
  if (capture.marksRecord === undefined) return undefined;
  const ours = capture.autoscalerMarks ?? [];
  const record = node.annotations[keys.autoscalerMarks];
  if (record !== capture.marksRecord) {
    const rest: C = { ...capture };
    delete rest.autoscalerMarks;
    delete rest.marksRecord;
    const present = ours.filter((m) => node.annotations[m] !== undefined);
    return {
      capture: rest,
      changed: [
        `${keys.autoscalerMarks} was ${record === undefined ? 'removed' : 'changed'} by someone else while the node was held: ` +
          (present.length > 0 ? `the marks it named (${present.join(', ')}) are theirs now, kept as they are` : 'nothing of it removed'),
      ],
    };
  }
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

/** Who honours each mark, for a person. */
const HONOURED_BY: Record<AutoscalerMark, string> = {
  'cluster-autoscaler.kubernetes.io/scale-down-disabled': 'the cluster autoscaler',
  'karpenter.sh/do-not-disrupt': 'Karpenter',
};

/**
 * One line per mark the node carried before the claim (left exactly as found): a "true" keeps its
 * autoscaler off anyway; any other value is honoured by neither (both compare with "true"), so that
 * autoscaler may remove the node while it is drained, and the line says how to keep it off (the action
 * has no input for it: it never writes over a value someone set).
 */
export function foundMarkNotes(node: string, found: Partial<Record<AutoscalerMark, string>> | undefined): string[] {
  const out: string[] = [];
  for (const m of AUTOSCALER_MARKS) {
    const value = found?.[m];
    if (value === undefined) continue;
    const who = HONOURED_BY[m];
    out.push(
      value === AUTOSCALER_MARK_VALUE
        ? `${m}="true" was set before the claim: not this run's, left as found (${who} keeps off the node by it, and no release removes it)`
        : `${m}=${JSON.stringify(value)} was set before the claim and is left as found: ${who} may remove this node while it is drained and rebooted. ` +
            `To keep it off during a roll, set it "true" before the run (kubectl annotate node ${shellWord(node)} ${m}=true --overwrite; it is then yours to remove) ` +
            'or remove it, so the claim writes its own and the release removes it',
    );
  }
  return out;
}
