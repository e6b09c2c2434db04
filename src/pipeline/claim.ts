// The claim: one CAS-guarded JSON Patch that cordons the node and writes our owner token
// (see src/rules/claim.ts for why its test ops never include resourceVersion).
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import { errorMessage, outcomeUnknown, ToolError } from '../core/errors.js';
import type { ClaimCapture, NodeState } from '../core/model/node.js';
import { buildClaimPatch, captureClaim, checkGuard, claimBackoffMs, judgeClaimRejection } from '../rules/claim.js';
import type { RolloutDeps } from './context.js';
import { beforeMutation } from './fence.js';
import { NodeStop } from './stop.js';
import { readAfterUnknown } from './transport.js';

export interface ClaimResult {
  capture: ClaimCapture;
  attempts: number;
  conflicts: string[];
  /** set when the claim was adopted from a re-read: why its own answer could not tell */
  adoptedAfter?: string;
}

/** What the claim needs of the rollout's dependencies (the benchmarks call it with just these). */
export type ClaimDeps = Pick<RolloutDeps, 'kube' | 'keys' | 'owner' | 'cancelled' | 'lock'> & { config: Pick<Config, 'claimAttempts'> };

/** Called just before each claim PATCH is sent, with what that attempt would hold: from then on the claim may be on the node. */
export type OnClaimSending = (capture: ClaimCapture) => void;

/**
 * A 422 is judged on a re-read: a benign change is retried with a patch rebuilt from the re-read,
 * anything else refuses. A failure whose outcome is unknown (a dropped connection, the apiserver's
 * 504 "may still be processing the request", our own kill, a cancellation: src/core/errors.ts outcomeUnknown)
 * is not taken as "not sent": it is resolved by a re-read that waits for /readyz (readAfterUnknown);
 * when no read answers, the claim stops with `claimOutcomeUnknown` and the node stays published as
 * `claiming` for the post step. Our own token already on the node means the patch landed and only
 * its response was lost; such a claim is adopted only after the re-read shows everything the claim
 * established still holds (see adoptionProblems).
 */
export async function claimNode(deps: ClaimDeps, fresh: NodeState, clock: Clock, onSending?: OnClaimSending): Promise<ClaimResult> {
  const { kube, keys, owner, config } = deps;
  const conflicts: string[] = [];
  let current = fresh;
  const original = captureClaim(fresh, owner, keys);
  for (let attempt = 1; attempt <= config.claimAttempts; attempt++) {
    // The capture of the patch this attempt sends (a retry's was-cordoned equals the first read's:
    // judgeClaimRejection retries only when the cordon is unchanged; on a quarantined node both
    // come from the quarantine's record, which the patch tests).
    const capture = current === fresh ? original : captureClaim(current, owner, keys);
    await beforeMutation(deps, { fresh: false });
    onSending?.(capture);
    try {
      await kube.patchNode(current.name, buildClaimPatch(current, owner, keys));
      return { capture, attempts: attempt, conflicts };
    } catch (e) {
      const unknown = outcomeUnknown(e);
      if (!unknown && !(e instanceof ToolError && e.kind === 'invalid')) throw e;
      const reread = unknown
        ? await readAfterUnknown({ kube, clock, cancelled: deps.cancelled }, () => kube.getNode(current.name))
        : await kube.getNode(current.name);
      if (!reread) {
        throw new NodeStop(
          'failed',
          `the claim's outcome is unknown (${errorMessage(e)}); ${deps.cancelled?.() ? 'the run was cancelled before the node could be read again' : 'the node could not be read again'}`,
          { claimOutcomeUnknown: true },
          { cause: e },
        );
      }
      const judged = judgeClaimRejection(original, reread, keys);
      if (judged.kind === 'ours') {
        const problems = adoptionProblems(capture, reread, keys);
        if (problems.length === 0) return { capture, attempts: attempt, conflicts, adoptedAfter: unknown ? lastLine(e) : undefined };
        throw new NodeStop(
          'refused',
          `this run's claim landed (its response was lost), but the node changed since: ${problems.join('; ')}`,
          {
            disposition: 'leave-as-set',
            claimFailure: 'conflict',
            heldCapture: capture,
            seen: reread,
          },
        );
      }
      if (judged.kind === 'conflict') {
        throw new NodeStop('refused', `claim refused, another actor changed what drain safety depends on: ${judged.reasons.join('; ')}`, {
          nextStep:
            'Nothing was changed by this run. Find out who is working on the node (see its annotations and taints), wait for them to finish, then rerun.',
          claimFailure: 'conflict',
        });
      }
      conflicts.push(
        unknown
          ? `the claim's outcome was unknown (${lastLine(e)}) and the re-read showed it had not landed`
          : judged.changed.join(', ') || 'a change the re-read could not show',
      );
      current = reread;
      if (attempt < config.claimAttempts) await clock.sleep(claimBackoffMs(attempt, clock.random()));
    }
  }
  throw new NodeStop('refused', `claim did not land in ${config.claimAttempts} attempts; the node kept changing: ${conflicts.join('; ')}`, {
    nextStep: 'Nothing was changed by this run. Raise claim-attempts if the cluster writes this node very often, or rerun.',
    claimFailure: 'exhausted',
  });
}

/** The tool's own last line (kubectl's `Error from server (Timeout): …`), else the message. */
function lastLine(e: unknown): string {
  const text = e instanceof ToolError && e.stderr.trim() ? e.stderr : errorMessage(e);
  return text.trim().split('\n').filter(Boolean).slice(-1)[0] ?? 'no message';
}

/**
 * Adopting a claim whose response was lost: the atomic patch put our token, the cordon and
 * phase=claimed on the node together, but anyone may have written the node between the patch and
 * our re-read (an operator uncordoning it). So the re-read must show everything the claim
 * established: the same uid, our owner token, phase=claimed, spec.unschedulable true and the
 * scheduling taints as captured (checkGuard). Otherwise the node is not fenced and no Talos
 * mutation may run on it.
 */
function adoptionProblems(capture: ClaimCapture, reread: NodeState, keys: ClaimDeps['keys']): string[] {
  const problems = checkGuard(capture, reread, keys);
  const phase = reread.annotations[keys.phase];
  if (phase !== 'claimed') problems.push(`${keys.phase} is ${phase === undefined ? 'absent' : JSON.stringify(phase)}, not "claimed"`);
  return problems;
}
