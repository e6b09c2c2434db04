// Adoption: a claim another run of this action left on a node, taken over by the run that now holds the
// run Lease, which then completes the node's roll from what the node shows (or gives it back). Pure:
// src/pipeline/node.ts sends the patch. Why it is safe (the claim's run can no longer act once this run
// holds the Lease, whatever its runner did) is docs/recovery.md's argument.
//
// A claim is adoptable only when everything a release needs is on the node and the fence still stands:
// - the owner is an owner token of this action (repository, run id, attempt, nonce) and not this run's;
// - the phase is one a claim writes (`claimed`, `mutating`);
// - `was-cordoned` says what to give back (`true` / `false`);
// - the node is cordoned (an operator who uncordoned a claimed node took it back: a person decides);
// - no deletion started.
// Anything else stays a residual claim the inventory refuses, for a person (recover-fences, fences).
import type { AnnotationKeys, ClaimCapture, NodeState } from '../core/model/node.js';
import type { JsonPatchOp } from '../core/model/patch.js';
import { ANNOTATED_PHASES } from '../core/model/phase.js';
import { parseOwnerToken } from '../core/owner.js';
import { fenceCapture } from './fences.js';
import { annotationPath } from './pointer.js';

/** Why the claim on `node` may not be adopted by `owner`; undefined: it may (or there is no claim). */
export function adoptionRefusal(node: NodeState, keys: AnnotationKeys, owner: string): string | undefined {
  const claimOwner = node.annotations[keys.owner];
  const phase = node.annotations[keys.phase];
  if (claimOwner === undefined && phase === undefined) return undefined;
  if (claimOwner === undefined) return `${keys.phase} is set without an owner`;
  if (claimOwner === owner) return 'it is this run’s own claim';
  if (!parseOwnerToken(claimOwner)) return `owner ${JSON.stringify(claimOwner)} is not an owner token of this action`;
  if (!(ANNOTATED_PHASES as readonly string[]).includes(phase ?? '')) {
    return `${keys.phase} is ${phase === undefined ? 'missing' : JSON.stringify(phase)}, not one a claim writes`;
  }
  const was = node.annotations[keys.wasCordoned];
  if (was !== 'true' && was !== 'false') return `${keys.wasCordoned} is ${was === undefined ? 'missing' : JSON.stringify(was)}`;
  if (!node.unschedulable) return 'the node is not cordoned any more (someone uncordoned a claimed node)';
  if (node.deletionTimestamp) return `deletion started at ${node.deletionTimestamp}`;
  return undefined;
}

/** Whether `node` carries a claim `owner` may adopt (adoptionRefusal says none stands in the way). */
export function adoptable(node: NodeState, keys: AnnotationKeys, owner: string): boolean {
  return node.annotations[keys.owner] !== undefined && adoptionRefusal(node, keys, owner) === undefined;
}

/**
 * The adoption: ONE JSON Patch that puts `owner` in place of the abandoned claim's owner and changes
 * nothing else. Its `test`s are the whole claim as judged (uid, no deletion, owner, phase, was-cordoned,
 * the cordon), so a node that moved since the read (another run adopted it first, a person released
 * it) fails it with 422 and is left as it is. The phase stays as it was: `mutating` still says that
 * Talos may carry the change; the roll's next step writes `mutating` again anyway.
 */
export function buildAdoptPatch(node: NodeState, keys: AnnotationKeys, owner: string): JsonPatchOp[] {
  return [
    { op: 'test', path: '/metadata/uid', value: node.uid },
    { op: 'test', path: '/metadata/deletionTimestamp', value: null },
    { op: 'test', path: annotationPath(keys.owner), value: node.annotations[keys.owner] },
    { op: 'test', path: annotationPath(keys.phase), value: node.annotations[keys.phase] },
    { op: 'test', path: annotationPath(keys.wasCordoned), value: node.annotations[keys.wasCordoned] },
    { op: 'test', path: '/spec/unschedulable', value: true },
    { op: 'add', path: annotationPath(keys.owner), value: owner },
  ];
}

/**
 * What the adopting run holds once the patch landed: the abandoned claim's capture as a release
 * rebuilds it (fenceCapture: the cordon to give back from `was-cordoned`, the autoscaler marks from
 * the claim's record, the taints as they are now), under the adopting run's token.
 */
export function adoptedCapture(node: NodeState, keys: AnnotationKeys, owner: string): ClaimCapture {
  return { ...fenceCapture(node, keys), owner };
}
