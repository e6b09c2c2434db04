// The pipeline: the numbered steps of a roll, in order. Sequencing only: the rules decide
// (src/rules), the adapters run commands (src/adapters), the report renders (src/report).
import type { KubeClient, TalosClient } from './adapters/types.js';
import type { Config } from './config.js';
import { InputError, RolloutError, ToolError } from './errors.js';
import type {
  AnnotationKeys,
  ClaimCapture,
  DecisionRecord,
  DesiredCredential,
  EvidenceReadings,
  EvidenceVerdict,
  JsonPatchOp,
  NodeState,
  Reading,
  StepRecord,
} from './model.js';
import { readEvidence } from './readEvidence.js';
import {
  buildClaimPatch,
  buildPhasePatch,
  captureClaim,
  checkGuard,
  claimBackoffMs,
  judgeClaimRejection,
  lifecycleTaints,
} from './rules/claim.js';
import { isTalosAtLeast, rebootEvidence } from './rules/evidence.js';
import { identityChanges, selectNodes, validateInventory } from './rules/inventory.js';
import { quorumGate } from './rules/quorum.js';
import { buildReleasePatch } from './rules/release.js';
import { releaseCommand } from './recovery.js';
import { verifyImage } from './verifyImage.js';

export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
  random(): number;
}

export const realClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
  random: () => Math.random(),
};

export interface RolloutLog {
  info(message: string): void;
  /** start of a node's log group; the returned function ends it */
  group(title: string): () => void;
}

/**
 * Where the run records which node it holds and how far it got (the post step reads it).
 * Finer than the `phase` annotation: `draining` means the credential patch was applied but the
 * reboot never started, so the post step may restore the node exactly as a failed drain does;
 * `mutating` and `rebooting` leave it fenced.
 */
export type HoldPhase = 'claimed' | 'mutating' | 'draining' | 'rebooting';
export type HoldingSink = (holding: { node: string; phase: HoldPhase; capture: ClaimCapture } | undefined) => void;

export interface RolloutDeps {
  kube: KubeClient;
  talos: TalosClient;
  config: Config;
  desired: DesiredCredential;
  /** this run's claim token */
  owner: string;
  keys: AnnotationKeys;
  clock?: Clock;
  log?: RolloutLog;
  /** interval of the post-reboot and probe polls */
  pollIntervalMs?: number;
  holding?: HoldingSink;
  /** true once the runner was cancelled: no new step starts */
  cancelled?: () => boolean;
  /** the run-wide Lease (apply mode); acquired before the first mutation */
  lock?: RunLockLike;
  /** pause between the two empty listings that end a run (an autoscaler node may still register) */
  relistPauseMs?: number;
}

/** What the rollout needs of src/lease.ts's RunLock (a narrow port, so tests can pass a fake). */
export interface RunLockLike {
  /** read-only: throws when another run holds the Lease */
  checkNotHeldByAnother(): Promise<void>;
  acquire(): Promise<void>;
  startRenewing(): void;
  /** throws when another run took the Lease or renewals kept failing past its duration */
  assertHeld(): void;
  release(): Promise<{ released: boolean; message: string }>;
  stop(): void;
}

export interface RolloutResult {
  result: 'clean' | 'processed' | 'planned' | 'failed';
  records: DecisionRecord[];
  /** selected nodes the roll did not reach because it stopped earlier */
  notReached: string[];
  upToDate: string[];
  error?: Error;
}

const silentLog: RolloutLog = { info: () => undefined, group: () => () => undefined };

/** A refusal or failure that stops the roll; `outcome` says which. */
export class NodeStop extends Error {
  constructor(
    readonly outcome: 'refused' | 'failed',
    message: string,
    readonly nextStep: string,
    readonly leftFenced: boolean,
    /** set by the claim: a genuine conflict, or claim-attempts exhausted by benign changes */
    readonly claimFailure?: 'conflict' | 'exhausted',
  ) {
    super(message);
  }
}

