// One node's run: its phase (the single record of how far the run got with it), its decision record,
// and the one function every stop goes through to decide release vs leave and say what to do next.
// The record has one writer: the methods below say what happened (a claim, evidence, a proof, an
// outcome) and others read it through a read-only view (__tests__/repo/recordOwner.test.ts checks).
import { errorMessage } from '../core/errors.js';
import type {
  ClaimCapture,
  DecisionRecord,
  DrainBlocker,
  EvidenceVerdict,
  HeldNode,
  NodePhase,
  NodeState,
  ProofUndecided,
  QuarantineNote,
  StepRecord,
} from '../core/model.js';
import { STEP } from '../core/steps.js';
import { fencedNextStep, leftAsSetReport, releaseCommand, unknownClaimCheck } from '../rules/commands.js';
import { judgeProof, residualRisk } from '../rules/proof.js';
import { buildQuarantinePatch, formatQuarantine, liftNextStep, liftQuarantine, quarantineRecord } from '../rules/quarantine.js';
import { buildReleasePatch, leftAsSetKeepsLease, releaseShows } from '../rules/release.js';
import type { RunContext } from './context.js';
import { patchNodeSurvivingTransport } from './transport.js';

/**
 * Phases in which nothing of this run is on the node any more (or never was). A `quarantined` node
 * keeps no claim (the quarantine patch removed it) and so keeps no Lease: everything a later run or a
 * person needs is written on the node, and the next run, which needs the Lease, is how it is lifted.
 */
const NOT_HELD: ReadonlySet<NodePhase> = new Set<NodePhase>(['read', 'released', 'quarantined']);
/** Phases in which the run is over for the node and it stays as it is for a person. */
export const LEFT: ReadonlySet<NodePhase> = new Set<NodePhase>(['left-fenced', 'left-as-set']);

export class NodeRun {
  readonly #record: DecisionRecord;
  private readonly t0: number;
  private current: NodePhase = 'read';
  private stoppedIn?: NodePhase;
  capture?: ClaimCapture;
  /** set just before the credential patch is sent: from then on Talos may carry this run's change */
  talosTouched = false;
  readonly address: string;

