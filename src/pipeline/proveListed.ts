// A run with nothing to roll whose listing has nodes to prove (a verified marker without a proof): each
// proven with one step and no claim (src/pipeline/prove.ts), the Talos client opened for the evidence only.
import { errorMessage } from '../core/errors.js';
import type { RolloutFindings } from '../core/model/rolloutResult.js';
import type { RolloutDeps, RunContext } from './context.js';
import { prefetchVersions } from './evidence.js';
import { proofStep, proveNodes, type ToProve } from './prove.js';

/**
 * The nodes to prove of a run with nothing to roll. The Talos client is opened only for the evidence
 * (not for a pull of verify-image), and a client that cannot be opened fails no run: the nodes stay
 * unproven, and the report says why.
 */
export async function proveListed(
  deps: RolloutDeps,
  ctx: RunContext,
  toProve: ToProve[],
): Promise<Pick<RolloutFindings, 'proofChecks' | 'talosReads'>> {
  ctx.log.info(
    `${toProve.length} node(s) to prove (their verified marker does not prove the credential yet): ${toProve.map((p) => p.node.name).join(', ')}`,
  );
  let unavailable: string | undefined;
  let talosReads: string | undefined;
  if (proofStep(ctx) === 'evidence' && !deps.talos && deps.openTalos) {
    try {
      const opened = await deps.openTalos();
      ctx.talos = opened.client;
      talosReads = opened.describe;
      await prefetchVersions(
        ctx,
        toProve.map((p) => p.node),
      );
    } catch (e) {
      unavailable = `the Talos client could not be opened: ${errorMessage(e)}`;
    }
  }
  const proofChecks = await proveNodes(ctx, toProve, unavailable);
  return { proofChecks, ...(talosReads ? { talosReads } : {}) };
}
