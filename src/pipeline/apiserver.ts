// Waiting for the apiserver after a transport failure: the drain's and the reboot's one retry wait for
// `/readyz` (waitForApiserver), and a read after a write whose outcome is unknown waits for it between
// tries (readAfterUnknown: the Lease's acquisition and src/pipeline/write.ts).
import type { KubeClient } from '../adapters/types.js';
import type { Clock } from '../core/clock.js';
import { ToolError } from '../core/errors.js';
import { STEP } from '../core/steps.js';
import type { RunContext } from './context.js';
import type { NodeRun } from './nodeRun.js';

/** How long to wait for the apiserver to answer /readyz again after a transport failure (src/rules/budget.ts counts it). */
export const READYZ_WAIT_MS = 120_000;

export function isTransport(e: unknown): boolean {
  return e instanceof ToolError && e.kind === 'transport';
}

/** After a transport failure: poll `/readyz` (bounded) until the apiserver answers again, as a step of the node's run. */
export async function waitForApiserver(ctx: RunContext, run: NodeRun): Promise<void> {
  await run.step(STEP.waitApiserver, async () => {
    const deadline = ctx.clock.now() + READYZ_WAIT_MS;
    for (;;) {
      try {
        await ctx.kube.readyz();
        return;
      } catch (e) {
        if (ctx.clock.now() + 1000 > deadline || ctx.cancelled?.() || isCancelled(e)) throw e;
        await ctx.clock.sleep(1000);
      }
    }
  });
}

export const isCancelled = (e: unknown): boolean => e instanceof ToolError && e.kind === 'cancelled';

/**
 * After a write whose outcome is unknown (src/core/errors.ts outcomeUnknown): read until the read answers,
 * waiting for `/readyz` between tries, until `deadline` (default READYZ_WAIT_MS from now). Undefined
 * when the outcome stays unknown: the deadline passed, or the run was cancelled (a cancelled run sends
 * nothing more: the post step, a fresh process, reads instead).
 */
export async function readAfterUnknown<T>(
  deps: { kube: Pick<KubeClient, 'readyz'>; clock: Clock; cancelled?: () => boolean },
  read: () => Promise<T>,
  deadline = deps.clock.now() + READYZ_WAIT_MS,
): Promise<T | undefined> {
  for (;;) {
    if (deps.cancelled?.()) return undefined;
    try {
      return await read();
    } catch (e) {
      if (isCancelled(e)) return undefined;
    }
    // The read failed: wait until the apiserver is ready again (a second apart), then read once more.
    for (;;) {
      if (deps.clock.now() + 1000 > deadline || deps.cancelled?.()) return undefined;
      await deps.clock.sleep(1000);
      try {
        await deps.kube.readyz();
        break;
      } catch (e) {
        if (isCancelled(e)) return undefined;
      }
    }
  }
}
