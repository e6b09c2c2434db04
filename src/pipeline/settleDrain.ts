// The settle gate's step before a node's drain (src/pipeline/settle.ts holds the gate): the wait, as
// a step of the node's record, turned into a release of the node on timeout; then the node's pod list.
import type { RunContext } from './context.js';
import { NodeStop, type NodeRun } from './nodeRun.js';
import { SettleTimeoutError } from './settle.js';

/**
 * Before a drain: wait for what the finished nodes evicted (a timeout releases the node: it was not
 * drained or rebooted), then list the node's pods, so what its drain evicts can be named by controller.
 * Nothing at all when settle-timeout is 0.
 */
export async function settleBeforeDrain(ctx: RunContext, run: NodeRun): Promise<void> {
  const gate = ctx.settle;
  if (!gate.enabled) return;
  const name = run.node.name;
  if (gate.waiting) {
    try {
      await run.step('settle gate (before drain)', () => gate.wait(ctx, name, 'drain'));
    } catch (e) {
      if (!(e instanceof SettleTimeoutError)) throw e;
      throw new NodeStop('failed', e.reason, { disposition: 'release', nextStep: e.nextStep }, { cause: e });
    }
  }
  await run.step("list the node's pods (settle gate)", () => gate.listBeforeDrain(ctx, name));
}
