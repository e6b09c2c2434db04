// The claim: one CAS-guarded JSON Patch that cordons the node and writes our owner token
// (see src/rules/claim.ts for why its test ops never include resourceVersion).
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { ToolError } from '../errors.js';
import type { ClaimCapture, NodeState } from '../model.js';
import { buildClaimPatch, captureClaim, checkGuard, claimBackoffMs, judgeClaimRejection } from '../rules/claim.js';
import { beforeMutation, type RolloutDeps } from './context.js';
import { NodeStop } from './nodeRun.js';

export interface ClaimResult {
  capture: ClaimCapture;
  attempts: number;
  conflicts: string[];
}

/** What the claim needs of the rollout's dependencies (the benchmarks call it with just these). */
export type ClaimDeps = Pick<RolloutDeps, 'kube' | 'keys' | 'owner' | 'cancelled' | 'lock'> & { config: Pick<Config, 'claimAttempts'> };

/**
 * A 422 (or a transport failure) is judged on a re-read: a benign change is retried with a patch
 * rebuilt from the re-read, anything else refuses. Our own token already on the node means the patch
 * landed and only its response was lost; such a claim is adopted only after the re-read shows
 * everything the claim established still holds (see adoptionProblems).
 */
export async function claimNode(deps: ClaimDeps, fresh: NodeState, clock: Clock): Promise<ClaimResult> {
  const { kube, keys, owner, config } = deps;
  const conflicts: string[] = [];
  let current = fresh;
  const original = captureClaim(fresh, owner);
  for (let attempt = 1; attempt <= config.claimAttempts; attempt++) {
    const capture = { ...captureClaim(current, owner), wasCordoned: original.wasCordoned };
    try {
      await beforeMutation(deps, { fresh: false });
      await kube.patchNode(current.name, buildClaimPatch(current, owner, keys));
      return { capture, attempts: attempt, conflicts };
    } catch (e) {
      if (!(e instanceof ToolError) || (e.kind !== 'invalid' && e.kind !== 'transport')) throw e;
      const reread = await kube.getNode(current.name);
      const judged = judgeClaimRejection(original, reread, keys);
      if (judged.kind === 'ours') {
        const problems = adoptionProblems(capture, reread, keys);
        if (problems.length === 0) return { capture, attempts: attempt, conflicts };
        throw new NodeStop(
          'refused',
          `this run's claim landed (its response was lost), but the node changed since: ${problems.join('; ')}`,
          {
            disposition: 'leave-as-set',
            claimFailure: 'conflict',
            heldCapture: capture,
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
        e.kind === 'transport'
          ? 'the claim request failed in transit and had not landed'
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
