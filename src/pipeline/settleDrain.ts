// The settle gate's step before a node's drain (src/pipeline/settle.ts holds the gate): the wait, as
// a step of the node's record, then the node's pod list. A timeout, or a read the gate cannot make,
// releases the node as a failed drain does: it was neither drained nor rebooted.
import { ToolError, errorMessage } from '../core/errors.js';
import { STEP } from '../core/steps.js';
import type { RunContext } from './context.js';
import { NodeStop, type NodeRun } from './nodeRun.js';
import { SettleTimeoutError } from './settle.js';

const UNREAD_NEXT_STEP =
  'The node was released and was not drained or rebooted. Check that the action may list pods, deployments, replicasets and statefulsets (deploy/rbac.yaml) and the connection to the apiserver, then rerun.';

/**
 * Before a drain: wait for what the finished nodes evicted, then list the node's pods, so what its
 * drain evicts can be named by controller. Nothing at all when settle-timeout is 0.
 */
export async function settleBeforeDrain(ctx: RunContext, run: NodeRun): Promise<void> {
  const gate = ctx.settle;
  if (!gate.enabled) return;
  const name = run.node.name;
  try {
    if (gate.waiting) await run.step(STEP.settleWait, () => gate.wait(ctx, name, 'drain'));
    await run.step("list the node's pods (settle gate)", () => gate.listBeforeDrain(ctx, name));
  } catch (e) {
    if (e instanceof SettleTimeoutError) {
      throw new NodeStop('failed', e.reason, { disposition: 'release', nextStep: e.nextStep }, { cause: e });
    }
    // a cancellation, a lost Lease: stopNode's own rules
    if (!(e instanceof ToolError) || ctx.cancelled?.()) throw e;
    throw new NodeStop('failed', `settle gate: ${errorMessage(e)}`, { disposition: 'release', nextStep: UNREAD_NEXT_STEP }, { cause: e });
  }
}
