// The scheduler of one pass: which node starts when (up to max-unavailable at once, within the
// time budget, after the settle gate), each node's run to its own end through stopNode, and how
// the pass ended. The decisions are src/rules/schedule.ts's and src/rules/budget.ts's (docs/parallel.md).
import type { NodeState } from '../core/model/node.js';
import { PARTIAL_CAUSES, type PartialCause } from '../core/model/rolloutResult.js';
import type { DecisionRecord } from '../core/model/record.js';
import { budgetAllows, type Deadline, type FinishedNode } from '../rules/budget.js';
import { capacityStopMessage, quarantinedAfter, type QuarantinedOut } from '../rules/quarantine.js';
import { schedule, type Waiting } from '../rules/schedule.js';
import { formatGroupTitle } from '../report/log.js';
import type { NodeLogsLike, RunContext } from './context.js';
import { CancelledError, CapacityStopError, NodesFailedError, type NodeFailure } from './errors.js';
import { rollNode } from './node.js';
import type { NodeRuns } from './nodeRun.js';
import { NodeStop, stopNode } from './stop.js';
import { windowClosed } from './windows.js';
// TEMP wiring (the start-check port's list replaces it)
import type { StartAnswer } from '../core/model/startCheck.js';
import { unsatisfiableDrainCheck } from './startChecks/unsatisfiableDrain.js';

/**
 * How the passes ended, in what only they know; the run (src/pipeline/run.ts) builds its result from it once.
 * `processed`: every selected node was rolled; otherwise the roll stopped with `notReached` nodes left.
 */
export type RollEnd =
  | { result: 'processed' }
  | { result: 'failed'; error: Error; notReached: string[] }
  | { result: 'partial'; notice: string; notReached: string[]; stoppedBy: PartialCause };

/** What the passes of one run share: the resolved max-unavailable, the budget's clock and deadlines, the peak. */
export interface RollState {
  maxUnavailable: number;
  runStartMs: number;
  /** one node's own deadlines under this run's inputs (src/rules/budget.ts), for the budget */
  deadlines: Deadline[];
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
 * cancellation, the budget or the maintenance windows stop new starts; nodes in flight always run to their own end.
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
  let stop: { why: 'failure' | 'cancelled' | 'settle' | 'capacity' | PartialCause; message: string } | undefined;
  let settleError: Error | undefined;
  /** the nodes never started when quarantined nodes held the capacity, with why each waits */
  let cappedOut: { waiting: Waiting[]; quarantined: QuarantinedOut[] } | undefined;
  // TEMP wiring: the unsatisfiable-drain start check, asked before each start (docs/refused-drains.md)
  const unsatisfiable = unsatisfiableDrainCheck(ctx);
  let refusedAtStart = false;

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
        held = !(await ctx.settle.mayStart({ info: (m) => roll.logs.info(m) }, d.start[0]));
      } catch (e) {
        settleError = e instanceof Error ? e : new Error(String(e));
        stop = { why: 'settle', message: settleError.message };
        held = true;
      }
    }
    // Every start waits for the health gates (src/pipeline/gates.ts); one false past gate-timeout stops new starts.
    if (!stop && !held && d.start.length > 0 && ctx.gates) {
      const g = await ctx.gates.mayStart({ info: (m) => roll.logs.info(m) }, d.start[0]);
      if (g.kind === 'stop') stop = { why: 'gate', message: g.message };
      held = g.kind !== 'start';
    }
    for (const name of held ? [] : d.start) {
      const node = byName.get(name)!;
      // outside every maintenance window nothing new starts; nodes in flight finish (docs/windows.md)
      const closed = windowClosed(ctx);
      if (closed) {
        stop = { why: 'window', message: closed };
        ctx.holds.start('window', clock.now(), closed, name);
        roll.logs.info(closed);
        break;
      }
      const b = budgetAllows({
        budgetMs: config.timeBudgetMs,
        runStartMs: roll.runStartMs,
        nowMs: clock.now(),
        role: node.role,
        finished: roll.times,
        deadlines: roll.deadlines,
        left: selected.length - finished.size - inFlight.size,
      });
      if (!b.allowed) {
        stop = { why: 'budget', message: b.message };
        // from this moment nothing new starts: the timeline marks it
        ctx.holds.start('budget', clock.now(), b.message, name);
        roll.logs.info(b.message);
        break;
      }
      // TEMP wiring of the unsatisfiable-drain start check, until the start-check port's list
      // (src/pipeline/startChecks/index.ts) is asked here: a `refuse` is the node's record, the roll goes on.
      const answer = await unsatisfiable.ask({
        node,
        nowMs: clock.now(),
        inFlight: [...inFlight.keys()],
        finished: [...finished],
        left: selected.length - finished.size - inFlight.size,
        log: { info: (m) => roll.logs.info(m) },
      });
      if (answer.kind === 'refuse') {
        await refuseAtStart(ctx, nodeRuns, roll, node, answer);
        done.add(node.uid);
        finished.add(name);
        refusedAtStart = true;
        continue;
      }
      // end of the TEMP wiring
      done.add(node.uid);
      inFlight.set(name, rollOne(node));
      roll.peak = Math.max(roll.peak, inFlight.size);
    }
    if (held && !stop) {
      // look again after a poll interval, or as soon as a node in flight ends
      await Promise.race([...inFlight.values(), clock.sleep(ctx.pollIntervalMs)]);
      continue;
    }
    // TEMP wiring: a node refused at its start frees its place: schedule the next at once
    if (refusedAtStart && !stop && inFlight.size === 0) {
      refusedAtStart = false;
      continue;
    }
    refusedAtStart = false;
    // end of the TEMP wiring
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
  if (stop && isPartialCause(stop.why)) return { result: 'partial', notReached, notice: stop.message, stoppedBy: stop.why };
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

function isPartialCause(why: string): why is PartialCause {
  return (PARTIAL_CAUSES as readonly string[]).includes(why);
}

/**
 * TEMP wiring: a node a start check refused, as its record says it (outcome `refused`, the finding's
 * message as reason, its next step); never claimed, so nothing is held. The port's scheduler replaces it.
 */
async function refuseAtStart(
  ctx: RunContext,
  nodeRuns: NodeRuns,
  roll: RollState,
  node: NodeState,
  answer: Extract<StartAnswer, { kind: 'refuse' }>,
): Promise<void> {
  const log = roll.logs.forNode(node.name);
  const endGroup = log.group(`${node.name} (${node.role})`);
  const nodeRun = nodeRuns.start(node, { ...ctx, log });
  await nodeRun.step(`start check (${answer.check})`, () => Promise.reject(new Error(answer.message))).catch(() => undefined);
  nodeRun.recordStop({ outcome: 'refused', message: answer.message, nextStep: answer.nextStep });
  log.info(`${node.name}: ${answer.message}`);
  log.info(`next step: ${answer.nextStep}`);
  const record = nodeRun.finish();
  await roll.logs.within(log, () => ctx.events.node(record, (m) => log.info(m)));
  endGroup(formatGroupTitle(record));
}
