// The passes of a run: roll the selection, list again, roll what became stale or appeared meanwhile (an
// autoscaler scale-out), until nothing new appears. Each pass's scheduler is src/pipeline/scheduler.ts.
import { errorMessage, InputError } from '../core/errors.js';
import type { RunContext } from './context.js';
import { CancelledError, EndedEarlyError } from './errors.js';
import { prefetchVersions } from './evidence.js';
import { listAndSelect, type Listing } from './listing.js';
import type { NodeRuns } from './nodeRun.js';
import { rollNodes, type RollEnd, type RollState } from './scheduler.js';

/** How many listings after the first pass may still find work (an autoscaler keeps adding nodes). */
const MAX_EXTRA_PASSES = 5;

/**
 * 3. Roll the selected nodes, then list again: nodes that became stale or appeared meanwhile (an
 * autoscaler scale-out) are rolled in a further pass. The run ends when two consecutive listings
 * select nothing new, or after MAX_EXTRA_PASSES listings. A node processed in this run (by uid) is
 * never rolled twice, whatever its annotations say. Any failure or cancellation in any pass ends
 * the run with the nodes processed so far in the result.
 */
export async function rollPasses(
  ctx: RunContext,
  nodeRuns: NodeRuns,
  first: Listing,
  roll: RollState,
  last: { listing: Listing },
): Promise<RollEnd> {
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
      // and after the pause: the channel outlives a cancellation (for the step's releases), so a
      // listing sent now would be answered, and a cancelled run starts no new step
      if (ctx.cancelled?.()) throw new CancelledError('the run was cancelled');
      extra++;
      pass = await listAndSelect(ctx, done.size);
      // the latest listing is what the old-credential verdict judges
      last.listing = pass;
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

/** An input error already says nothing was started; anything else is wrapped to say how far the run got. */
function endedEarly(e: unknown, processed: number): Error {
  return e instanceof InputError ? e : new EndedEarlyError(e, processed);
}