  constructor(
    readonly node: NodeState,
    private readonly ctx: RunContext,
    private readonly onPhase: () => void,
  ) {
    this.t0 = ctx.clock.now();
    this.address = node.internalIPs[0] ?? '';
    this.#record = {
      node: node.name,
      uid: node.uid,
      role: node.role,
      internalIP: this.address,
      outcome: 'failed',
      reason: '',
      steps: [],
      durationMs: 0,
      startedAt: new Date(this.t0).toISOString(),
    };
  }

  /** The decision record as it stands, read-only: only the methods of this class write it. */
  get record(): Readonly<DecisionRecord> {
    return this.#record;
  }

  /** 3.2 the claim landed: how many attempts it took and what it retried after */
  recordClaim(claim: { attempts: number; conflicts: string[] }): void {
    this.#record.claim = { attempts: claim.attempts, conflicts: claim.conflicts };
  }

  /** 3.3 the evidence read before the credential patch */
  recordEvidence(before: EvidenceVerdict): void {
    this.#record.evidence = before;
  }

  /** the evidence read after the patch (Talos restarting cri) or after the reboot */
  recordProof(proof: EvidenceVerdict): void {
    this.#record.proof = proof;
  }

  /** the post-reboot proof was undecided and how the run settles it (only settleProof, below) */
  recordProofUndecided(undecided: ProofUndecided): void {
    this.#record.proofUndecided = undecided;
  }

  /** the credential is loaded without a reboot, for `reason` */
  recordSkip(reason: string): void {
    this.#record.outcome = 'reboot-skipped';
    this.#record.reason = reason;
  }

  /** the node was rebooted: why (the evidence before, or reboot: always) and what proved it afterwards */
  recordRebooted(before: EvidenceVerdict | undefined, verifyImage: string | undefined): void {
    this.#record.outcome = 'rebooted';
    this.#record.reason = `${before ? before.reason : 'reboot: always was requested'}; after the reboot, ${this.proofReason(verifyImage)}`;
  }

  /** The proof part of a rebooted node's reason: what proved it, or what could not be proven and how it was settled. */
  private proofReason(verifyImage: string | undefined): string {
    const u = this.#record.proofUndecided;
    if (!u) return this.#record.proof?.reason ?? 'no proof was read';
    const settled =
      u.settledBy === 'verify-image'
        ? `proven instead by pulling ${verifyImage} through containerd`
        : `released with a warning (no verify-image): ${u.residualRisk}`;
    return `the proof is undecided: ${u.unproven}; ${settled}`;
  }

  /** a stop as stopNode carried it out: refused or failed, why, and what a person does next (only stopNode, below) */
  recordStop(stop: NodeStop): void {
    this.#record.outcome = stop.outcome;
    this.#record.reason = stop.message;
    this.#record.nextStep = stop.opts.nextStep;
  }

  /** the node was quarantined (only stopNode, below): what blocked its drain and how to lift it */
  recordQuarantine(note: QuarantineNote): void {
    this.#record.quarantine = note;
  }

  /** stopNode itself failed (it should not): the node failed, and the reason adds what went wrong to what it had */
  recordStopFailed(e: unknown): void {
    this.#record.outcome = 'failed';
    this.#record.reason = `${this.#record.reason ? `${this.#record.reason}; ` : ''}${errorMessage(e)}`;
  }

  get phase(): NodePhase {
    return this.current;
  }

  /** for a node left: the phase it was in when the run stopped on it */
  get stoppedInPhase(): NodePhase | undefined {
    return this.stoppedIn;
  }

  /** Move to `phase` and publish it (the post step acts on the last published phase). */
  enter(phase: NodePhase): void {
    if (LEFT.has(phase)) this.stoppedIn = this.current;
    this.current = phase;
    this.onPhase();
  }

  /** What the post step needs, while this run holds (or left) the node. */
  held(): HeldNode | undefined {
    if (NOT_HELD.has(this.current) || !this.capture) return undefined;
    const held: HeldNode = { node: this.node.name, phase: this.current, capture: this.capture, owner: this.capture.owner };
    if (this.stoppedIn) held.stoppedIn = this.stoppedIn;
    return held;
  }

  async step<T>(name: string, fn: () => Promise<T>, detail?: (v: T) => string | undefined): Promise<T> {
    const start = this.ctx.clock.now();
    const s: StepRecord = { name, startedAt: new Date(start).toISOString(), durationMs: 0, ok: false };
    this.#record.steps.push(s);
    if (this.ctx.log.progress) this.ctx.log.progress(`▶ ${name}`);
    else this.ctx.log.info(`▶ ${name}`);
    try {
      const v = await fn();
      s.ok = true;
      const d = detail?.(v);
      if (d) s.detail = d;
      return v;
    } catch (e) {
      s.detail = errorMessage(e).split('\n')[0];
      throw e;
    } finally {
      s.durationMs = this.ctx.clock.now() - start;
    }
  }

  /** The node's run ended: stamp how long it took and when it ended. Returns the record, now complete. */
  finish(): Readonly<DecisionRecord> {
    const end = this.ctx.clock.now();
    this.#record.durationMs = end - this.t0;
    this.#record.endedAt = new Date(end).toISOString();
    return this.#record;
  }

  /**
   * Whether the run Lease must stay with this run for this node: while it holds the node or may hold it
   * (`claiming`), and when it left it fenced. A node left as another actor set it keeps the Lease only
   * when the run had reached phase=mutating on it (leftAsSetKeepsLease).
   */
  keepsLease(): boolean {
    if (!this.held()) return false;
    return this.current !== 'left-as-set' || leftAsSetKeepsLease(this.stoppedIn);
  }

  /** The release command a person runs for this node (only meaningful once claimed). */
  releaseCommand(): string {
    return this.capture ? releaseCommand(this.capture, this.ctx.keys, this.ctx.config) : '';
  }

  /** What to check on a node left fenced, and how to release it. */
  fencedNextStep(): string {
    return fencedNextStep({ node: this.node.name, address: this.address, release: this.releaseCommand() });
  }
}

