// The drain of a node under its claim, with its gates: first the settle gate's step
// (src/pipeline/settle.ts holds the gate: the wait, as a step of the node's record, then the node's
// pod list and its controllers' counts), the guard and the quorum gate (src/pipeline/quorum.ts), then
// the drain itself, watched so it ends the moment the node stops being ours, retried once after a cut
// connection, and a failure turned into the node's stop: released, or quarantined under
// `undrainable: quarantine` (src/pipeline/quarantine.ts); then the guard and the quorum gate again.
import { ToolError, errorMessage } from '../core/errors.js';
import type { NodeState } from '../core/model/node.js';
import { CHECKPOINT, STEP } from '../core/steps.js';
import type { RunContext } from './context.js';
import { CancelledError, DrainUnwatched, LeaseLostError, SettleTimeoutError } from './errors.js';
import { beforeMutation, claimLost, claimProblems, guard, type FenceRead } from './fence.js';
import type { NodeRun } from './nodeRun.js';
import { isDrainTimeout, quarantineCause } from './quarantine.js';
import { quorumOrRelease } from './quorum.js';
import { NodeStop } from './stop.js';
import { isTransport, waitForApiserver } from './apiserver.js';

const REFUSED_BEFORE_DRAIN =
  'The node was released and was not drained or rebooted. Fix etcd on the peers (or remove the etcd members the refusal names), then rerun.';

const REFUSED_AFTER_DRAIN =
  'The node was drained but not rebooted, and released again. Fix etcd on the peers (or remove the etcd members the refusal names), then rerun.';

/**
 * The drain under its gates: the settle gate, the guard and (for a control plane) the quorum gate
 * before it, the guard and the quorum gate again after it. Returns the guard read after the drain
 * and the fence read still usable as the reboot's Lease proof (none after a quorum gate ran).
 */
export async function drainNode(ctx: RunContext, run: NodeRun): Promise<{ drained: FenceRead; rebootProof: FenceRead | undefined }> {
  await settleBeforeDrain(ctx, run);
  const beforeDrain = await guard(ctx, run, CHECKPOINT.beforeDrain);
  const drainProof = await quorumOrRelease(ctx, run, beforeDrain, CHECKPOINT.beforeDrain, REFUSED_BEFORE_DRAIN);
  await drain(ctx, run, drainProof, beforeDrain.node);
  run.drainDone();
  const drained = await guard(ctx, run, CHECKPOINT.afterDrain);
  const rebootProof = await quorumOrRelease(ctx, run, drained, CHECKPOINT.afterDrain, REFUSED_AFTER_DRAIN);
  return { drained, rebootProof };
}

const CANCELLED_NEXT_STEP =
  'The run was cancelled before the drain: the node was released (its cordon state restored) and was neither drained nor rebooted. Rerun.';

const CANCELLED_DURING_DRAIN_NEXT_STEP =
  'The run was cancelled during the drain: the node was uncordoned again (unless it was cordoned before the run) and was not rebooted; the pods already evicted run elsewhere. Rerun.';

const UNREAD_NEXT_STEP =
  'The node was released and was not drained or rebooted. Check that the action may list pods, deployments, replicasets and statefulsets (deploy/rbac.yaml) and the connection to the apiserver, then rerun.';

/**
 * Before a drain: wait for what the finished nodes evicted, then list the node's pods, so what its
 * drain evicts can be named by controller. Nothing at all when settle-timeout is 0. A timeout, or a
 * read the gate cannot make, releases the node as a failed drain does: it was neither drained nor rebooted.
 */