/** List, validate the inventory and select the nodes a pass rolls, in roll order. */
async function listAndSelect(deps: RolloutDeps): Promise<{ selected: NodeState[]; upToDate: string[] }> {
  const { kube, config, keys } = deps;
  // Every node must be identifiable and none may carry a leftover claim.
  const inventory = await kube.listNodes();
  const problems = validateInventory(inventory, keys);
  if (problems.length > 0) {
    throw new InputError('nodes', `the cluster's node inventory is not safe to roll, nothing was changed:\n- ${problems.join('\n- ')}`);
  }
  const selectorMatches = config.nodeSelector ? new Set((await kube.listNodes(config.nodeSelector)).map((n) => n.name)) : undefined;
  const selection = selectNodes(inventory, {
    names: config.nodes.length ? config.nodes : undefined,
    selectorMatches,
    revision: config.revision,
    keys,
  });
  if (selection.unknownNames.length > 0) {
    throw new InputError('nodes', `no such node: ${selection.unknownNames.join(', ')}`);
  }
  return { selected: selection.selected, upToDate: selection.upToDate };
}

/** How many listings after the first pass may still find work (an autoscaler keeps adding nodes). */
const MAX_EXTRA_PASSES = 5;

export async function runRollout(deps: RolloutDeps): Promise<RolloutResult> {
  const clock = deps.clock ?? realClock;
  const log = deps.log ?? silentLog;
  const { config } = deps;

  // Another run's claim on a node would read as a residual claim below; when that run still holds
  // the Lease, say so (who, and the URL of its run) instead.
  if (config.mode === 'apply') await deps.lock?.checkNotHeldByAnother();

  // 1–2. Inventory and selection.
  const first = await listAndSelect(deps);
  if (first.selected.length === 0) return { result: 'clean', records: [], notReached: [], upToDate: first.upToDate };
  log.info(`${first.selected.length} node(s) to roll: ${first.selected.map((n) => n.name).join(', ')}`);

  if (config.mode === 'plan') {
    const records = await planNodes(deps, first.selected, clock);
    return { result: 'planned', records, notReached: [], upToDate: first.upToDate };
  }

  // One run at a time: the Lease is taken before the first mutation and refused when held by
  // another run, expired or not (src/rules/lease.ts says why time alone never hands it over).
  if (deps.lock) {
    await deps.lock.acquire();
    deps.lock.startRenewing();
  }
  let result: RolloutResult;
  try {
    result = await rollPasses(deps, first, clock, log);
  } finally {
    deps.lock?.stop();
  }
  if (deps.lock) {
    // A node left fenced (phase=mutating) keeps the Lease held: nobody should start another roll
    // until a person has looked at it (recover-fences releases it once this run is completed).
    const fenced = result.error instanceof RolloutError && result.error.leftFenced;
    if (!fenced) {
      const released = await deps.lock
        .release()
        .catch((e: unknown) => ({ released: false, message: e instanceof Error ? e.message : String(e) }));
      log.info(`run Lease: ${released.message}`);
    } else {
      log.info('run Lease: kept, because a node of this run is left fenced (phase=mutating)');
    }
  }
  return result;
}

/**
 * 3. Roll the selected nodes, then list again: nodes that became stale or appeared meanwhile (an
 * autoscaler scale-out) are rolled in a further pass. The run ends when two consecutive listings
 * select nothing new, or after MAX_EXTRA_PASSES listings. A node processed in this run (by uid) is
 * never rolled twice, whatever its annotations say.
 */
async function rollPasses(
  deps: RolloutDeps,
  first: { selected: NodeState[]; upToDate: string[] },
  clock: Clock,
  log: RolloutLog,
): Promise<RolloutResult> {
  const records: DecisionRecord[] = [];
  const done = new Set<string>();
  let pass = first;
  let emptyListings = 0;
  for (let extra = 0; ;) {
    const todo = pass.selected.filter((n) => !done.has(n.uid));
    if (todo.length > 0) {
      emptyListings = 0;
      await prefetchVersions(deps, todo);
      if (extra > 0) log.info(`listing again found ${todo.length} more node(s) to roll: ${todo.map((n) => n.name).join(', ')}`);
      const stopped = await rollNodes(deps, todo, clock, log, records, done);
      if (stopped) return { ...stopped, upToDate: first.upToDate };
    } else {
      emptyListings++;
    }
    if (emptyListings >= 2 || extra >= MAX_EXTRA_PASSES || deps.cancelled?.()) break;
    if (emptyListings === 1 && deps.relistPauseMs) await clock.sleep(deps.relistPauseMs);
    extra++;
    pass = await listAndSelect(deps);
  }
  return { result: 'processed', records, notReached: [], upToDate: first.upToDate };
}

