// One node's run: its phase (the single record of how far the run got with it), its decision
// record, what it holds (the claim's capture, whether Talos may carry the change), and the set of
// the runs of one action run, which the post step's state is published from. Everything here is
// written only through the methods below, which say what happened (a claim, evidence, a proof, an
// outcome); others read it through read-only views (__tests__/repo/recordOwner.test.ts checks the
// record). What a stop does with a node is src/pipeline/stop.ts.
import { errorMessage } from '../core/errors.js';
import type { HostToRoll } from '../core/model/hosts.js';
import type { ClaimCapture, NodeState } from '../core/model/node.js';
import type { HeldNode, NodePhase } from '../core/model/phase.js';
import type { DecisionRecord, ProofUndecided, QuarantineNote, StepRecord } from '../core/model/record.js';
import type { DesiredCredential } from '../core/model/credential.js';
import type { EvidenceVerdict } from '../core/model/verdict.js';
import { foundMarkNotes } from '../rules/autoscalerMarks.js';
import { releaseCommand } from '../rules/commands.js';
import { keptCordonReason, leftAsSetKeepsLease } from '../rules/release.js';
import type { RunContext } from './context.js';

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
  #capture?: ClaimCapture;
  #talosTouched = false;
  #desired: readonly DesiredCredential[];
  #drained = false;
  #marksFound: string[] = [];
  #marksKept: string[] = [];
  #refusedBeforeStart = false;
  readonly address: string;

  constructor(
    readonly node: NodeState,
    private readonly ctx: RunContext,
    private readonly onPhase: () => void,
  ) {
    this.t0 = ctx.clock.now();
    this.address = node.internalIPs[0] ?? '';
    this.#desired = ctx.desired;
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

  /** what the claim holds on the node (its capture), once a claim was sent */
  get capture(): ClaimCapture | undefined {
    return this.#capture;
  }

  /** true once the credential patch was sent: from then on Talos may carry this run's change */
  get talosTouched(): boolean {
    return this.#talosTouched;
  }

  /** the hosts (with their credentials) this node's roll is for: the evidence and the proof judge these; every host of the run until rollFor */
  get desired(): readonly DesiredCredential[] {
    return this.#desired;
  }

  /** 3.1 the node is rolled for these hosts (src/rules/marker.ts hostsToRoll), each with why */
  rollFor(hosts: readonly HostToRoll[]): void {
    const names = new Set(hosts.map((h) => h.host));
    this.#desired = this.ctx.desired.filter((d) => names.has(d.host));
    this.#record.hosts = hosts.map((h) => ({ ...h }));
  }

  /** 3.2 a claim PATCH is about to be sent with `capture`: from now on it may be on the node (published as `claiming`) */
  claimSending(capture: ClaimCapture): void {
    this.#capture = capture;
    this.enter('claiming');
  }

  /** 3.2 this run's claim is on the node, as `capture` holds it (landed, or landed and then refused) */
  claimHeld(capture: ClaimCapture): void {
    this.#capture = capture;
    const found = foundMarkNotes(this.node.name, capture.marksFound);
    for (const line of found.filter((l) => !this.#marksFound.includes(l))) this.ctx.log.info(`${this.node.name}: ${line}`);
    this.#marksFound = found;
    this.recordMarks();
    this.enter('claimed');
  }

  /** a release left an autoscaler mark the claim wrote in place: someone changed it, or the record, during the hold (src/pipeline/autoscalerMarks.ts) */
  markKept(line: string): void {
    if (this.#marksKept.includes(line)) return;
    this.#marksKept.push(line);
    this.recordMarks();
  }

  private recordMarks(): void {
    if (this.#marksFound.length + this.#marksKept.length > 0)
      this.#record.autoscalerMarks = { found: [...this.#marksFound], kept: [...this.#marksKept] };
    else delete this.#record.autoscalerMarks;
  }

  /** 3.2 the claim landed: how many attempts it took and what it retried after */
  recordClaim(claim: { attempts: number; conflicts: string[] }): void {
    this.#record.claim = { attempts: claim.attempts, conflicts: claim.conflicts };
  }

  /** 3.5 the credential patch is about to be sent to Talos */
  touchTalos(): void {
    this.#talosTouched = true;
  }

  /** 3.7 the drain finished: the node is drained, and stays in `draining` until the reboot is sent */
  drainDone(): void {
    this.#drained = true;
    this.onPhase();
  }

  /** 3.3 the evidence read before the credential patch */
  recordEvidence(before: EvidenceVerdict): void {
    this.#record.evidence = before;
  }

  /** the evidence read after the patch (Talos restarting cri) or after the reboot */
  recordProof(proof: EvidenceVerdict): void {
    this.#record.proof = proof;
  }

  /** the post-reboot proof was undecided and how the run settles it (only settleProof, src/pipeline/stop.ts) */
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

  /** a stop as stopNode carried it out (src/pipeline/stop.ts): refused or failed, why, and what a person does next */
  recordStop(stop: { outcome: 'refused' | 'failed' | 'quarantined'; message: string; nextStep: string | undefined }): void {
    this.#record.outcome = stop.outcome;
    this.#record.reason = stop.message;
    this.#record.nextStep = stop.nextStep;
  }

  /**
   * a start check refused the node (src/core/model/startCheck.ts `refuse`): it was not started, nothing
   * on it was changed; the record says why and what a person does next
   */
  refusedBeforeStart(refusal: { message: string; nextStep: string }): void {
    this.#refusedBeforeStart = true;
    this.recordStop({ outcome: 'refused', message: refusal.message, nextStep: refusal.nextStep });
  }

  /** true when a start check refused the node: its record counts although the node was never started */
  get refused(): boolean {
    return this.#refusedBeforeStart;
  }

  /** the node was quarantined (src/pipeline/quarantine.ts, for stopNode): what blocked its drain and how to lift it */
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

  /**
   * The release landed (verified: with the marker; otherwise the claim given back as found): the node is
   * released, and the record says why it stays cordoned when it does (src/rules/release.ts).
   */
  released(verified: boolean): void {
    const why = this.#capture ? keptCordonReason(this.#capture, this.ctx.keys, verified) : undefined;
    if (why) this.#record.cordonKept = why;
    this.enter('released');
  }

  /** Move to `phase` and publish it (the post step acts on the last published phase). */
  enter(phase: NodePhase): void {
    if (LEFT.has(phase)) this.stoppedIn = this.current;
    this.current = phase;
    this.onPhase();
  }

  /** What the post step needs, while this run holds (or left) the node. */
  held(): HeldNode | undefined {
    if (NOT_HELD.has(this.current) || !this.#capture) return undefined;
    const held: HeldNode = { node: this.node.name, phase: this.current, capture: this.#capture, owner: this.#capture.owner };
    if (this.stoppedIn) held.stoppedIn = this.stoppedIn;
    if (this.#drained) held.drained = true;
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
    return this.#capture ? releaseCommand(this.#capture, this.ctx.keys, this.ctx.config) : '';
  }
}

/** The NodeRuns of one action run: the set the post step's state is published from. */
export class NodeRuns {
  readonly all = new Set<NodeRun>();
  constructor(private readonly ctx: RunContext) {}

  /** `ctx` is the node's own view of the run context (its log) */
  start(node: NodeState, ctx: RunContext = this.ctx): NodeRun {
    const nodeRun = new NodeRun(node, ctx, () => this.publish());
    this.all.add(nodeRun);
    return nodeRun;
  }

  held(): HeldNode[] {
    return [...this.all].map((r) => r.held()).filter((h): h is HeldNode => !!h);
  }

  /** Some node is held, may be held, or left for a person (NodeRun.keepsLease): the Lease stays with this run so nobody starts over it. */
  anyLeft(): boolean {
    return [...this.all].some((r) => r.keepsLease());
  }

  records(): DecisionRecord[] {
    return [...this.all].filter((r) => r.phase !== 'read' || r.record.steps.length > 0 || r.refused).map((r) => r.record);
  }

  private publish(): void {
    this.ctx.publishHeld?.(this.held());
  }
}
