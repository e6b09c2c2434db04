// The run Lease at the run's end: kept while a node of this run is left claimed, else released.
import { errorMessage } from '../core/errors.js';
import type { RunContext } from './context.js';
import { LeaseNotReleasedError } from './errors.js';
import type { NodeRuns } from './nodeRun.js';

/**
 * The Lease at the end. A node left claimed keeps it held: nobody should start another roll until a
 * person has looked at it (recover-fences releases it once this run is completed). Otherwise it is
 * released; when someone else holds it by then, it is left alone and the run fails (it was not ours
 * for some of the time it should have been): the error returned says so.
 */
export async function endLease(ctx: RunContext, nodeRuns: NodeRuns): Promise<Error | undefined> {
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
  return new LeaseNotReleasedError(outcome.message);
}
