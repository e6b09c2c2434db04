// The scheduler of one pass: which node starts when (up to max-unavailable at once, each start asked of
// the run's start checks through their port), each node's run to its own end through stopNode, and how
// the pass ended. Which node may start is src/rules/schedule.ts's; whether it may start now is the start
// checks' (src/core/model/startCheck.ts, the list src/pipeline/startChecks/index.ts), none known here by
// name (docs/start-checks.md, docs/parallel.md).
import type { NodeState, Role } from '../core/model/node.js';
import type { DecisionRecord } from '../core/model/record.js';
import type { StartAnswer, StartCheck, StartCheckFinding, StartQuestion } from '../core/model/startCheck.js';
import { startCheckStep } from '../core/steps.js';
import { capacityStopMessage, quarantinedAfter, type QuarantinedOut } from '../rules/quarantine.js';
import { schedule, type Waiting } from '../rules/schedule.js';
import { formatGroupTitle } from '../report/log.js';
import type { NodeLogsLike, RunContext } from './context.js';
import { CancelledError, CapacityStopError, NodesFailedError, type NodeFailure } from './errors.js';
import { rollNode } from './node.js';
import type { NodeRuns } from './nodeRun.js';
import { NodeStop, stopNode } from './stop.js';

/**
 * How the passes ended, in what only they know; the run (src/pipeline/run.ts) builds its result from it once.
 * `processed`: every selected node was rolled; otherwise the roll stopped with `notReached` nodes left.
 */
export type RollEnd =
  | { result: 'processed' }
  | { result: 'failed'; error: Error; notReached: string[] }
  /** a start check answered `stop` with `ends: 'partial'`: what it found */
  | { result: 'partial'; notice: string; notReached: string[]; stop: StartCheckFinding };

/** A start check's `stop` answer. */
type StopAnswer = Extract<StartAnswer, { kind: 'stop' }>;

/** What the passes of one run share: the resolved max-unavailable, what each node took, the peak, the start checks. */
export interface RollState {
  maxUnavailable: number;
  /** nodes of this run that finished, with what each took (the time budget's check reads them) */
  times: Array<{ role: Role; tookMs: number }>;
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
  /** the run's start checks, asked in order before each start (src/pipeline/startChecks/index.ts) */
  checks: readonly StartCheck[];
}

/**
 * Roll `selected` with up to max-unavailable workers at once (src/rules/schedule.ts decides which
 * node may start; docs/parallel.md). Each node
 * runs its whole pipeline under its own claim; a node's run never throws out of here: a stop is
 * turned into its record by stopNode, exactly as with one node at a time. Before each start the start
 * checks are asked in order (askChecks): `hold` waits, `stop` ends new starts (`partial` or failed, as
 * the answer says), `refuse` records the node refused and goes on with the next. The first failure and
 * a cancellation stop new starts too; nodes in flight always run to their own end.
 * Returns how the roll ended when it stopped early, or undefined when the pass finished every node.
 */