/** Roll `selected` one at a time; returns the failed result when a node stops the roll. */
async function rollNodes(
  deps: RolloutDeps,
  selected: NodeState[],
  clock: Clock,
  log: RolloutLog,
  records: DecisionRecord[],
  done: Set<string>,
): Promise<RolloutResult | undefined> {
  for (const [i, node] of selected.entries()) {
    if (deps.cancelled?.()) {
      return {
        result: 'failed',
        records,
        notReached: selected.slice(i).map((n) => n.name),
        upToDate: [],
        error: new Error('the run was cancelled; no further node was started'),
      };
    }
    done.add(node.uid);
    const endGroup = log.group(`${node.name} (${node.role})`);
    const run = new NodeRun(node, clock, log);
    try {
      await rollNode(deps, run, clock);
      records.push(run.finish());
    } catch (e) {
      const stop = e instanceof NodeStop ? e : asStop(e, run);
      run.record.outcome = stop.outcome;
      run.record.reason = stop.message;
      run.record.nextStep = stop.nextStep;
      records.push(run.finish());
      endGroup();
      return {
        result: 'failed',
        records,
        notReached: selected.slice(i + 1).map((n) => n.name),
        upToDate: [],
        error: new RolloutError(node.name, stop.message, stop.nextStep, stop.leftFenced),
      };
    }
    endGroup();
  }
  return undefined;
}

function asStop(e: unknown, run: NodeRun): NodeStop {
  const message = e instanceof Error ? e.message : String(e);
  if (run.fenced) {
    return new NodeStop('failed', message, run.fencedNextStep(), true);
  }
  return new NodeStop('failed', message, 'Nothing on the node was changed by this step; fix the cause and rerun.', false);
}

/** Per-node bookkeeping: the decision record and step timings. */
class NodeRun {
  readonly record: DecisionRecord;
  private readonly t0: number;
  capture?: ClaimCapture;
  /** true from `phase=mutating` on: the node may no longer be released blindly */
  fenced = false;
  address: string;
  fencedNextStep: () => string = () => '';

  constructor(
    readonly node: NodeState,
    private readonly clock: Clock,
    private readonly log: RolloutLog,
  ) {
    this.t0 = clock.now();
    this.address = node.internalIPs[0] ?? '';
    this.record = {
      node: node.name,
      uid: node.uid,
      role: node.role,
      internalIP: this.address,
      outcome: 'failed',
      reason: '',
      steps: [],
      durationMs: 0,
    };
  }

  async step<T>(name: string, fn: () => Promise<T>, detail?: (v: T) => string | undefined): Promise<T> {
    const start = this.clock.now();
    const s: StepRecord = { name, startedAt: new Date(start).toISOString(), durationMs: 0, ok: false };
    this.record.steps.push(s);
    this.log.info(`▶ ${name}`);
    try {
      const v = await fn();
      s.ok = true;
      const d = detail?.(v);
      if (d) s.detail = d;
      return v;
    } catch (e) {
      s.detail = e instanceof Error ? e.message.split('\n')[0] : String(e);
      throw e;
    } finally {
      s.durationMs = this.clock.now() - start;
    }
  }

  finish(): DecisionRecord {
    this.record.durationMs = this.clock.now() - this.t0;
    return this.record;
  }
}

async function planNodes(deps: RolloutDeps, selected: NodeState[], clock: Clock): Promise<DecisionRecord[]> {
  const t0 = clock.now();
  const targets = selected.map((n) => ({ name: n.name, address: n.internalIPs[0] }));
  const readings =
    deps.config.reboot === 'always'
      ? new Map<string, EvidenceReadings>()
      : await readEvidence(deps.talos, targets, deps.config.criConfigPaths);
  const elapsed = clock.now() - t0;
  return selected.map((n) => {
    const r = readings.get(n.name);
    const evidence = r ? rebootEvidence(r, deps.desired, { marginMs: deps.config.evidenceMarginMs }) : undefined;
    const record: DecisionRecord = {
      node: n.name,
      uid: n.uid,
      role: n.role,
      internalIP: n.internalIPs[0],
      outcome: evidence?.verdict === 'skip' ? 'planned-skip' : 'planned-reboot',
      reason: evidence ? evidence.reason : 'reboot: always was requested, so every selected node is rebooted',
      steps: [],
      durationMs: elapsed,
    };
    if (evidence) {
      record.evidence = evidence;
      const v = evidence.values.talosVersion;
      if (evidence.verdict === 'reboot' && v && isTalosAtLeast(v, 1, 14)) {
        record.reason = `${evidence.reason}; Talos ${v} restarts cri itself after the patch, so the reboot is skipped if a new containerd start proves the credential within cri-restart-wait`;
      }
    }
    return record;
  });
}

