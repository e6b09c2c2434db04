// What the post step does with a node the main step still held, by its saved phase
// (src/core/model/phase.ts NodePhase), so it leaves exactly what the main step left. Pure: the saved
// node and the node as read now in, a choice out; the post step's body (src/fences/post.ts) does the I/O.
// - `left-as-set` (another actor changed it while the run held it): write nothing; read it to say who
//   holds it now (src/rules/commands.ts leftAsSetReport); the Lease stays only when the run had
//   reached phase=mutating on it (src/rules/release.ts leftAsSetKeepsLease);
// - the node cannot be read: nothing is written and a person checks it; for `claiming` (the claim
//   PATCH was sent, its outcome unknown) the claim may be on it;
// - the node no longer carries this run's token (for `claiming`, or a re-created node): nothing of
//   this run is on it, nothing to do;
// - `claiming` (it landed), `claimed`, `settling`, `draining` (no drain finished, no reboot was
//   started): release it, restoring the cordon state from `was-cordoned`, exactly what the main step
//   does after a failed drain, guarded by the phase annotation the main step had written (`mutating`
//   from the settle gate on, else `claimed`), so a node moved on since the state was saved is kept;
// - any other phase (`mutating`, `rebooting`, `proving`, `left-fenced`): leave it cordoned and
//   claimed, and say what to check and how to release it, and when the run stopped (StoppedWhile),
//   derived from the phase it stopped in and whether its drain had finished, never assumed.
// A node the main step quarantined is not handed over at all: the quarantine gave up the claim.
import type { AnnotationKeys, NodeState } from '../core/model/node.js';
import type { AnnotatedPhase, HeldNode, NodePhase } from '../core/model/phase.js';
import { leftAsSetKeepsLease } from './release.js';

/** The phases the post step gives back: nothing had been rebooted. */
export type ReleasedFrom = Extract<NodePhase, 'claiming' | 'claimed' | 'settling' | 'draining'>;

export type PostChoice =
  | { action: 'report-as-set'; keepsLease: boolean }
  | { action: 'unreadable'; claimMayBeOn: boolean }
  | { action: 'nothing'; claimDidNotLand: boolean }
  | { action: 'release'; from: ReleasedFrom; expectedPhase: AnnotatedPhase }
  | { action: 'leave-fenced'; stoppedWhile: StoppedWhile };

/**
 * What the run was doing with a node it left fenced when it stopped, from the phase it was in and
 * whether its drain had finished (HeldNode.drained): `rebooting` only once the reboot was sent.
 */
export type StoppedWhile = 'changing-config' | 'settling' | 'draining' | 'drained' | 'rebooting';

const RELEASED_FROM: ReadonlySet<NodePhase> = new Set<NodePhase>(['claiming', 'claimed', 'settling', 'draining']);

export function choosePostAction(
  held: Pick<HeldNode, 'phase' | 'stoppedIn' | 'drained' | 'owner' | 'capture'>,
  /** the node as read now; undefined: it could not be read */
  now: Pick<NodeState, 'uid' | 'annotations'> | undefined,
  keys: Pick<AnnotationKeys, 'owner'>,
): PostChoice {
  const { phase } = held;
  if (phase === 'left-as-set') return { action: 'report-as-set', keepsLease: leftAsSetKeepsLease(held.stoppedIn) };
  if (!now) return { action: 'unreadable', claimMayBeOn: phase === 'claiming' };
  if (now.annotations[keys.owner] !== held.owner || (phase === 'claiming' && now.uid !== held.capture.uid)) {
    return { action: 'nothing', claimDidNotLand: phase === 'claiming' };
  }
  if (RELEASED_FROM.has(phase)) {
    const from = phase as ReleasedFrom;
    return { action: 'release', from, expectedPhase: from === 'settling' || from === 'draining' ? 'mutating' : 'claimed' };
  }
  const at = phase === 'left-fenced' ? (held.stoppedIn ?? 'mutating') : phase;
  return { action: 'leave-fenced', stoppedWhile: stoppedWhile(at, held.drained === true) };
}

function stoppedWhile(at: NodePhase, drained: boolean): StoppedWhile {
  if (at === 'rebooting' || at === 'proving') return 'rebooting';
  if (at === 'draining') return drained ? 'drained' : 'draining';
  if (at === 'settling') return 'settling';
  return 'changing-config';
}

/**
 * What the post step leaves of a node once it acted on its choice: whether a person must look at it
 * (the step fails), and whether the run Lease must stay held for it. A release that failed leaves the
 * node claimed, as a fenced one.
 */
export function leftAfter(choice: PostChoice, releaseFailed: boolean): { left: boolean; keepsLease: boolean } {
  switch (choice.action) {
    case 'report-as-set':
      return { left: true, keepsLease: choice.keepsLease };
    case 'nothing':
      return { left: false, keepsLease: false };
    case 'release':
      return { left: releaseFailed, keepsLease: releaseFailed };
    case 'unreadable':
    case 'leave-fenced':
      return { left: true, keepsLease: true };
  }
}
