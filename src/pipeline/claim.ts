// The claim: one CAS-guarded JSON Patch that cordons the node and writes our owner token
// (see src/rules/claim.ts for why its test ops never include resourceVersion).
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import { errorMessage, ToolError } from '../core/errors.js';
import type { ClaimCapture, NodeState } from '../core/model/node.js';
import { buildClaimPatch, captureClaim, checkGuard, claimBackoffMs, judgeClaimRejection } from '../rules/claim.js';
import { nodeDocument } from '../rules/objectDocument.js';
import type { RolloutDeps } from './context.js';
import { beforeMutation } from './fence.js';
import { NodeStop } from './stop.js';
import { readNodeOrGone } from './nodeWrite.js';
import { writeSurvivingLoss } from './write.js';

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
 * The claim is sent through the one writer (src/pipeline/write.ts): a failure whose outcome is unknown
 * (a dropped connection, the apiserver's 504 "may still be processing the request", our own kill, a
 * cancellation: src/core/errors.ts outcomeUnknown) is not taken as "not sent": the node is re-read
 * (waiting for /readyz) and the rule (src/rules/lostWrite.ts) decides: applied (its answer was lost:
 * adopted), not applied (the tests still hold: sent again, after a wait), or conflicted (judged below).
 * When no read answers, the claim stops with `claimOutcomeUnknown` and the node stays published as
 * `claiming` for the post step.
 *
 * A refusal (a 422: a `test` failed, the apiserver does not say which) and a conflicted re-read are
 * judged on the node as re-read (src/rules/claim.ts judgeClaimRejection): a benign change is retried
 * with a patch rebuilt from the re-read, after claimBackoffMs, up to `claim-attempts` sends; our own
 * token on the node means the patch landed and only its answer was lost, adopted only when the re-read
 * shows everything the claim established still holds (adoptionProblems); anything else refuses.
 */
export async function claimNode(deps: ClaimDeps, fresh: NodeState, clock: Clock, onSending?: OnClaimSending): Promise<ClaimResult> {
  const { kube, keys, owner, config } = deps;
  const conflicts: string[] = [];
  let current = fresh;
  const original = captureClaim(fresh, owner, keys);
  let attempts = 0;
  while (attempts < config.claimAttempts) {
    // The capture of the patch this attempt sends (a retry's was-cordoned equals the first read's:
    // judgeClaimRejection retries only when the cordon is unchanged; on a quarantined node both
    // come from the quarantine's record, which the patch tests).
    const capture = current === fresh ? original : captureClaim(current, owner, keys);
    const node = current;
    const ops = buildClaimPatch(node, owner, keys);
    const r = await writeSurvivingLoss(
      { kube, clock, cancelled: deps.cancelled },
      {
        what: `the claim of ${node.name}`,
        ops: () => ops,
        send: (o) => kube.patchNode(node.name, o),
        read: () => readNodeOrGone(kube, node.name),
        document: nodeDocument,
        beforeSend: async () => {
          await beforeMutation(deps, { fresh: false });
          onSending?.(capture);
        },
      },
    );
    attempts += r.sends;
    for (const e of r.lost) conflicts.push(`the claim's outcome was unknown (${lastLine(e)}) and the re-read showed it had not landed`);
    if (r.kind === 'written') return { capture, attempts, conflicts };
    if (r.kind === 'applied') return { capture, attempts, conflicts, adoptedAfter: lastLine(r.after) };
    if (r.kind === 'unknown') {
      throw new NodeStop(
        'failed',
        `the claim's outcome is unknown (${errorMessage(r.error)}); ${deps.cancelled?.() ? 'the run was cancelled before the node could be read again' : 'the node could not be read again'}`,
        { claimOutcomeUnknown: true },
        { cause: r.error },
      );
    }
    // refused: a 422 on the first send is judged on a fresh read; anything else of the kind (a 404) stands
    if (!r.read && !(r.error instanceof ToolError && r.error.kind === 'invalid')) throw r.error;
    const reread = r.read ? r.seen : await kube.getNode(node.name);
    if (!reread) {
      throw new NodeStop('refused', `claim refused: the node ${node.name} is gone (${errorMessage(r.error)})`, {
        nextStep: 'Nothing was changed by this run. Rerun: it lists the nodes again.',
        claimFailure: 'conflict',
      });
    }
    const judged = judgeClaimRejection(original, reread, keys);
    if (judged.kind === 'ours') {
      const problems = adoptionProblems(capture, reread, keys);
      if (problems.length === 0) return { capture, attempts, conflicts, adoptedAfter: r.read ? lastLine(r.error) : undefined };
      throw new NodeStop('refused', `this run's claim landed (its response was lost), but the node changed since: ${problems.join('; ')}`, {
        disposition: 'leave-as-set',
        claimFailure: 'conflict',
        heldCapture: capture,
        seen: reread,
      });
    }
    if (judged.kind === 'conflict') {
      throw new NodeStop('refused', `claim refused, another actor changed what drain safety depends on: ${judged.reasons.join('; ')}`, {
        nextStep:
          'Nothing was changed by this run. Find out who is working on the node (see its annotations and taints), wait for them to finish, then rerun.',
        claimFailure: 'conflict',
      });
    }
    conflicts.push(judged.changed.join(', ') || 'a change the re-read could not show');
    current = reread;
    if (attempts < config.claimAttempts) await clock.sleep(claimBackoffMs(attempts, clock.random()));
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