async function rollNode(deps: RolloutDeps, run: NodeRun, clock: Clock): Promise<void> {
  const { kube, talos, config, keys, owner } = deps;
  const name = run.node.name;
  const address = run.address;

  // 3.1 Fresh read: the node must still be the one the inventory saw.
  const fresh = await run.step('read node', () => kube.getNode(name));
  const changed = identityChanges(run.node, fresh);
  if (changed.length > 0) {
    throw new NodeStop(
      'refused',
      `node changed since the inventory: ${changed.join('; ')}`,
      'Nothing was changed. Rerun the action: it lists the nodes again.',
      false,
    );
  }

  // 3.2 Claim.
  const claim = await run.step(
    'claim',
    () => claimNode(deps, fresh, clock),
    (c) => `attempts ${c.attempts}${c.conflicts.length ? `; retried after: ${c.conflicts.join('; ')}` : ''}`,
  );
  run.record.claim = { attempts: claim.attempts, conflicts: claim.conflicts };
  const capture = claim.capture;
  run.capture = capture;
  deps.holding?.({ node: name, phase: 'claimed', capture });
  run.fencedNextStep = () =>
    `Node ${name} is left cordoned and claimed (phase=mutating). Check it: \`kubectl get node ${name}\`, \`talosctl -n ${address} service cri\`, \`talosctl -n ${address} version\`. ` +
    `When it is healthy, release it: ${releaseCommand(capture, keys, config)}`;

  try {
    // 3.3 Evidence before the patch.
    const before =
      config.reboot === 'always'
        ? undefined
        : await run.step(
            'read reboot evidence',
            () => readOne(deps, name, address),
            (v) => `${v.verdict}: ${v.reason}`,
          );
    if (before) run.record.evidence = before;

    // 3.4 From here on Talos is touched: mark it, so a crash leaves a fence that says so.
    await run.step('phase=mutating', () => {
      beforeMutation(deps);
      return patchNodeSurvivingTransport(
        deps,
        name,
        buildPhasePatch(capture, keys, 'mutating'),
        (n) => n.annotations[keys.owner] === owner && n.annotations[keys.phase] === 'mutating',
      );
    });
    deps.holding?.({ node: name, phase: 'mutating', capture });

    // 3.5 Apply the credential.
    await rebind(deps, run, 'before the credential patch');
    try {
      await run.step('talosctl patch machineconfig', () => {
        beforeMutation(deps);
        return talos.patchMachineConfig(address, config.authPatch);
      });
    } catch (e) {
      // Nothing was drained and containerd still runs as before: uncordoning is safe.
      const msg = e instanceof Error ? e.message : String(e);
      await releaseUnverified(deps, run, capture);
      throw new NodeStop(
        'failed',
        `applying the credential patch failed: ${msg}`,
        `The node was released and is schedulable as before; its machine config may or may not carry the new credential. Check \`talosctl -n ${address} get registryauthconfigs\` (or the machine config) and rerun.`,
        false,
      );
    }
  } catch (e) {
    if (e instanceof NodeStop) throw e;
    // A failure before the patch was sent (phase patch, reading): nothing on Talos changed yet.
    if (!run.fenced) {
      const msg = e instanceof Error ? e.message : String(e);
      const releaseFailure = await releaseUnverified(deps, run, capture).then(
        () => undefined,
        (r: unknown) => (r instanceof Error ? r.message : String(r)),
      );
      if (releaseFailure === undefined) {
        throw new NodeStop('failed', msg, 'The claim was released; nothing on Talos was changed. Fix the cause and rerun.', false);
      }
      throw new NodeStop(
        'failed',
        `${msg}; releasing the claim failed too: ${releaseFailure}`,
        `Nothing on Talos was changed, but the node may still carry this run's claim. Check \`kubectl get node ${name} -o yaml\` (was it re-created?) and release it if it is still ours: ${releaseCommand(capture, keys, config)}`,
        true,
      );
    }
    throw e;
  }
  run.fenced = true;

  // 3.6 Decide.
  const verdict: EvidenceVerdict | undefined = run.record.evidence;
  let skipReason: string | undefined;
  if (config.reboot === 'evidence' && verdict) {
    if (verdict.verdict === 'skip') {
      skipReason = verdict.reason;
    } else if (verdict.values.talosVersion && isTalosAtLeast(verdict.values.talosVersion, 1, 14)) {
      const proof = await run.step(
        `wait for Talos to restart cri (up to ${Math.round(config.criRestartWaitMs / 1000)}s)`,
        () => waitForCriRestart(deps, name, address, clock),
        (v) => `${v.verdict}: ${v.reason}`,
      );
      run.record.proof = proof;
      if (proof.verdict === 'skip') skipReason = `Talos restarted cri after the patch: ${proof.reason}`;
    }
  }

  if (skipReason) {
    run.record.outcome = 'reboot-skipped';
    run.record.reason = skipReason;
  } else {
    await rebootNode(deps, run, capture, clock);
    run.record.outcome = 'rebooted';
    run.record.reason = `${verdict ? verdict.reason : 'reboot: always was requested'}; after the reboot, ${run.record.proof?.reason ?? 'no proof was read'}`;
  }

  // 3.8 Prove the credential through containerd itself.
  if (config.verifyImage) {
    const image = config.verifyImage;
    await run.step(`verify ${image} through containerd`, () =>
      verifyImage({
        kube,
        node: name,
        image,
        namespace: config.verifyNamespace,
        timeoutMs: config.readyTimeoutMs,
        pollMs: deps.pollIntervalMs ?? 2000,
        clock,
        nonce: owner,
      }),
    );
  }

  // 3.9 Release.
  await rebind(deps, run, 'before the release');
  await run.step('release', () =>
    patchNodeSurvivingTransport(
      deps,
      name,
      buildReleasePatch(capture, keys, { verifiedRevision: config.revision }),
      (n) => n.annotations[keys.owner] === undefined && n.annotations[keys.verifiedRevision] === config.revision,
    ),
  );
  deps.holding?.(undefined);
}

