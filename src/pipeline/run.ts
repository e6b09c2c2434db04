// The run: the Lease, the passes over the inventory (listing again until nothing new appears), and
// cancellation. However the run ends, its result lists every node it touched with what became of it.
import { errorMessage, InputError, RolloutError } from '../core/errors.js';
import { LeaseHeldError } from './lease.js';
import type { ActionResult, DecisionRecord, HeldNode, NodeState, RollHold } from '../core/model.js';
import { fenceCapture } from '../rules/fences.js';
import { selectNodes, validateInventory } from '../rules/inventory.js';
import { releaseCommand } from '../rules/commands.js';
import { CancelledError, makeContext, type NodeLogsLike, type RolloutDeps, type RunContext } from './context.js';
import { prefetchVersions } from './evidence.js';
import { rollNode } from './node.js';
import { resolveMaxUnavailable } from '../core/config.js';
import { formatGroupTitle } from '../report/log.js';
import { NodeLogs } from '../report/nodeLog.js';
import { DRAIN_KILL_GRACE_MS } from '../adapters/kube/kubectl.js';
import { REBOOT_GRACE_MS } from '../adapters/talos/cli/talosctl.js';
import { budgetAllows, budgetTooShort, nodeDeadlines, type FinishedNode } from '../rules/budget.js';
import { schedule, type Waiting } from '../rules/schedule.js';
import { capacityStopMessage, quarantinedAfter, quarantinedNodes, type QuarantinedOut } from '../rules/quarantine.js';
import { NodeRun, NodeStop, stopNode } from './nodeRun.js';
import { planNodes } from './plan.js';
import { predictSettleWaits } from './settle.js';
import { READYZ_WAIT_MS } from './transport.js';

export interface RolloutResult {
  /** `partial`: the time budget stopped the roll with nodes left; every node it started ended cleanly */
  result: ActionResult;
  records: DecisionRecord[];
  /** selected nodes the roll did not reach because it stopped earlier (the `left` output) */
  notReached: string[];
  upToDate: string[];
  error?: Error;
  /** the budget's message when it stopped the roll (result `partial`) */
  notice?: string;
  /** the largest number of nodes in flight at once (the `in-flight-max` output) */
  inFlightMax?: number;
  /** max-unavailable as resolved against the selected workers */
  maxUnavailable?: number;
  /** when the settle gate or the time budget held starts back (the summary's timeline) */
  holds?: RollHold[];
  /** plan: the workloads the settle gate would wait for (undefined: gate off or not predicted) */
  settleWaits?: string[];
}

/**
 * How the passes ended, in what only they know; runRollout builds the run's result from it once.
 * `processed`: every selected node was rolled; otherwise the roll stopped with `notReached` nodes left.
 */
type RollEnd =
  | { result: 'processed' }
  | { result: 'failed'; error: Error; notReached: string[] }
  | { result: 'partial'; notice: string; notReached: string[] };

/** How many listings after the first pass may still find work (an autoscaler keeps adding nodes). */
const MAX_EXTRA_PASSES = 5;

/** The NodeRuns of one action run: the set the post step's state is published from. */
class NodeRuns {
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
    return [...this.all].filter((r) => r.phase !== 'read' || r.record.steps.length > 0).map((r) => r.record);
  }

  private publish(): void {
    this.ctx.publishHeld?.(this.held());
  }
}

/** What one listing gives a pass: the nodes to roll in roll order, those already verified, and the quarantined ones (out of service). */
interface Listing {
  selected: NodeState[];
  upToDate: string[];
  quarantined: QuarantinedOut[];
}

