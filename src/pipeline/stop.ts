// THE stop of a node: what a stop asks for (its disposition), the NodeStop every refusal or failure
// of a node is thrown as, and stopNode, the one function every stop goes through to carry out
// release, leave or quarantine, and say what a person does next. The post-reboot proof's verdict is
// judged here too (settleProof), so release vs leave has one home.
import { errorMessage } from '../core/errors.js';
import type { ClaimCapture, NodeState } from '../core/model/node.js';
import type { EvidenceVerdict } from '../core/model/verdict.js';
import { STEP } from '../core/steps.js';
import { fencedNextStep, leftAsSetReport, releaseCommand, unknownClaimCheck } from '../rules/commands.js';
import { judgeProof, residualRisk } from '../rules/proof.js';
import { buildReleasePatch, leftAsSetKeepsLease } from '../rules/release.js';
import type { RunContext } from './context.js';
import { LEFT, type NodeRun } from './nodeRun.js';
import { quarantineNode, type QuarantineCause } from './quarantine.js';
import { releaseNode } from './nodeWrite.js';

/**
 * What a stop asks for the node:
 * - `release`: give it back (restoring its cordon state, no verified marker). Only when nothing this
 *   run did needs a reboot to be safe: nothing on Talos changed, or the patch failed / the drain or the
 *   quorum gate stopped before any reboot (containerd still runs as before, so uncordoning is safe).
 * - `leave-fenced`: Talos may carry the change and the node was not proven: a person checks it.
 * - `leave-as-set`: another actor changed the node while we held it: touch nothing, not even to uncordon
 *   (an autoscaler may be deleting it, its address may point at another machine).
 * - `quarantine`: its drain timed out under `undrainable: quarantine`: give up the claim but keep the
 *   cordon, and write the `quarantined` annotation (src/rules/quarantine.ts), in one CAS-guarded patch.
 * - absent: decided by the phase (see defaultDisposition).
 */
export type Disposition = 'release' | 'leave-fenced' | 'leave-as-set' | 'quarantine';

/** A refusal or failure that stops the roll on a node. */
export class NodeStop extends Error {
  constructor(
    readonly outcome: 'refused' | 'failed' | 'quarantined',
    message: string,
    readonly opts: {
      disposition?: Disposition;
      /** the next step to show once the disposition is done as asked (a default is built otherwise) */
      nextStep?: string;
      /** set by the claim: a genuine conflict, or claim-attempts exhausted by benign changes */
      claimFailure?: 'conflict' | 'exhausted';
      /** set by the claim when our claim is on the node although the claim is refused (a lost response adopted, then found unsafe) */
      heldCapture?: ClaimCapture;
      /** set by the claim when its PATCH may have landed and no read could tell: the node stays `claiming` */
      claimOutcomeUnknown?: boolean;
      /** for `leave-as-set`: the node as last read, so the report says who holds it now and what still stands */
      seen?: NodeState;
      /** for `quarantine`: what blocked the drain, the drain-timeout that ran out (as formatted), and both in one line */
      quarantine?: QuarantineCause;
    } = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'NodeStop';
  }

  get claimFailure(): 'conflict' | 'exhausted' | undefined {
    return this.opts.claimFailure;
  }
}

/** A stop whose release failed as well: the stop (its cause) and the release's error; the message says both. */
export class ReleaseFailedStop extends NodeStop {
  constructor(
    stop: NodeStop,
    readonly releaseError: unknown,
    nextStep: string,
  ) {
    super(
      stop.outcome,
      `${stop.message}; releasing the claim failed too: ${errorMessage(releaseError)}`,
      { ...stop.opts, nextStep },
      { cause: stop },
    );
  }
}

/** Anything not a NodeStop: release when nothing on Talos changed, otherwise leave it fenced. */
function defaultDisposition(nodeRun: NodeRun): Disposition {
  if (LEFT.has(nodeRun.phase)) return nodeRun.phase === 'left-as-set' ? 'leave-as-set' : 'leave-fenced';
  return nodeRun.talosTouched ? 'leave-fenced' : 'release';
}

/**
 * THE stop: every failure or refusal of a node ends here. It carries out the disposition (or the
 * phase's default), moves the node to its final phase, handles a release that fails (the node then
 * stays claimed, and the report says so and whether Talos was changed), and writes the record's
 * outcome, reason and next step. Returns the stop as recorded.
 */