/** How long to wait for the apiserver to answer /readyz again after a transport failure. */
const READYZ_WAIT_MS = 120_000;

function isTransport(e: unknown): boolean {
  return e instanceof ToolError && e.kind === 'transport';
}

/** After a transport failure: poll `/readyz` (bounded) until the apiserver answers again. */
async function waitForApiserver(deps: RolloutDeps, run: NodeRun, clock: Clock): Promise<void> {
  await run.step('wait for the apiserver (/readyz)', async () => {
    const deadline = clock.now() + READYZ_WAIT_MS;
    for (;;) {
      try {
        await deps.kube.readyz();
        return;
      } catch (e) {
        if (clock.now() + 1000 > deadline || deps.cancelled?.()) throw e;
        await clock.sleep(1000);
      }
    }
  });
}

/**
 * A node patch whose response may be lost in transit: on a transport failure, re-read the node and
 * go on when our change is visible (`landed`), otherwise send it again, within `attempts`.
 * Only for patches that are CAS-guarded by their own `test` ops, so sending one twice is harmless.
 */
async function patchNodeSurvivingTransport(
  deps: RolloutDeps,
  name: string,
  ops: JsonPatchOp[],
  landed: (n: NodeState) => boolean,
  attempts = 3,
): Promise<NodeState> {
  for (let i = 1; ; i++) {
    try {
      return await deps.kube.patchNode(name, ops);
    } catch (e) {
      if (!isTransport(e) || i >= attempts) throw e;
      const reread = await deps.kube.getNode(name).catch(() => undefined);
      if (reread && landed(reread)) return reread;
    }
  }
}

/**
 * Checked before every mutation that moves the roll forward (claim, phase, Talos patch, drain, reboot):
 * a cancelled run or a lost Lease starts nothing new. Releases are exempt: they only undo this run's
 * own claim (CAS-guarded on our owner token and the uid) and never touch Talos, and leaving the claim
 * would block every later run on a residual claim.
 */