export async function rollNodes(
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
  let stop: { why: 'failure' | 'cancelled' | 'capacity'; message: string } | { why: 'check'; answer: StopAnswer } | undefined;
  /** the nodes never started when quarantined nodes held the capacity, with why each waits */
  let cappedOut: { waiting: Waiting[]; quarantined: QuarantinedOut[] } | undefined;

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
      // the node's Events, in one command at its end (logged in its group); never a failure of the roll
      await roll.logs.within(log, () => ctx.events.node(record, (m) => log.info(m)));
      roll.times.push({ role: node.role, tookMs: record.durationMs });
      noteQuarantine(roll, node, record.outcome);
      ctx.settle.finished(node.name);
      inFlight.delete(node.name);
      finished.add(node.name);
      endGroup(formatGroupTitle(record));
    }
  };

  /** a start check refused `node`: it is not started, its record says why and what to do; the roll goes on */
  const refuseOne = async (node: NodeState, a: Extract<StartAnswer, { kind: 'refuse' }>): Promise<void> => {
    const log = roll.logs.forNode(node.name);
    const nodeRun = nodeRuns.start(node, { ...ctx, log });
    // the one step of its record: the check that refused it, failed with its message (the timeline shows it)
    await nodeRun.step(startCheckStep(a.check), () => Promise.reject(new Error(a.message))).catch(() => undefined);
    nodeRun.refusedBeforeStart({ message: a.message, nextStep: a.nextStep });
    roll.logs.info(`${node.name}: not started (${a.check}): ${a.message}`);
    const record = nodeRun.finish();
    await ctx.events.node(record, (m) => roll.logs.info(m));
    // processed in this run: a later pass does not ask again
    done.add(node.uid);
    finished.add(node.name);
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
    // each start asks the run's start checks first; the first answer that is not `start` wins. The nodes
    // let through start together once every one was asked, as when nothing was asked between them.
    let held: Extract<StartAnswer, { kind: 'hold' }> | undefined;
    const nowMs = clock.now();
    const starting: NodeState[] = [];
    let refused = false;
    for (const name of stop ? [] : d.start) {
      const node = byName.get(name)!;
      const a = await askChecks(roll.checks, {
        node,
        nowMs,
        inFlight: [...inFlight.keys(), ...starting.map((n) => n.name)],
        finished: [...finished],
        left: selected.length - finished.size - inFlight.size - starting.length,
        log: { info: (m) => roll.logs.info(m) },
      });
      if (a.kind === 'hold') {
        held = a;
        break;
      }
      if (a.kind === 'stop') {
        stop = { why: 'check', answer: a };
        break;
      }
      if (a.kind === 'refuse') {
        await refuseOne(node, a);
        refused = true;
      } else starting.push(node);
    }
    for (const node of starting) {
      done.add(node.uid);
      inFlight.set(node.name, rollOne(node));
      roll.peak = Math.max(roll.peak, inFlight.size);
    }
    if (held && !stop) {
      // look again when the check said, else after a poll interval, or as soon as a node in flight ends
      const waitMs = held.lookAgainAtMs !== undefined ? Math.max(0, held.lookAgainAtMs - clock.now()) : ctx.pollIntervalMs;
      await Promise.race([...inFlight.values(), clock.sleep(waitMs)]);
      continue;
    }
    // a refused node ended at once: schedule again before deciding the roll is over
    if (refused && !stop) continue;
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
  if (stop?.why === 'check' && stop.answer.ends === 'failed') return { result: 'failed', notReached, error: stop.answer.error };
  if (stop?.why === 'capacity' && cappedOut) {
    const why = capacityStopMessage({
      notStarted: cappedOut.waiting,
      quarantined: cappedOut.quarantined,
      maxUnavailable: roll.maxUnavailable,
      topologyKey: config.topologyKey,
    });
    return { result: 'failed', notReached, error: new CapacityStopError(why.message, why.nextStep) };
  }
  if (stop?.why === 'check') {
    const { check, value, message } = stop.answer;
    return { result: 'partial', notReached, notice: message, stop: { check, value, message } };
  }
  return undefined;
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

/** The start checks asked in order: the first answer that is not `start` wins. */
export async function askChecks(checks: readonly StartCheck[], q: StartQuestion): Promise<StartAnswer> {
  for (const check of checks) {
    const a = await check.ask(q);
    if (a.kind !== 'start') return a;
  }
  return { kind: 'start' };
}

/**
 * The roll with its start checks' lifetimes: each check's `begin` before the first start, in order, and
 * every begun check's `end` when the roll ends, whatever ends it (a failure, a cancellation, a throw).
 * A `begin` that throws is that check's failure: nothing starts, the run fails with its error.
 */
export async function withStartChecks(
  checks: readonly StartCheck[],
  selected: readonly NodeState[],
  log: { info(message: string): void },
  roll: () => Promise<RollEnd>,
  /** given: the checks' ends are handed over unawaited, for the caller to await once it released what must come first (the Lease) */
  handOverEnding?: (ending: Promise<void>) => void,
): Promise<RollEnd> {
  const begun: StartCheck[] = [];
  try {
    for (const check of checks) {
      try {
        await check.begin?.();
      } catch (e) {
        const error = e instanceof Error ? e : new Error(String(e));
        log.info(`start check ${check.name}: could not begin: ${error.message}`);
        return { result: 'failed', notReached: selected.map((n) => n.name), error };
      }
      begun.push(check);
    }
    return await roll();
  } finally {
    const ending = endChecks(begun.reverse());
    if (handOverEnding) handOverEnding(ending);
    else await ending;
  }
}

/** Each begun check's `end`, in order; never rejects. */
async function endChecks(checks: readonly StartCheck[]): Promise<void> {
  for (const check of checks) {
    try {
      await check.end?.();
    } catch {
      // `end` never throws by contract; one that does must not hide how the roll ended
    }
  }
}