export async function stopNode(ctx: RunContext, nodeRun: NodeRun, e: unknown): Promise<NodeStop> {
  const stop = e instanceof NodeStop ? e : new NodeStop('failed', errorMessage(e), {}, { cause: e });
  let nextStep = stop.opts.nextStep;
  let releaseError: { error: unknown } | undefined;
  let failedQuarantine: { error: unknown } | undefined;
  const talos = nodeRun.talosTouched
    ? 'the credential patch was sent to Talos, so the machine config may carry the new credential'
    : 'nothing on Talos was changed';

  if (nodeRun.phase === 'read' || !nodeRun.capture) {
    // Nothing of ours is on the node.
    nextStep ??= 'Nothing on the node was changed by this run; fix the cause and rerun.';
  } else if (nodeRun.phase === 'claiming') {
    // The claim may or may not have landed and nothing could read the node: stay `claiming` (already
    // published), keep the Lease, and let the post step read the node and release what landed.
    nextStep = claimUnknownNextStep(ctx, nodeRun);
  } else {
    const disposition = stop.opts.disposition ?? defaultDisposition(nodeRun);
    if (disposition === 'release') {
      try {
        // a lost answer is judged by a re-read, a failure that passes tried again: the one writer
        // (src/pipeline/write.ts), as for the verified release
        await nodeRun.step(STEP.releaseRestore, () =>
          releaseNode({ ...ctx, keptMark: (line) => nodeRun.markKept(line) }, nodeRun.capture!, ctx.keys, (c) =>
            buildReleasePatch(c, ctx.keys, {}),
          ),
        );
        nodeRun.released(false);
        nextStep ??= `The claim was released (the cordon state restored); ${talos}. Fix the cause and rerun.`;
      } catch (error) {
        // The node stays in the phase it is in (already published): the post step tries the same
        // CAS-guarded release again for `claimed` and `draining`, and leaves any other phase fenced.
        releaseError = { error };
        nextStep =
          `The node may still carry this run's claim and stay cordoned; ${talos}. Check \`kubectl get node ${nodeRun.node.name} -o yaml\` ` +
          `(was it re-created?) and, if it still carries this run's claim, release it: ${nodeRun.releaseCommand()}`;
      }
    } else if (disposition === 'quarantine') {
      const done = await quarantineNode(ctx, nodeRun, stop.opts.quarantine ?? { blockers: [], drainTimeout: '', why: stop.message });
      nextStep = done.nextStep;
      if (!done.ok) failedQuarantine = { error: done.error };
    } else if (disposition === 'leave-as-set') {
      nodeRun.enter('left-as-set');
      nextStep = `${stop.opts.nextStep ? `${stop.opts.nextStep} ` : ''}${leftAsSetReport({
        capture: nodeRun.capture,
        now: stop.opts.seen,
        keys: ctx.keys,
        config: ctx.config,
        talosChanged: nodeRun.talosTouched,
        leaseKept: leftAsSetKeepsLease(nodeRun.stoppedInPhase),
      })}`;
    } else {
      nodeRun.enter('left-fenced');
      nextStep = stop.opts.nextStep ?? fencedNext(nodeRun);
    }
  }
  const recorded = releaseError
    ? new ReleaseFailedStop(stop, releaseError.error, nextStep)
    : failedQuarantine
      ? new NodeStop(
          'failed',
          `${stop.opts.quarantine?.why ?? stop.message}; quarantining it failed: ${errorMessage(failedQuarantine.error)}`,
          { ...stop.opts, nextStep },
          { cause: stop },
        )
      : new NodeStop(stop.outcome, stop.message, { ...stop.opts, nextStep }, { cause: stop });
  nodeRun.recordStop({ outcome: recorded.outcome, message: recorded.message, nextStep: recorded.opts.nextStep });
  return recorded;
}

/** What to check on a node left fenced, and how to release it (one builder: src/rules/commands.ts). */
function fencedNext(nodeRun: NodeRun): string {
  return fencedNextStep({ node: nodeRun.node.name, address: nodeRun.address, release: nodeRun.releaseCommand() });
}

/** A claim that may be on the node: what the post step will do, and what a person does if it cannot. */
function claimUnknownNextStep(ctx: RunContext, nodeRun: NodeRun): string {
  const name = nodeRun.node.name;
  return (
    `The claim may be on the node (cordoned, ${ctx.keys.owner}=${nodeRun.capture!.owner}, ${ctx.keys.phase}=claimed); nothing on Talos was changed, and the run Lease is kept. ` +
    `The post step reads the node and releases the claim if it landed. If it cannot, ${unknownClaimCheck(name, ctx.keys, releaseCommand(nodeRun.capture!, ctx.keys, ctx.config, 'claimed'))}`
  );
}

/**
 * The post-reboot proof decides the node's fate here, next to stopNode, so release vs leave has one
 * home (rules: src/rules/proof.ts):
 * - proven: continue to verify-image (when set) and the verified release;
 * - undecided: continue too; the record says what could not be proven. With `verify-image` containerd
 *   itself settles it (a failed pull then stops the node, left fenced); without it the node is released
 *   with a warning that names the residual risk;
 * - failed (contradicted, or not read): stop, the node is left fenced for a person.
 */
export function settleProof(ctx: RunContext, nodeRun: NodeRun, proof: EvidenceVerdict): void {
  const judged = judgeProof(proof);
  if (judged.kind === 'proven') return;
  const hosts = nodeRun.desired.map((d) => d.host).join(', ');
  if (judged.kind === 'failed') {
    throw new NodeStop(
      'failed',
      `after the reboot (a new boot) the evidence ${proof.contradicts ? 'contradicts that' : 'does not prove'} containerd loaded the desired credential for ${hosts}: ${proof.reason}`,
      { disposition: 'leave-fenced' },
    );
  }
  nodeRun.recordProofUndecided(
    ctx.config.verifyImage
      ? { unproven: judged.unproven, settledBy: 'verify-image', residualRisk: residualRisk(hosts) }
      : {
          unproven: judged.unproven,
          settledBy: 'warning',
          residualRisk: residualRisk(hosts),
          nextStep:
            `To prove it, let containerd pull a private image of ${hosts} on the node: set verify-image and rerun ` +
            `(its verified marker records the proof as undecided, so a run with nothing to roll proves ${nodeRun.node.name} by a pull, ` +
            `with no drain and no reboot; until then old-credential-revocable stays false).`,
        },
  );
  ctx.log.info(
    `⚠ ${nodeRun.node.name}: the post-reboot proof is undecided (${judged.unproven}); ` +
      (ctx.config.verifyImage
        ? `proving it by pulling ${ctx.config.verifyImage} through containerd`
        : `releasing it with a warning: ${residualRisk(hosts)}`),
  );
}