async function settleBeforeDrain(ctx: RunContext, run: NodeRun): Promise<void> {
  const gate = ctx.settle;
  if (!gate.enabled) return;
  const name = run.node.name;
  // Published before the wait: nothing is drained and no reboot started, so a run that ends here (a
  // job timeout, a cancellation) gives the node back, in the main step or the post step (src/fences/post.ts).
  run.enter('settling');
  try {
    if (gate.waiting) await run.step(STEP.settleWait, () => gate.wait(ctx.log, name, 'drain'));
    const owners = await run.step(
      STEP.settleListPods,
      () => gate.listBeforeDrain(name),
      (o) => `${o.length} controller(s) whose pods a drain evicts`,
    );
    // what those controllers report just before the drain is what the next drain waits to see again
    if (owners.length > 0)
      await run.step(
        STEP.settleBaseline,
        () => gate.readBaseline(name, owners),
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

/**
 * The drain, ended the moment the node stops being ours. One watch of the node runs beside it, from
 * `since` (the guard read before it, so nothing written after that read goes unseen), and every
 * state it reports is judged by the guard's own rule; a lost claim kills the drain at once and is
 * reported as the guard reports it. When the watch cannot be kept, the node may have changed unseen:
 * the drain is ended too (evicting on an unproven claim is what this prevents) and a fresh guard read
 * decides between "lost" (left as set) and a failed drain (released by the CAS-guarded release).
 */
async function watchedDrain(ctx: RunContext, run: NodeRun, since: NodeState): Promise<void> {
  const name = run.node.name;
  const endDrain = new AbortController();
  const endWatch = new AbortController();
  let lost: string[] | undefined;
  let lastSeen: NodeState | undefined;
  let watchFailure: unknown;
  const watching = ctx.kube
    .watchNode(
      name,
      since.resourceVersion,
      (node) => {
        if (lost) return;
        lastSeen = node;
        // the controller taints (the condition taints, the cordon mirror) are no other actor (checkGuard)
        const problems = node ? claimProblems(ctx, run, node) : [`${name} was deleted`];
        if (problems.length === 0) return;
        lost = problems;
        endDrain.abort();
      },
      endWatch.signal,
    )
    .catch((e: unknown) => {
      watchFailure = e;
      endDrain.abort();
    });
  let drainFailure: { error: unknown } | undefined;
  try {
    await ctx.kube.drain(name, ctx.config.drainTimeoutMs, endDrain.signal, (pods) => ctx.settle.drained(name, pods));
  } catch (e) {
    drainFailure = { error: e };
  } finally {
    endWatch.abort();
    await watching;
  }
  if (lost) throw claimLost('during the drain (the drain was ended at once)', lost, lastSeen);
  if (!drainFailure) return;
  if (watchFailure !== undefined && endDrain.signal.aborted) {
    await guard(ctx, run, CHECKPOINT.afterWatchLost);
    throw new DrainUnwatched(`it was ended because the node could not be watched: ${errorMessage(watchFailure)}`);
  }
  throw drainFailure.error;
}

async function drain(ctx: RunContext, run: NodeRun, proof: FenceRead | undefined, since: NodeState): Promise<void> {
  run.enter('draining');
  try {
    try {
      await run.step(STEP.drain, async () => {
        await beforeMutation(ctx, { fresh: true, read: proof });
        return watchedDrain(ctx, run, since);
      });
    } catch (e) {
      // A drain cut off by the network is retried once under the same claim, after the apiserver
      // answers again and the guard and the Lease still hold. A PDB timeout is never retried: it
      // is the cluster saying no.
      if (!isTransport(e) || ctx.cancelled?.()) throw e;
      await waitForApiserver(ctx, run);
      const again = await guard(ctx, run, CHECKPOINT.afterCutOff);
      await run.step(STEP.drainRetry, async () => {
        await beforeMutation(ctx, { fresh: true, read: again });
        return watchedDrain(ctx, run, again.node);
      });
    }
  } catch (e) {
    // A lost Lease is not a drain failure: Talos was patched, so the node stays fenced for a person
    // (stopNode's default). A cancellation is one: the pods that could not move stay where they were.
    if (e instanceof NodeStop || e instanceof LeaseLostError) throw e;
    // `undrainable: quarantine`: a drain that timed out leaves the node cordoned, not rebooted, for
    // stopNode to quarantine; the roll goes on (src/pipeline/quarantine.ts says which failures count).
    if (ctx.config.undrainable === 'quarantine' && isDrainTimeout(e)) {
      const q = await quarantineCause(ctx, run, e);
      throw new NodeStop('quarantined', q.message, { disposition: 'quarantine', quarantine: q.cause }, { cause: e });
    }
    // A drain that did not finish leaves the pods that could not move where they were: restore schedulability.
    // Ended by the run's cancellation (the adapter ends a drain at once then): said as such, not as a
    // drain the cluster refused.
    if (ctx.cancelled?.()) {
      throw new NodeStop(
        'failed',
        `drain ended: the run was cancelled (${errorMessage(e)})`,
        { disposition: 'release', nextStep: CANCELLED_DURING_DRAIN_NEXT_STEP },
        { cause: e },
      );
    }
    throw new NodeStop(
      'failed',
      `drain failed: ${errorMessage(e)}`,
      {
        disposition: 'release',
        nextStep:
          e instanceof DrainUnwatched
            ? 'The node was uncordoned again (unless it was cordoned before the run) and was not rebooted. The drain was ended while its claim could not be watched; check the connection to the apiserver, then rerun.'
            : 'The node was uncordoned again (unless it was cordoned before the run) and was not rebooted. Check the PodDisruptionBudgets that blocked the drain, then rerun.',
      },
      { cause: e },
    );
  }
}