/** List, validate the inventory and select the nodes a pass rolls, in roll order. */
async function listAndSelect(ctx: RunContext, processed: number): Promise<Listing> {
  const { kube, config, keys } = ctx;
  // Every node must be identifiable and none may carry a leftover claim.
  const inventory = await kube.listNodes();
  const problems = validateInventory(inventory, keys);
  if (problems.length > 0) {
    const changed =
      processed === 0
        ? 'nothing was changed'
        : `${processed} node(s) were already processed in this run (listed below); no further node was started`;
    throw new InputError('nodes', `the cluster's node inventory is not safe to roll, ${changed}:\n- ${problems.join('\n- ')}`);
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
  return { selected: selection.selected, upToDate: selection.upToDate, quarantined: quarantinedNodes(inventory, keys) };
}

/**
 * Runs before anything is changed throw (a bad input, another run's Lease); once the Lease is taken
 * every ending, a cancellation included, returns a result with every node touched.
 */
export async function runRollout(deps: RolloutDeps): Promise<RolloutResult> {
  const ctx = makeContext(deps);
  const { config } = ctx;
  const runStartMs = ctx.clock.now();
  // A budget no node fits in is a configuration mistake: say so before anything is read or changed.
  const tooShort = config.mode === 'apply' ? budgetTooShort(config.timeBudgetMs, deadlinesOf(config)) : undefined;
  if (tooShort) throw new InputError('time-budget', tooShort);

  // Another run's claim on a node would read as a residual claim below; when that run still holds
  // the Lease, say so (who, the URL of its run, and the nodes it left claimed) instead.
  if (config.mode === 'apply' && ctx.lock) await withFencesOfHolder(ctx, () => ctx.lock!.checkNotHeldByAnother());

  // 1–2. Inventory and selection.
  const first = await listAndSelect(ctx, 0);
  if (first.selected.length === 0) return { result: 'clean', records: [], notReached: [], upToDate: first.upToDate };
  ctx.log.info(`${first.selected.length} node(s) to roll: ${first.selected.map((n) => n.name).join(', ')}`);

  if (config.mode === 'plan') {
    const records = await planNodes(ctx, first.selected);
    const settleWaits = await predictSettle(ctx, records);
    return { result: 'planned', records, notReached: [], upToDate: first.upToDate, ...(settleWaits ? { settleWaits } : {}) };
  }

  // One run at a time: the Lease is taken before the first mutation and refused when held by
  // another run, expired or not (src/rules/lease.ts says why time alone never hands it over).
  if (ctx.lock) {
    await withFencesOfHolder(ctx, () => ctx.lock!.acquire());
    ctx.lock.startRenewing();
  }
  const nodeRuns = new NodeRuns(ctx);
  const roll: RollState = {
    maxUnavailable: resolveMaxUnavailable(config.maxUnavailable, first.selected.filter((n) => n.role === 'worker').length),
    runStartMs,
    times: [],
    peak: 0,
    quarantined: [],
    quarantinedNow: new Map(),
    logs:
      deps.nodeLogs ??
      ('count' in config.maxUnavailable && config.maxUnavailable.count === 1 ? passThrough(ctx.log) : new NodeLogs(sinkOf(ctx.log))),
  };
  let end: RollEnd;
  try {
    end = await rollPasses(ctx, nodeRuns, first, roll);
  } finally {
    ctx.lock?.stop();
    roll.logs.flushAll();
  }
  const leaseError = await endLease(ctx, nodeRuns);
  // A quarantined node fails the run (whatever else happened): it is left cordoned with the old
  // credential in containerd, and a deploy job must show that. `fail-on-partial` stays about the budget.
  const ended = end.result === 'failed' ? end.error : leaseError;
  const error = roll.quarantined.length > 0 ? new QuarantinedNodesError(roll.quarantined, ended) : ended;
  return {
    result: leaseError || roll.quarantined.length > 0 ? 'failed' : end.result,
    records: nodeRuns.records(),
    notReached: end.result === 'processed' ? [] : end.notReached,
    upToDate: first.upToDate,
    ...(error ? { error } : {}),
    ...(end.result === 'partial' ? { notice: end.notice } : {}),
    inFlightMax: roll.peak,
    maxUnavailable: roll.maxUnavailable,
    holds: ctx.holds,
  };
}

/** Plan: which workloads the settle gate would wait for, after the drains of the nodes planned to reboot; logged. */
async function predictSettle(ctx: RunContext, records: DecisionRecord[]): Promise<string[] | undefined> {
  if (!ctx.settle.enabled) return undefined;
  try {
    const waits = await predictSettleWaits(
      ctx,
      records.filter((r) => r.outcome === 'planned-reboot').map((r) => r.node),
    );
    ctx.log.info(`settle gate: the drains would wait for ${waits.length ? waits.join(', ') : 'no workload'} to be available again`);
    return waits;
  } catch (e) {
    // a prediction only: the plan stands without it
    ctx.log.info(`settle gate: could not predict which workloads the roll would wait for: ${errorMessage(e)}`);
    return undefined;
  }
}

/**
 * The Lease at the end. A node left claimed keeps it held: nobody should start another roll until a
 * person has looked at it (recover-fences releases it once this run is completed). Otherwise it is
 * released; when someone else holds it by then, it is left alone and the run fails (it was not ours
 * for some of the time it should have been): the error returned says so.
 */
async function endLease(ctx: RunContext, nodeRuns: NodeRuns): Promise<Error | undefined> {
  if (!ctx.lock) return undefined;
  if (nodeRuns.anyLeft()) {
    ctx.log.info('run Lease: kept, because a node of this run is left claimed');
    return undefined;
  }
  let outcome: { released: boolean; message: string };
  try {
    outcome = await ctx.lock.release();
  } catch (e) {
    outcome = { released: false, message: `releasing it failed: ${errorMessage(e)}` };
  }
  ctx.log.info(`run Lease: ${outcome.message}`);
  if (outcome.released) return undefined;
  return new Error(`the run Lease was not released at the end of the run: ${outcome.message}`);
}

/**
 * One node at a time and no NodeLogs given (tests, benchmarks): the port's group opens when the node
 * starts and closes when it ends, and lines go straight through, as before nodes ran in parallel.
 */
function passThrough(log: RunContext['log']): NodeLogsLike {
  return {
    info: (m) => log.info(m),
    forNode: (node) => ({
      node,
      info: (m) => log.info(m),
      progress: (m) => log.info(m),
      group: (title) => {
        const end = log.group(title);
        return () => end();
      },
    }),
    within: (_log, fn) => fn(),
    flushAll: () => undefined,
  };
}

/** NodeLogs over the rollout's own log port (tests, the demo): a group is the port's group. */
function sinkOf(log: RunContext['log']): ConstructorParameters<typeof NodeLogs>[0] {
  let end: (() => void) | undefined;
  return {
    info: (line) => log.info(line),
    startGroup: (title) => {
      end = log.group(title);
    },
    endGroup: () => end?.(),
  };
}

/** On a LeaseHeldError: name the nodes the holder left claimed, with their release commands (or that it left none). */
async function withFencesOfHolder(ctx: RunContext, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    if (!(e instanceof LeaseHeldError)) throw e;
    const nodes = await ctx.kube.listNodes().catch(() => undefined);
    if (!nodes) throw e;
    const fenced = nodes.filter((n) => n.annotations[ctx.keys.owner] === e.holder);
    if (fenced.length === 0) throw new HolderFencesError(e, ` No node carries a claim of ${e.holder}.`);
    const lines = fenced.map((n) => {
      const annotated = n.annotations[ctx.keys.phase] ?? '(none)';
      return `- ${n.name} (phase=${annotated}${n.unschedulable ? ', cordoned' : ''}): check it, then release it: ${releaseCommand(fenceCapture(n, ctx.keys), ctx.keys, ctx.config)}`;
    });
    throw new HolderFencesError(e, `\nThe Lease is kept for node(s) that run left claimed:\n${lines.join('\n')}`);
  }
}