/**
 * What a stop asks for the node:
 * - `release`: give it back (restoring its cordon state, no verified-revision). Only when nothing this
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
      quarantine?: { blockers: DrainBlocker[]; drainTimeout: string; why: string };
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
        // a lost answer is resolved by re-reading the node, as for the verified release
        await nodeRun.step(STEP.releaseRestore, () =>
          patchNodeSurvivingTransport(ctx, nodeRun.node.name, buildReleasePatch(nodeRun.capture!, ctx.keys, {}), (n) =>
            releaseShows(n, nodeRun.capture!, ctx.keys, {}),
          ),
        );
        nodeRun.enter('released');
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
      const done = await quarantine(ctx, nodeRun, stop);
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
      nextStep = stop.opts.nextStep ?? nodeRun.fencedNextStep();
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
  nodeRun.recordStop(recorded);
  return recorded;
}

/**
 * The quarantine patch (src/rules/quarantine.ts buildQuarantinePatch), surviving a lost response. On
 * success the node is `quarantined`: nothing of the claim is left on it, so it keeps no Lease and the
 * post step has nothing to do for it. When the patch does not land (a `test` failed: someone changed
 * the node; or the apiserver stayed unreachable) the node is left fenced, claimed and cordoned, for a
 * person, and the node counts as failed: it is never uncordoned by this path.
 */
async function quarantine(
  ctx: RunContext,
  nodeRun: NodeRun,
  stop: NodeStop,
): Promise<{ ok: true; nextStep: string } | { ok: false; error: unknown; nextStep: string }> {
  const capture = nodeRun.capture!;
  const q = stop.opts.quarantine ?? { blockers: [], drainTimeout: '', why: stop.message };
  const record = quarantineRecord({
    capture,
    drainTimeout: q.drainTimeout,
    blockedBy: q.blockers,
    atMs: ctx.clock.now(),
    run: ctx.owner,
  });
  const text = formatQuarantine(record);
  try {
    await nodeRun.step(STEP.quarantine, () =>
      patchNodeSurvivingTransport(
        ctx,
        nodeRun.node.name,
        buildQuarantinePatch(capture, ctx.keys, record),
        (n) => n.annotations[ctx.keys.owner] === undefined && n.annotations[ctx.keys.quarantined] === text,
      ),
    );
  } catch (error) {
    nodeRun.enter('left-fenced');
    return {
      ok: false,
      error,
      nextStep:
        `The drain timed out and quarantining the node failed, so it is left cordoned and claimed (phase=mutating), not rebooted; ` +
        `its running containerd still holds the old credential. Check \`kubectl get node ${nodeRun.node.name} -o yaml\` (did someone change it?); ` +
        `fix what blocked the drain, then release it: ${nodeRun.releaseCommand()} and rerun.`,
    };
  }
  nodeRun.enter('quarantined');
  const lift = liftQuarantine(nodeRun.node, record, text, ctx.keys, ctx.config);
  nodeRun.recordQuarantine({ blockers: q.blockers, ...lift });
  return { ok: true, nextStep: liftNextStep(lift) };
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
  if (judged.kind === 'failed') {
    throw new NodeStop(
      'failed',
      `after the reboot (a new boot) the evidence ${proof.contradicts ? 'contradicts that' : 'does not prove'} containerd loaded the desired credential for ${ctx.desired.host}: ${proof.reason}`,
      { disposition: 'leave-fenced' },
    );
  }
  nodeRun.recordProofUndecided(
    ctx.config.verifyImage
      ? { unproven: judged.unproven, settledBy: 'verify-image', residualRisk: residualRisk(ctx.desired.host) }
      : {
          unproven: judged.unproven,
          settledBy: 'warning',
          residualRisk: residualRisk(ctx.desired.host),
          nextStep:
            `To prove it, let containerd pull a private image of ${ctx.desired.host} on the node: set verify-image, remove the marker ` +
            `(\`kubectl annotate node ${nodeRun.node.name} ${ctx.keys.verifiedRevision}-\`) and rerun.`,
        },
  );
  ctx.log.info(
    `⚠ ${nodeRun.node.name}: the post-reboot proof is undecided (${judged.unproven}); ` +
      (ctx.config.verifyImage
        ? `proving it by pulling ${ctx.config.verifyImage} through containerd`
        : `releasing it with a warning: ${residualRisk(ctx.desired.host)}`),
  );
}
