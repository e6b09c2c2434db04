// The fence before each mutation: the fence read (the node, and the run Lease beside it in the same
// command), the proof that the run may mutate now (not cancelled, the Lease still ours), and the
// guard (the node still shows this run's claim; another actor's change leaves it as they set it; a node
// Kubernetes cannot reach goes on while the Talos API answers).
// docs/architecture.md#lease-proof says why a read beside the node proves the Lease.
import type { LeaseReading } from '../adapters/types.js';
import { unique } from '../core/async.js';
import type { NodeState } from '../core/model/node.js';
import { guardStep, STEP } from '../core/steps.js';
import { checkGuard } from '../rules/claim.js';
import { identityChanges } from '../rules/inventory.js';
import { kubeletUnreachable } from '../rules/reachability.js';
import type { RolloutDeps, RunContext } from './context.js';
import { CancelledError } from './errors.js';
import type { NodeRun } from './nodeRun.js';
import { NodeStop } from './stop.js';

/** A fence read of a node; under a run Lease, the Lease read in the same command (see beforeMutation). */
export interface FenceRead {
  node: NodeState;
  lease?: LeaseReading;
}

/** One process either way: `kubectl get node/N` alone, or with the run Lease beside it. */
export async function readNodeForMutation(ctx: Pick<RolloutDeps, 'kube' | 'lock'>, name: string): Promise<FenceRead> {
  if (!ctx.lock) return { node: await ctx.kube.getNode(name) };
  return ctx.kube.getNodeAndLease(name, ctx.lock.ref.namespace, ctx.lock.ref.name);
}

/**
 * Immediately before every mutation that moves the roll forward: a cancelled run starts nothing new,
 * and the Lease must still be ours. Before a Talos mutation, the drain, the reboot and the verified
 * release (`fresh`), that must be proven now, not taken from the lock's state cached between ticks:
 * by `read`, the Lease as read together with the node in the fence read that immediately precedes
 * the mutation (no other step in between), or else by a renewal (RunLock.confirm has the rule).
 * After a reboot that read is the last poll of the wait for Ready: the proof is read before that wait,
 * so with no verify-image nothing runs between the poll and the release (node.ts, releaseVerified).
 * The claim and the phase patch only check the cached state: they touch nothing but our own
 * annotations and the cordon, and the fresh proof before the credential patch undoes them (the claim
 * is released, nothing on Talos having changed) when the Lease was lost meanwhile.
 */
export async function beforeMutation(
  ctx: Pick<RolloutDeps, 'cancelled' | 'lock'>,
  opts: { fresh: false } | { fresh: true; read: FenceRead | undefined },
): Promise<void> {
  const cancelled = () => new CancelledError('the run was cancelled; no further mutation was started');
  if (ctx.cancelled?.()) throw cancelled();
  if (!opts.fresh) return ctx.lock?.assertHeld();
  try {
    await ctx.lock?.confirm(opts.read?.lease);
  } catch (e) {
    // A cancellation kills the renewal too: that is the cancellation, not a lost Lease.
    if (ctx.cancelled?.()) throw cancelled();
    throw e;
  }
}

/** What the node must still show while we hold it: the identity we read, and the fence we set. */
export function claimProblems(ctx: RunContext, run: NodeRun, node: NodeState): string[] {
  return unique([...identityChanges(run.node, node), ...checkGuard(run.capture!, node, ctx.keys)]);
}

export async function fenceProblems(ctx: RunContext, run: NodeRun, label: string): Promise<FenceRead & { problems: string[] }> {
  const read = await run.step(label, () => readNodeForMutation(ctx, run.node.name));
  return { ...read, problems: claimProblems(ctx, run, read.node) };
}

/**
 * Another actor changed the node while we hold it. Nothing more is done to it, not even an uncordon
 * (an autoscaler may be deleting it; a changed address may point at another machine).
 */
export function claimLost(label: string, problems: string[], seen: NodeState | undefined): NodeStop {
  // stopNode says who holds the node now (from `seen`) and what a person does next (leftAsSetReport)
  return new NodeStop('failed', `guard failed ${label}: ${problems.join('; ')}`, {
    disposition: 'leave-as-set',
    seen,
    nextStep: 'It was not rebooted.',
  });
}

/**
 * The guard: a fresh read of the node must still show our claim (claimLost otherwise), and a node
 * Kubernetes cannot reach must still answer over the Talos API (reachable). Runs only before the
 * reboot is sent (around the drain), which is why a node that cannot be reached at all is released.
 */
export async function guard(ctx: RunContext, run: NodeRun, label: string): Promise<FenceRead> {
  const { problems, ...read } = await fenceProblems(ctx, run, guardStep(label));
  if (problems.length > 0) throw claimLost(label, problems, read.node);
  if (!(await reachable(ctx, run, read.node, label))) return read;
  // Talos was asked after the fence read: it no longer immediately precedes the next mutation, so its
  // Lease is no proof for it (beforeMutation); the mutation proves the Lease by a renewal instead
  return { node: read.node };
}

/**
 * An unreachable node (kubeletUnreachable) is Kubernetes' observation, not another actor's write: the
 * roll goes on while the Talos API answers (the reboot, the wait for Ready and the proof then judge the
 * node). When Talos does not answer either, the node cannot be reached at all: it is stopped as a
 * failed drain stops it, released (nothing was rebooted, its containerd runs as before), with what to
 * check; never left as another actor set it. One Talos read, only on a node marked unreachable.
 * Returns whether Talos was asked.
 */
async function reachable(ctx: RunContext, run: NodeRun, node: NodeState, label: string): Promise<boolean> {
  const silent = kubeletUnreachable(node);
  if (!silent) return false;
  const answer = await run.step(
    STEP.talosAnswers,
    async () => (await ctx.talos.version([run.address])).get(run.address) ?? { ok: false as const, error: 'no answer' },
    (r) => (r.ok ? `Talos ${r.value} answers; going on (${silent})` : undefined),
  );
  if (answer.ok) return true;
  throw new NodeStop(
    'failed',
    `${run.node.name} cannot be reached ${label}: ${silent}, and the Talos API does not answer either: ${answer.error}`,
    {
      disposition: 'release',
      nextStep:
        `The node was released (uncordoned unless it was cordoned before the run) and was not rebooted. Neither Kubernetes nor the Talos API at ${run.address} reaches it: ` +
        `check the machine (power, network), \`talosctl -n ${run.address} version\` and \`kubectl get node ${run.node.name}\`, then rerun.`,
    },
  );
}