/** Another run holds the Lease (the cause), and what the nodes show of it: the claims it left, or none. */
export class HolderFencesError extends Error {
  constructor(held: LeaseHeldError, fences: string) {
    super(`${held.message}${fences}`, { cause: held });
    this.name = 'HolderFencesError';
  }
}

/**
 * 3. Roll the selected nodes, then list again: nodes that became stale or appeared meanwhile (an
 * autoscaler scale-out) are rolled in a further pass. The run ends when two consecutive listings
 * select nothing new, or after MAX_EXTRA_PASSES listings. A node processed in this run (by uid) is
 * never rolled twice, whatever its annotations say. Any failure or cancellation in any pass ends
 * the run with the nodes processed so far in the result.
 */
async function rollPasses(ctx: RunContext, nodeRuns: NodeRuns, first: Listing, roll: RollState): Promise<RollEnd> {
  const done = new Set<string>();
  let pass = first;
  let emptyListings = 0;
  try {
    for (let extra = 0; ;) {
      const todo = pass.selected.filter((n) => !done.has(n.uid));
      // what each listing shows quarantined is the truth the pass starts from (this run's quarantines included)
      roll.quarantinedNow = new Map(
        pass.quarantined.map((q) => [q.name, { ...q, byThisRun: roll.quarantined.some((x) => x.node === q.name) }]),
      );
      if (todo.length > 0) {
        emptyListings = 0;
        await prefetchVersions(ctx, todo);
        if (extra > 0) ctx.log.info(`listing again found ${todo.length} more node(s) to roll: ${todo.map((n) => n.name).join(', ')}`);
        const stopped = await rollNodes(ctx, nodeRuns, todo, done, roll);
        if (stopped) return stopped;
      } else {
        emptyListings++;
      }
      if (emptyListings >= 2 || extra >= MAX_EXTRA_PASSES) break;
      if (ctx.cancelled?.()) throw new CancelledError('the run was cancelled');
      if (emptyListings === 1 && ctx.relistPauseMs) await ctx.clock.sleep(ctx.relistPauseMs);
      extra++;
      pass = await listAndSelect(ctx, done.size);
    }
  } catch (e) {
    const error =
      ctx.cancelled?.() && !(e instanceof CancelledError)
        ? new CancelledError(`the run was cancelled (${errorMessage(e)})`, { cause: e })
        : e;
    return { result: 'failed', notReached: [], error: endedEarly(error, done.size) };
  }
  return { result: 'processed' };
}

