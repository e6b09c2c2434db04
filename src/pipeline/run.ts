// The run: the Lease, the passes over the inventory (listing again until nothing new appears), and
// cancellation. However the run ends, its result lists every node it touched with what became of it.
import { errorMessage, InputError, RolloutError } from '../errors.js';
import { LeaseHeldError } from '../lease.js';
import type { DecisionRecord, HeldNode, NodeState } from '../model.js';
import { fenceCapture } from '../rules/fences.js';
import { selectNodes, validateInventory } from '../rules/inventory.js';
import { releaseCommand } from '../recovery.js';
import { CancelledError, makeContext, type RolloutDeps, type RunContext } from './context.js';
import { prefetchVersions } from './evidence.js';
import { rollNode } from './node.js';
import { LEFT, NodeRun, stopNode } from './nodeRun.js';
import { planNodes } from './plan.js';

export interface RolloutResult {
  result: 'clean' | 'processed' | 'planned' | 'failed';
  records: DecisionRecord[];
  /** selected nodes the roll did not reach because it stopped earlier */
  notReached: string[];
  upToDate: string[];
  error?: Error;
}

/** How many listings after the first pass may still find work (an autoscaler keeps adding nodes). */
const MAX_EXTRA_PASSES = 5;

/** The node runs of one run: the set the post step's state is published from. */
class NodeRuns {
  readonly all = new Set<NodeRun>();
  constructor(private readonly ctx: RunContext) {}

  start(node: NodeState): NodeRun {
    const run = new NodeRun(node, this.ctx, () => this.publish());
    this.all.add(run);
    return run;
  }

  held(): HeldNode[] {
    return [...this.all].map((r) => r.held()).filter((h): h is HeldNode => !!h);
  }

  /** Some node is left (or still) claimed: the Lease stays with this run so nobody starts over it. */
  anyLeft(): boolean {
    return [...this.all].some((r) => r.held() !== undefined || LEFT.has(r.phase));
  }

  records(): DecisionRecord[] {
    return [...this.all].filter((r) => r.phase !== 'read' || r.record.steps.length > 0).map((r) => r.record);
  }

  private publish(): void {
    this.ctx.publishHeld?.(this.held());
  }
}

/** List, validate the inventory and select the nodes a pass rolls, in roll order. */
async function listAndSelect(ctx: RunContext, processed: number): Promise<{ selected: NodeState[]; upToDate: string[] }> {
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
  return { selected: selection.selected, upToDate: selection.upToDate };
}

/**
 * Runs before anything is changed throw (a bad input, another run's Lease); once the Lease is taken
 * every ending, a cancellation included, returns a result with every node touched.
 */
export async function runRollout(deps: RolloutDeps): Promise<RolloutResult> {
  const ctx = makeContext(deps);
  const { config } = ctx;

  // Another run's claim on a node would read as a residual claim below; when that run still holds
  // the Lease, say so (who, the URL of its run, and the nodes it left claimed) instead.
  if (config.mode === 'apply' && ctx.lock) await withFencesOfHolder(ctx, () => ctx.lock!.checkNotHeldByAnother());

  // 1–2. Inventory and selection.
  const first = await listAndSelect(ctx, 0);
  if (first.selected.length === 0) return { result: 'clean', records: [], notReached: [], upToDate: first.upToDate };
  ctx.log.info(`${first.selected.length} node(s) to roll: ${first.selected.map((n) => n.name).join(', ')}`);

  if (config.mode === 'plan') {
    const records = await planNodes(ctx, first.selected);
    return { result: 'planned', records, notReached: [], upToDate: first.upToDate };
  }

  // One run at a time: the Lease is taken before the first mutation and refused when held by
  // another run, expired or not (src/rules/lease.ts says why time alone never hands it over).
  if (ctx.lock) {
    await withFencesOfHolder(ctx, () => ctx.lock!.acquire());
    ctx.lock.startRenewing();
  }
  const runs = new NodeRuns(ctx);
  let result: RolloutResult;
  try {
    result = await rollPasses(ctx, runs, first);
  } finally {
    ctx.lock?.stop();
  }
  return { ...result, records: runs.records(), upToDate: first.upToDate, ...(await endLease(ctx, runs, result)) };
}

/**
 * The Lease at the end. A node left claimed keeps it held: nobody should start another roll until a
 * person has looked at it (recover-fences releases it once this run is completed). Otherwise it is
 * released; when someone else holds it by then, it is left alone and the run fails (it was not ours
 * for some of the time it should have been).
 */
