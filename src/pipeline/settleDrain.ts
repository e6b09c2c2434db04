// The settle gate's step before a node's drain (src/pipeline/settle.ts holds the gate): the wait, as
// a step of the node's record, then the node's pod list. A timeout, or a read the gate cannot make,
// releases the node as a failed drain does: it was neither drained nor rebooted.
import { ToolError, errorMessage } from '../core/errors.js';
import { STEP } from '../core/steps.js';
import { CancelledError, type RunContext } from './context.js';
import { NodeStop, type NodeRun } from './nodeRun.js';
import { SettleTimeoutError } from './settle.js';

const CANCELLED_NEXT_STEP =
  'The run was cancelled before the drain: the node was released (its cordon state restored) and was neither drained nor rebooted. Rerun.';

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
  // Published before the wait: nothing is drained and no reboot started, so a run that ends here (a
  // job timeout, a cancellation) gives the node back, in the main step or the post step (src/action/post.ts).
  run.enter('settling');
  try {
    if (gate.waiting) await run.step(STEP.settleWait, () => gate.wait(ctx, name, 'drain'));
    const owners = await run.step(
      STEP.settleListPods,
      () => gate.listBeforeDrain(ctx, name),
      (o) => `${o.length} controller(s) whose pods a drain evicts`,
    );
    // what those controllers report just before the drain is what the next drain waits to see again
    if (owners.length > 0)
      await run.step(
        STEP.settleBaseline,
        () => gate.readBaseline(ctx, name, owners),
        (n) => `${n} baseline(s)`,
      );
    if (ctx.cancelled?.()) throw new CancelledError('the run was cancelled');
  } catch (e) {
    if (e instanceof SettleTimeoutError) {
      throw new NodeStop('failed', e.reason, { disposition: 'release', nextStep: e.nextStep }, { cause: e });
    }
    // A cancellation (a job timeout): nothing was drained and containerd runs as before, so the node is
    // given back, as after a cancelled drain. A lost Lease keeps stopNode's own rule (left fenced).
    if (ctx.cancelled?.() || e instanceof CancelledError) {
      throw new NodeStop(
        'failed',
        `settle gate: the run was cancelled while it waited (${errorMessage(e)})`,
        {
          disposition: 'release',
          nextStep: CANCELLED_NEXT_STEP,
        },
        { cause: e },
      );
    }
    if (!(e instanceof ToolError)) throw e;
    throw new NodeStop('failed', `settle gate: ${errorMessage(e)}`, { disposition: 'release', nextStep: UNREAD_NEXT_STEP }, { cause: e });
  }
}