/** An error that ended the run between nodes (its cause), saying truthfully how far the run got. */
export class EndedEarlyError extends Error {
  constructor(cause: unknown, processed: number) {
    const so = processed === 0 ? 'no node was processed' : `${processed} node(s) were already processed (listed below)`;
    super(`${errorMessage(cause)}; ${so} and no further node was started`, { cause });
    this.name = 'EndedEarlyError';
  }
}

/** An input error already says nothing was started; anything else is wrapped to say how far the run got. */
function endedEarly(e: unknown, processed: number): Error {
  return e instanceof InputError ? e : new EndedEarlyError(e, processed);
}

/** One node's own deadlines under this run's inputs, with the margins the adapters add (src/rules/budget.ts). */
function deadlinesOf(config: RunContext['config']) {
  return nodeDeadlines({
    drainTimeoutMs: config.drainTimeoutMs,
    readyTimeoutMs: config.readyTimeoutMs,
    criRestartWaitMs: config.criRestartWaitMs,
    verifyImage: !!config.verifyImage,
    drainKillGraceMs: DRAIN_KILL_GRACE_MS,
    rebootGraceMs: REBOOT_GRACE_MS,
    readyzWaitMs: READYZ_WAIT_MS,
    settleTimeoutMs: config.settleTimeoutMs,
  });
}

/** What the passes of one run share: the resolved max-unavailable, the budget's clock, the peak. */
interface RollState {
  maxUnavailable: number;
  runStartMs: number;
  /** nodes of this run that finished, for the time budget */
  times: FinishedNode[];
  /** the largest number of nodes in flight at once */
  peak: number;
  logs: NodeLogsLike;
  /** nodes this run quarantined (`undrainable: quarantine`): the run fails at its end, naming them */
  quarantined: NodeFailure[];
  /**
   * every node quarantined right now (the last listing, then each node's end): out of service, so the
   * scheduler counts them toward max-unavailable and their topology zone (src/rules/schedule.ts)
   */
  quarantinedNow: Map<string, QuarantinedOut>;
}

/**
 * Roll `selected` with up to max-unavailable workers at once (src/rules/schedule.ts decides which
 * node may start, src/rules/budget.ts whether the time left allows it; docs/parallel.md). Each node
 * runs its whole pipeline under its own claim; a node's run never throws out of here: a stop is
 * turned into its record by stopNode, exactly as with one node at a time. The first failure, a
 * cancellation or the budget stops new starts; nodes in flight always run to their own end.
 * Returns how the roll ended when it stopped early, or undefined when the pass finished every node.
 */