async function endLease(ctx: RunContext, runs: NodeRuns, result: RolloutResult): Promise<Partial<RolloutResult>> {
  if (!ctx.lock) return {};
  if (runs.anyLeft()) {
    ctx.log.info('run Lease: kept, because a node of this run is left claimed');
    return {};
  }
  let outcome: { released: boolean; message: string };
  try {
    outcome = await ctx.lock.release();
  } catch (e) {
    outcome = { released: false, message: `releasing it failed: ${errorMessage(e)}` };
  }
  ctx.log.info(`run Lease: ${outcome.message}`);
  if (outcome.released) return {};
  const error = new Error(`the run Lease was not released at the end of the run: ${outcome.message}`);
  return { result: 'failed', error: result.error ?? error };
}

/** On a LeaseHeldError: name the nodes the holder left claimed, with their release commands. */
async function withFencesOfHolder(ctx: RunContext, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    if (!(e instanceof LeaseHeldError)) throw e;
    const nodes = await ctx.kube.listNodes().catch(() => undefined);
    if (!nodes) throw e;
    const fenced = nodes.filter((n) => n.annotations[ctx.keys.owner] === e.holder);
    if (fenced.length === 0) {
      e.message += ` No node carries a claim of ${e.holder}.`;
      throw e;
    }
    const lines = fenced.map((n) => {
      const phase = n.annotations[ctx.keys.phase] ?? '(none)';
      return `- ${n.name} (phase=${phase}${n.unschedulable ? ', cordoned' : ''}): check it, then release it: ${releaseCommand(fenceCapture(n, ctx.keys), ctx.keys, ctx.config)}`;
    });
    e.message += `\nThe Lease is kept for node(s) that run left claimed:\n${lines.join('\n')}`;
    throw e;
  }
}

/**
 * 3. Roll the selected nodes, then list again: nodes that became stale or appeared meanwhile (an
 * autoscaler scale-out) are rolled in a further pass. The run ends when two consecutive listings
 * select nothing new, or after MAX_EXTRA_PASSES listings. A node processed in this run (by uid) is
 * never rolled twice, whatever its annotations say. Any failure or cancellation in any pass ends
 * the run with the nodes processed so far in the result.
 */
async function rollPasses(ctx: RunContext, runs: NodeRuns, first: { selected: NodeState[] }): Promise<RolloutResult> {
  const done = new Set<string>();
  const base = { records: [], upToDate: [] };
  let pass = first;
  let emptyListings = 0;
  try {
    for (let extra = 0; ;) {
      const todo = pass.selected.filter((n) => !done.has(n.uid));
      if (todo.length > 0) {
        emptyListings = 0;
        await prefetchVersions(ctx, todo);
        if (extra > 0) ctx.log.info(`listing again found ${todo.length} more node(s) to roll: ${todo.map((n) => n.name).join(', ')}`);
        const stopped = await rollNodes(ctx, runs, todo, done);
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
      ctx.cancelled?.() && !(e instanceof CancelledError) ? new CancelledError(`the run was cancelled (${errorMessage(e)})`) : e;
    return { ...base, result: 'failed', notReached: [], error: endedEarly(error, done.size) };
  }
  return { ...base, result: 'processed', notReached: [] };
}

/** An error that ended the run between nodes, saying truthfully how far the run got. */
function endedEarly(e: unknown, processed: number): Error {
  if (e instanceof InputError) return e;
  const so = processed === 0 ? 'no node was processed' : `${processed} node(s) were already processed (listed below)`;
  const err = e instanceof Error ? e : new Error(String(e));
  err.message = `${err.message}; ${so} and no further node was started`;
  return err;
}

/** Roll `selected` one at a time; returns the failed result when a node stops the roll. */
async function rollNodes(ctx: RunContext, runs: NodeRuns, selected: NodeState[], done: Set<string>): Promise<RolloutResult | undefined> {
  for (const [i, node] of selected.entries()) {
    if (ctx.cancelled?.()) {
      return {
        result: 'failed',
        records: [],
        notReached: selected.slice(i).map((n) => n.name),
        upToDate: [],
        error: new CancelledError(`the run was cancelled; ${done.size} node(s) were processed and no further node was started`),
      };
    }
    done.add(node.uid);
    const endGroup = ctx.log.group(`${node.name} (${node.role})`);
    const run = runs.start(node);
    try {
      await rollNode(ctx, run);
      run.finish();
    } catch (e) {
      const stop = await stopNode(ctx, run, e);
      run.finish();
      endGroup();
      return {
        result: 'failed',
        records: [],
        notReached: selected.slice(i + 1).map((n) => n.name),
        upToDate: [],
        error: new RolloutError(node.name, stop.message, stop.opts.nextStep ?? ''),
      };
    }
    endGroup();
  }
  return undefined;
}
