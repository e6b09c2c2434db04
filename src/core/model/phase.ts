// A node's phase in this run: the one record of how far the run got with it and what it leaves, the
// values of the phase annotation a claim writes, and the held node the main step hands to the post
// step. Plain data, no I/O.

import type { ClaimCapture } from './node.js';

/**
 * - `read`: read, nothing written yet;
 * - `claiming`: the claim was sent and its outcome is not known (yet): the node may carry this run's
 *   claim (owner, phase=claimed, the cordon) or nothing of it. The post step reads the node to know;
 * - `claimed`: cordoned and claimed, nothing on Talos changed;
 * - `mutating`: phase=mutating is on the node, the credential patch may have been sent;
 * - `settling`: the credential patch was applied and the settle gate waits (or reads) before the
 *   drain: nothing drained, no reboot started, so a run that ends here gives the node back, as in
 *   `draining` (the annotation still says phase=mutating);
 * - `draining`: the credential patch was applied, the drain runs (then the gates after it), no reboot
 *   sent (HeldNode.drained says whether the drain finished);
 * - `rebooting`: the reboot is being sent (entered once the Lease is proven, just before the request);
 *   `proving`: the node is back, the proof is read;
 * - `released`: given back (verified or restored); nothing of this run is left on it;
 * - `left-fenced`: left cordoned and claimed for a person to check (Talos may have changed);
 * - `left-as-set`: another actor changed the node while this run held it: left exactly as they set it;
 * - `quarantined`: its drain timed out (`undrainable: quarantine`): the claim was given up in one patch
 *   that kept the cordon and wrote the `quarantined` annotation; nothing of the claim is left on it.
 */
export const NODE_PHASES = [
  'read',
  'claiming',
  'claimed',
  'mutating',
  'settling',
  'draining',
  'rebooting',
  'proving',
  'released',
  'left-fenced',
  'left-as-set',
  'quarantined',
] as const;
export type NodePhase = (typeof NODE_PHASES)[number];

/**
 * The values of the `<prefix>/phase` annotation a claim writes on the node (not the pipeline's NodePhase:
 * the annotation says what a person or the post step finds on the node; `mutating` from the moment the
 * credential patch may be sent).
 */
export const ANNOTATED_PHASES = ['claimed', 'mutating'] as const;
export type AnnotatedPhase = (typeof ANNOTATED_PHASES)[number];

/** A node this run still holds (or left), as handed from the main step to the post step. */
export interface HeldNode {
  node: string;
  phase: NodePhase;
  /** for `left-fenced` / `left-as-set`: the phase the node was in when the run stopped on it */
  stoppedIn?: NodePhase;
  /** the drain finished (absent: it did not, or did not start); `draining` lasts until the reboot is sent */
  drained?: true;
  capture: ClaimCapture;
  owner: string;
}

/** The run Lease while the main step holds it, handed to the post step with the held nodes. */
export interface SavedLease {
  namespace: string;
  name: string;
  owner: string;
}

/** The resolved inputs the post step needs to act on the cluster. */
export interface SavedAccess {
  annotationPrefix: string;
  kubeconfig?: string;
  kubeContext?: string;
}