function beforeMutation(deps: Pick<RolloutDeps, 'cancelled' | 'lock'>): void {
  if (deps.cancelled?.()) throw new Error('the run was cancelled; no further mutation was started');
  deps.lock?.assertHeld();
}

/** Talos versions read during this run, by address (see readEvidence's knownVersions). */
const versionCache = new WeakMap<RolloutDeps, Map<string, Reading<string>>>();

/** One batched `talosctl version` for a pass's nodes, instead of one per node; failures are read again later. */
async function prefetchVersions(deps: RolloutDeps, nodes: NodeState[]): Promise<void> {
  if (deps.config.reboot === 'always') return;
  const known = versionCache.get(deps) ?? new Map<string, Reading<string>>();
  versionCache.set(deps, known);
  const addresses = nodes.map((n) => n.internalIPs[0]).filter((a): a is string => !!a && !known.get(a)?.ok);
  if (addresses.length === 0) return;
  const read = await deps.talos.version(addresses).catch(() => new Map<string, Reading<string>>());
  for (const [a, v] of read) if (v.ok) known.set(a, v);
}

async function readOne(deps: RolloutDeps, name: string, address: string): Promise<EvidenceVerdict> {
  const known = versionCache.get(deps) ?? new Map<string, Reading<string>>();
  versionCache.set(deps, known);
  const readings = await readEvidence(deps.talos, [{ name, address }], deps.config.criConfigPaths, known);
  const v = readings.get(name)!.talosVersion;
  if (v.ok) known.set(address, v);
  return rebootEvidence(readings.get(name)!, deps.desired, { marginMs: deps.config.evidenceMarginMs });
}

/**
 * Talos >= 1.14 restarts cri itself when cri.toml changes. The same evidence rule, read again after
 * the patch, proves the new containerd loaded the desired credential; until it does (or the wait ends)
 * we keep polling. Anything short of proof falls back to the reboot.
 */
async function waitForCriRestart(deps: RolloutDeps, name: string, address: string, clock: Clock): Promise<EvidenceVerdict> {
  const deadline = clock.now() + deps.config.criRestartWaitMs;
  const poll = Math.max(500, deps.pollIntervalMs ?? 2000);
  let last: EvidenceVerdict | undefined;
  for (;;) {
    last = await readOne(deps, name, address);
    if (last.verdict === 'skip') return last;
    if (clock.now() + poll > deadline || deps.cancelled?.()) return last;
    await clock.sleep(poll);
  }
}

export interface ClaimResult {
  capture: ClaimCapture;
  attempts: number;
  conflicts: string[];
}

/**
 * The claim (see src/rules/claim.ts for why its test ops never include resourceVersion).
 * A 422 is judged on a re-read: a benign change is retried with a patch rebuilt from the re-read,
 * our own token already on the node means a lost response, anything else refuses.
 */
/** What the claim needs of the rollout's dependencies (the benchmarks call it with just these). */
export type ClaimDeps = Pick<RolloutDeps, 'kube' | 'keys' | 'owner' | 'cancelled' | 'lock'> & { config: Pick<Config, 'claimAttempts'> };