async function rollNodes(
  ctx: RunContext,
  nodeRuns: NodeRuns,
  selected: NodeState[],
  done: Set<string>,
  roll: RollState,
): Promise<Exclude<RollEnd, { result: 'processed' }> | undefined> {
  const { clock, config } = ctx;
  const byName = new Map(selected.map((n) => [n.name, n]));
  const inFlight = new Map<string, Promise<void>>();
  const finished = new Set<string>();
  const failures: NodeFailure[] = [];
  /** nodes whose run failed and is being stopped (released or left): the roll stops from that moment */
  const failing = new Set<string>();
  let stop: { why: 'failure' | 'cancelled' | 'budget' | 'settle' | 'capacity'; message: string } | undefined;
  let settleError: Error | undefined;
  /** the nodes never started when quarantined nodes held the capacity, with why each waits */
  let cappedOut: { waiting: Waiting[]; quarantined: QuarantinedOut[] } | undefined;
  const deadlines = deadlinesOf(config);

  const rollOne = async (node: NodeState): Promise<void> => {
    const log = roll.logs.forNode(node.name);
    const endGroup = log.group(`${node.name} (${node.role})`);
    const nodeCtx: RunContext = { ...ctx, log };
    const nodeRun = nodeRuns.start(node, nodeCtx);
    try {
      await roll.logs.within(log, async () => {
        try {
          await rollNode(nodeCtx, nodeRun);
        } catch (e) {
          // A node to quarantine is no failure that stops new starts (unless its quarantine fails).
          const quarantining = e instanceof NodeStop && e.opts.disposition === 'quarantine';
          if (!quarantining) failing.add(node.name);
          const s = await stopNode(nodeCtx, nodeRun, e);
          const entry = { node: node.name, message: s.message, nextStep: s.opts.nextStep ?? '', cause: s };
          if (s.outcome === 'quarantined') roll.quarantined.push(entry);
          else failures.push(entry);
        }
      });
    } catch (e) {
      // stopNode itself failed (it should not): the node's phase, already published, is what the post step acts on
      nodeRun.recordStopFailed(e);
      failures.push({ node: node.name, message: nodeRun.record.reason, nextStep: nodeRun.record.nextStep ?? '', cause: e });
    } finally {
      const record = nodeRun.finish();
      roll.times.push({ role: node.role, tookMs: record.durationMs });
      noteQuarantine(roll, node, record.outcome);
      ctx.settle.finished(node.name);
      inFlight.delete(node.name);
      finished.add(node.name);
      endGroup(formatGroupTitle(record));
    }
  };

  for (;;) {
    if (!stop && (failures.length > 0 || failing.size > 0))
      stop = { why: 'failure', message: 'a node failed: no further node was started' };
    if (!stop && ctx.cancelled?.()) stop = { why: 'cancelled', message: 'the run was cancelled; no further node was started' };
    const d = schedule({
      order: selected,
      inFlight: new Set(inFlight.keys()),
      finished,
      maxUnavailable: roll.maxUnavailable,
      topologyKey: config.topologyKey,
      stopped: stop !== undefined,
      quarantined: [...roll.quarantinedNow.values()],
    });
    if (d.capped) {
      // quarantined nodes hold the capacity: nothing left can ever start in this run
      const quarantined = d.quarantinedOut.map((name) => roll.quarantinedNow.get(name)!);
      cappedOut = { waiting: d.waiting, quarantined };
      stop = {
        why: 'capacity',
        message: `no further node can start: quarantined nodes (${d.quarantinedOut.join(', ')}) hold the capacity`,
      };
      roll.logs.info(stop.message);
      break;
    }
    // With several workers, a start waits too for what the finished nodes evicted (src/pipeline/settle.ts).
    let held = false;
    if (!stop && d.start.length > 0 && roll.maxUnavailable > 1 && ctx.settle.waiting) {
      try {
        held = !(await ctx.settle.mayStart({ ...ctx, log: { ...ctx.log, info: (m) => roll.logs.info(m) } }, d.start[0]));
      } catch (e) {
        settleError = e instanceof Error ? e : new Error(String(e));
        stop = { why: 'settle', message: settleError.message };
        held = true;
      }
    }
    for (const name of held ? [] : d.start) {
      const node = byName.get(name)!;
      const b = budgetAllows({
        budgetMs: config.timeBudgetMs,
        runStartMs: roll.runStartMs,
        nowMs: clock.now(),
        role: node.role,
        finished: roll.times,
        deadlines,
        left: selected.length - finished.size - inFlight.size,
      });
      if (!b.allowed) {
        stop = { why: 'budget', message: b.message };
        // from this moment nothing new starts: the timeline marks it
        ctx.holds.push({ kind: 'budget', startedAt: new Date(clock.now()).toISOString(), detail: b.message, node: name });
        roll.logs.info(b.message);
        break;
      }
      done.add(node.uid);
      inFlight.set(name, rollOne(node));
      roll.peak = Math.max(roll.peak, inFlight.size);
    }
    if (held && !stop) {
      // look again after a poll interval, or as soon as a node in flight ends
      await Promise.race([...inFlight.values(), clock.sleep(ctx.pollIntervalMs)]);
      continue;
    }
    if (inFlight.size === 0) break;
    // rollOne never rejects; it removes itself from inFlight when its node's run ended
    await Promise.race(inFlight.values());
  }

  const notReached = selected.filter((n) => !finished.has(n.name)).map((n) => n.name);
  if (failures.length > 0) return { result: 'failed', notReached, error: new NodesFailedError(failures) };
  if (stop?.why === 'cancelled') {
    return {
      result: 'failed',
      notReached,
      error: new CancelledError(`the run was cancelled; ${done.size} node(s) were processed and no further node was started`),
    };
  }
  if (stop?.why === 'settle' && settleError) return { result: 'failed', notReached, error: settleError };
  if (stop?.why === 'capacity' && cappedOut) {
    const why = capacityStopMessage({
      notStarted: cappedOut.waiting,
      quarantined: cappedOut.quarantined,
      maxUnavailable: roll.maxUnavailable,
      topologyKey: config.topologyKey,
    });
    return { result: 'failed', notReached, error: new CapacityStopError(why.message, why.nextStep) };
  }
  if (stop?.why === 'budget') return { result: 'partial', notReached, notice: stop.message };
  return undefined;
}

