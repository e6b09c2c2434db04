// Release rule: give the node back in one atomic JSON Patch, restoring exactly the schedulability the
// claim found, and (on success) record the verified marker per host so the next run skips the node.
import type { AnnotationKeys, ClaimCapture } from '../core/model/node.js';
import type { JsonPatchOp } from '../core/model/patch.js';
import type { AnnotatedPhase, NodePhase } from '../core/model/phase.js';
import { releaseMarkOps } from './autoscalerMarks.js';
import { annotationPath, cordonedAtClaim, holdTests } from './claim.js';
import type { MarkerWrite } from './marker.js';

/**
 * - test: same uid and our owner token (we only release what we still hold; a replaced node or a
 *   claim someone else took over is not ours to touch — the patch then fails with 422).
 * - the verified marker (src/rules/marker.ts's markerWrite: each host's proof, the others' entries
 *   kept) set only when given (a drain failure releases WITHOUT it, so the node is retried next run).
 * - remove owner, phase and was-cordoned. `phase` and `was-cordoned` are first `add`ed then removed:
 *   `remove` of a missing key fails the whole patch (docs/kubernetes-facts.md#k5-json-patch-semantics), and a human deleting one of them by hand
 *   must not keep the node cordoned forever. `owner` needs no such step: the test proves it exists.
 * - the autoscaler marks the claim wrote (`capture.autoscalerMarks`, its record on the node), each
 *   behind a `test` of "true", and their record behind a `test` that it is still exactly what the claim
 *   wrote, naming this run (src/rules/autoscalerMarks.ts releaseMarkOps); an operator's own value was
 *   never recorded, so it stays.
 * - `spec.unschedulable=false` ONLY when the node was schedulable before the claim. A node that was
 *   already cordoned (`was-cordoned=true`) stays cordoned: someone cordoned it for their own reason.
 * - a node that was quarantined when claimed (`capture.quarantined`): the verified release lifts the
 *   quarantine in the same patch (the `quarantined` annotation removed, after an `add` so a missing
 *   one cannot fail the patch) and restores the schedulability from BEFORE the quarantine (the
 *   capture's `wasCordoned`, taken from its record). Any other release gives back what the claim
 *   found: still cordoned and still quarantined (its containerd still runs the old credential).
 */
export function buildReleasePatch(capture: ClaimCapture, keys: AnnotationKeys, opts: { marker?: MarkerWrite }): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [...holdTests(capture, keys)];
  const verified = opts.marker !== undefined;
  if (opts.marker !== undefined) ops.push(...opts.marker.ops);
  if (verified && capture.quarantined !== undefined) {
    ops.push({ op: 'add', path: annotationPath(keys.quarantined), value: '' });
    ops.push({ op: 'remove', path: annotationPath(keys.quarantined) });
  }
  ops.push({ op: 'remove', path: annotationPath(keys.owner) });
  for (const key of [keys.phase, keys.wasCordoned]) {
    ops.push({ op: 'add', path: annotationPath(key), value: '' });
    ops.push({ op: 'remove', path: annotationPath(key) });
  }
  ops.push(...releaseMarkOps(capture, keys));
  if (!releaseKeepsCordon(capture, verified)) ops.push({ op: 'add', path: '/spec/unschedulable', value: false });
  return ops;
}

/**
 * Whether a release leaves the node cordoned (the rule above, one home): a verified release restores the
 * schedulability from before the claim (before the quarantine, for a quarantined node); any other
 * release gives back what the claim found.
 */
export function releaseKeepsCordon(capture: Pick<ClaimCapture, 'wasCordoned' | 'quarantined'>, verified: boolean): boolean {
  return verified ? capture.wasCordoned : cordonedAtClaim(capture);
}

/**
 * Why a released node stays cordoned, one line for the summary (a person reading "released" and seeing
 * the node still cordoned must not think the run forgot it); undefined when the release uncordons it.
 */
export function keptCordonReason(
  capture: Pick<ClaimCapture, 'wasCordoned' | 'quarantined'>,
  keys: Pick<AnnotationKeys, 'quarantined'>,
  verified: boolean,
): string | undefined {
  if (!releaseKeepsCordon(capture, verified)) return undefined;
  if (verified) {
    return capture.quarantined !== undefined
      ? 'it was cordoned before its quarantine: the quarantine is lifted, that earlier cordon is kept'
      : 'it was cordoned before this run claimed it (an operator’s cordon): kept as found';
  }
  return capture.quarantined !== undefined
    ? `it is still quarantined (${keys.quarantined}): only a verified release lifts a quarantine`
    : 'it was cordoned before this run claimed it: kept as found';
}

/**
 * The release of a node as it was found in `phase`: buildReleasePatch (no verified marker) behind a
 * `test` of the phase annotation, so the decision to release is itself part of the CAS. A node that
 * moved on since it was read (to `mutating`: Talos may be touched) is not released. The one builder
 * for the post step, `recover-fences` and the printed release command of a claim whose outcome was
 * unknown (the claim writes phase=claimed with the token, atomically).
 */
export function guardedReleasePatch(capture: ClaimCapture, keys: AnnotationKeys, phase: AnnotatedPhase): JsonPatchOp[] {
  return [{ op: 'test', path: annotationPath(keys.phase), value: phase }, ...buildReleasePatch(capture, keys, {})];
}

/**
 * Whether a node this run left as another actor set it keeps the run Lease held: only when the run
 * had got as far as phase=mutating on it (from then on the credential patch may have been sent, and
 * the node says so). Before that (`claiming`, `claimed`) nothing of this run can be on Talos, and a
 * claim still on the node refuses the next run by itself (the inventory), so the Lease goes back.
 * One rule for the main step (at the end of the run) and the post step (from the saved phase).
 */
export function leftAsSetKeepsLease(stoppedIn: NodePhase | undefined): boolean {
  return stoppedIn === undefined || !['read', 'claiming', 'claimed'].includes(stoppedIn);
}