export async function claimNode(deps: ClaimDeps, fresh: NodeState, clock: Clock): Promise<ClaimResult> {
  const { kube, keys, owner, config } = deps;
  const conflicts: string[] = [];
  let current = fresh;
  const original = captureClaim(fresh, owner);
  for (let attempt = 1; attempt <= config.claimAttempts; attempt++) {
    const capture = { ...captureClaim(current, owner), wasCordoned: original.wasCordoned };
    try {
      beforeMutation(deps);
      await kube.patchNode(current.name, buildClaimPatch(current, owner, keys));
      return { capture, attempts: attempt, conflicts };
    } catch (e) {
      if (!(e instanceof ToolError) || (e.kind !== 'invalid' && e.kind !== 'transport')) throw e;
      const reread = await kube.getNode(current.name);
      const judged = judgeClaimRejection(original, reread, keys);
      if (judged.kind === 'ours') return { capture, attempts: attempt, conflicts };
      if (judged.kind === 'conflict') {
        throw new NodeStop(
          'refused',
          `claim refused, another actor changed what drain safety depends on: ${judged.reasons.join('; ')}`,
          'Nothing was changed by this run. Find out who is working on the node (see its annotations and taints), wait for them to finish, then rerun.',
          false,
          'conflict',
        );
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
  throw new NodeStop(
    'refused',
    `claim did not land in ${config.claimAttempts} attempts; the node kept changing: ${conflicts.join('; ')}`,
    'Nothing was changed by this run. Raise claim-attempts if the cluster writes this node very often, or rerun.',
    false,
    'exhausted',
  );
}

async function guard(deps: RolloutDeps, run: NodeRun, capture: ClaimCapture, label: string): Promise<NodeState> {
  const node = await run.step(`guard (${label})`, () => deps.kube.getNode(capture.node));
  const problems = [...identityChanges(run.node, node), ...checkGuard(capture, node, deps.keys)];
  if (problems.length > 0) {
    throw new NodeStop(
      'failed',
      `guard failed ${label}: ${problems.join('; ')}`,
      `Another actor changed the node while this run held it; it was left exactly as they set it and was not rebooted. Check who changed it, then release the claim: ${releaseCommand(capture, deps.keys, deps.config)}`,
      true,
    );
  }
  return node;
}

/** Re-bind identity before a Talos mutation or the release: the node must still be the one we claimed. */
async function rebind(deps: RolloutDeps, run: NodeRun, label: string): Promise<NodeState> {
  const node = await run.step(`re-read node (${label})`, () => deps.kube.getNode(run.node.name));
  const changed = identityChanges(run.node, node);
  if (changed.length > 0) {
    throw new NodeStop(
      'failed',
      `node changed ${label}: ${changed.join('; ')}`,
      `The machine behind ${run.node.name} is not the one this run claimed; nothing more was done to it. Check the node and its Talos endpoint before anything else.`,
      true,
    );
  }
  return node;
}

async function checkQuorum(deps: RolloutDeps, run: NodeRun, label: string): Promise<void> {
  const problems = await run.step(`quorum gate (${label})`, async () => {
    const nodes = await deps.kube.listNodes();
    const controlPlanes = nodes.filter((n) => n.role === 'control-plane');
    const etcd = new Map<
      string,
      { status: Awaited<ReturnType<typeof etcdReading>>['status']; alarms: Awaited<ReturnType<typeof etcdReading>>['alarms'] }
    >();
    // The peers are independent and read-only: ask them all at once.
    const peers = controlPlanes.map((p) => p.internalIPs[0]).filter((a, i) => controlPlanes[i].name !== run.node.name && !!a);
    const readings = await Promise.all(peers.map((a) => etcdReading(deps.talos, a)));
    peers.forEach((a, i) => etcd.set(a, readings[i]));
    return quorumGate({ target: run.node.name, controlPlanes, etcd });
  });
  if (problems.length > 0) throw new QuorumRefusal(problems);
}

class QuorumRefusal extends Error {
  constructor(readonly problems: string[]) {
    super(`control-plane reboot refused by the quorum gate: ${problems.join('; ')}`);
  }
}

async function etcdReading(talos: TalosClient, address: string) {
  const wrap = async <T>(f: () => Promise<T>) => {
    try {
      return { ok: true as const, value: await f() };
    } catch (e) {
      return { ok: false as const, error: e instanceof Error ? e.message : String(e) };
    }
  };
  const [status, alarms] = await Promise.all([wrap(() => talos.etcdStatus(address)), wrap(() => talos.etcdAlarms(address))]);
  return { status, alarms };
}

/**
 * Give the node back before anything that needs a reboot happened (a failed patch, a quorum refusal,
 * a failed drain): the release patch without verified-revision, restoring the cordon state.
 */
async function releaseUnverified(deps: RolloutDeps, run: NodeRun, capture: ClaimCapture): Promise<void> {
  await run.step('release (restore)', () => deps.kube.patchNode(capture.node, buildReleasePatch(capture, deps.keys, {})));
  deps.holding?.(undefined);
}

async function rebootNode(deps: RolloutDeps, run: NodeRun, capture: ClaimCapture, clock: Clock): Promise<void> {
  const { kube, talos, config, keys, desired } = deps;
  const name = capture.node;
  const address = run.address;

  await guard(deps, run, capture, 'before drain');
  if (capture.role === 'control-plane') {
    try {
      await checkQuorum(deps, run, 'before drain');
    } catch (e) {
      if (!(e instanceof QuorumRefusal)) throw e;
      await releaseUnverified(deps, run, capture);
      throw new NodeStop(
        'refused',
        e.message,
        'The node was released and was not drained or rebooted. Fix etcd on the peers, then rerun.',
        false,
      );
    }
  }

  deps.holding?.({ node: name, phase: 'draining', capture });
  try {
    try {
      await run.step('drain', () => {
        beforeMutation(deps);
        return kube.drain(name, config.drainTimeoutMs);
      });
    } catch (e) {
      // A drain cut off by the network is retried once under the same claim, after the apiserver
      // answers again and the guard and the Lease still hold. A PDB timeout is never retried: it
      // is the cluster saying no.
      if (!isTransport(e) || deps.cancelled?.()) throw e;
      await waitForApiserver(deps, run, clock);
      await guard(deps, run, capture, 'after the drain was cut off');
      await run.step('drain (retry after a transport failure)', () => {
        beforeMutation(deps);
        return kube.drain(name, config.drainTimeoutMs);
      });
    }
  } catch (e) {
    // A drain that did not finish leaves the pods that could not move where they were: restore schedulability.
    await releaseUnverified(deps, run, capture);
    const msg = e instanceof Error ? e.message : String(e);
    throw new NodeStop(
      'failed',
      `drain failed: ${msg}`,
      'The node was uncordoned again (unless it was cordoned before the run) and was not rebooted. Check the PodDisruptionBudgets that blocked the drain, then rerun.',
      false,
    );
  }

  const drained = await guard(deps, run, capture, 'after drain');
  if (capture.role === 'control-plane') {
    try {
      await checkQuorum(deps, run, 'after drain');
    } catch (e) {
      if (!(e instanceof QuorumRefusal)) throw e;
      await releaseUnverified(deps, run, capture);
      throw new NodeStop(
        'refused',
        e.message,
        'The node was drained but not rebooted, and released again. Fix etcd on the peers, then rerun.',
        false,
      );
    }
  }
  const bootBefore = drained.bootID;
  deps.holding?.({ node: name, phase: 'rebooting', capture });

  await run.step('talosctl reboot', () => {
    beforeMutation(deps);
    return talos.reboot(address, config.readyTimeoutMs);
  });

  // Wait for Ready with the lifecycle taints gone; anything else in the guard changing is a failure.
  const deadline = clock.now() + config.readyTimeoutMs;
  const poll = deps.pollIntervalMs ?? 2000;
  const back = await run.step('wait for Ready', async () => {
    let transportRetried = false;
    for (;;) {
      let node: NodeState;
      try {
        node = await kube.getNode(name);
      } catch (e) {
        // The apiserver may itself be restarting (a control plane just rebooted): wait for it once.
        if (!isTransport(e) || transportRetried) throw e;
        transportRetried = true;
        await waitForApiserver(deps, run, clock);
        deps.lock?.assertHeld();
        continue;
      }
      const problems = [...identityChanges(run.node, node), ...checkGuard(capture, node, keys, { allowLifecycleTaints: true })];
      if (problems.length > 0) {
        throw new NodeStop('failed', `while waiting for ${name} to come back: ${problems.join('; ')}`, run.fencedNextStep(), true);
      }
      if (node.ready === 'True' && lifecycleTaints(node).length === 0 && node.bootID !== bootBefore) return node;
      if (clock.now() + poll > deadline) {
        throw new NodeStop(
          'failed',
          `${name} did not come back Ready with a new boot id and without lifecycle taints within ${Math.round(config.readyTimeoutMs / 1000)}s (Ready=${node.ready}, taints: ${lifecycleTaints(node).join(', ') || 'none'}, boot id ${node.bootID === bootBefore ? 'unchanged' : 'changed'})`,
          run.fencedNextStep(),
          true,
        );
      }
      await clock.sleep(poll);
    }
  });

  // Prove it: a new boot, and the evidence rule now holds.
  const proof = await run.step(
    'prove the new credential is loaded',
    () => readOne(deps, name, address),
    (v) => `${v.verdict}: ${v.reason}`,
  );
  run.record.proof = proof;
  if (proof.verdict !== 'skip') {
    throw new NodeStop(
      'failed',
      `after the reboot (boot id ${bootBefore} → ${back.bootID}) the evidence still does not prove containerd loaded the desired credential for ${desired.host}: ${proof.reason}`,
      run.fencedNextStep(),
      true,
    );
  }
}