/**
 * The roll stopped because quarantined nodes hold the capacity (src/rules/quarantine.ts
 * capacityStopMessage): the message names them and every node not started with why; `nextStep` what a person does.
 */
export class CapacityStopError extends Error {
  constructor(
    message: string,
    readonly nextStep: string,
  ) {
    super(`${message}\nNext step: ${nextStep}`);
    this.name = 'CapacityStopError';
  }
}

/** A node's run ended: it is quarantined from now on, or no longer (its verified release lifted it), as its outcome says. */
function noteQuarantine(roll: RollState, node: NodeState, outcome: DecisionRecord['outcome']): void {
  const before = roll.quarantinedNow.get(node.name);
  if (!quarantinedAfter(before !== undefined, outcome)) {
    roll.quarantinedNow.delete(node.name);
    return;
  }
  const byThisRun = outcome === 'quarantined' || !!before?.byThisRun;
  roll.quarantinedNow.set(node.name, { ...before, name: node.name, role: node.role, labels: node.labels, byThisRun });
}

/** One node's stop as the roll saw it: its message and next step, and the stop (or error) behind it. */
interface NodeFailure {
  node: string;
  message: string;
  nextStep: string;
  cause: unknown;
}

/**
 * The error of a run that quarantined nodes: each one, what blocked its drain and how to lift it
 * (the node's reason and next step), after the error that ended the run otherwise, when one did.
 */
export class QuarantinedNodesError extends Error {
  constructor(
    readonly quarantined: readonly NodeFailure[],
    readonly other?: Error,
  ) {
    const otherText = other ? `${other.message}${other instanceof RolloutError ? `\nNext step: ${other.nextStep}` : ''}\n` : '';
    const lines = quarantined.map((q) => `- ${q.node}: ${q.message}. ${q.nextStep}`);
    super(
      `${otherText}${quarantined.length} node(s) quarantined: their drain timed out, so they were left cordoned and not rebooted, and their containerd still runs the OLD credential:\n${lines.join('\n')}`,
      { cause: other ?? quarantined[0].cause },
    );
    this.name = 'QuarantinedNodesError';
  }
}

/**
 * The error of a roll that stopped on failed nodes: the first one's (with its next step), naming the
 * others when there are several; every failure stays reachable in `failures`, each with its cause.
 */
export class NodesFailedError extends RolloutError {
  constructor(readonly failures: readonly NodeFailure[]) {
    const [first] = failures;
    const others =
      failures.length > 1 ? ` (${failures.length} nodes failed: ${failures.map((f) => f.node).join(', ')}; see each below)` : '';
    super(first.node, `${first.message}${others}`, first.nextStep, { cause: first.cause });
  }
}
