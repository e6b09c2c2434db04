// Drain → reboot → Ready → prove, under the claim, with the guard and the quorum gate in between.
import { formatDuration } from '../format.js';
import type { TalosClient } from '../adapters/types.js';
import { errorMessage } from '../errors.js';
import type { NodeState } from '../model.js';
import { checkGuard, lifecycleTaints } from '../rules/claim.js';
import { identityChanges } from '../rules/inventory.js';
import { quorumGate } from '../rules/quorum.js';
import { LeaseLostError } from '../lease.js';
import { beforeMutation, readNodeForMutation, type FenceRead, type RunContext } from './context.js';
import { readOne } from './evidence.js';
import { NodeStop, settleProof, type NodeRun } from './nodeRun.js';
import { isTransport, waitForApiserver } from './transport.js';

/** What the node must still show while we hold it: the identity we read, and the fence we set. */
export async function fenceProblems(ctx: RunContext, run: NodeRun, label: string): Promise<FenceRead & { problems: string[] }> {
  const read = await run.step(label, () => readNodeForMutation(ctx, run.node.name));
  const problems = [...new Set([...identityChanges(run.node, read.node), ...checkGuard(run.capture!, read.node, ctx.keys)])];
  return { ...read, problems };
}

/**
 * The guard: another actor changed the node while we hold it. Nothing more is done to it, not even
 * an uncordon (an autoscaler may be deleting it; a changed address may point at another machine).
 */
export async function guard(ctx: RunContext, run: NodeRun, label: string): Promise<FenceRead> {
  const { problems, ...read } = await fenceProblems(ctx, run, `guard (${label})`);
  if (problems.length > 0) {
    throw new NodeStop('failed', `guard failed ${label}: ${problems.join('; ')}`, {
      disposition: 'leave-as-set',
      seen: read.node,
      nextStep: 'It was not rebooted.',
    });
  }
  return read;
}

class QuorumRefusal extends Error {
  constructor(readonly problems: string[]) {
    super(`control-plane reboot refused by the quorum gate: ${problems.join('; ')}`);
  }
}

async function etcdReading(talos: TalosClient, address: string) {
  const wrap = async <T>(f: () => Promise<T>) => {
    try {
      return { ok: true as const, value: await f() };
    } catch (e) {
      return { ok: false as const, error: errorMessage(e) };
    }
  };
  const [status, alarms] = await Promise.all([wrap(() => talos.etcdStatus(address)), wrap(() => talos.etcdAlarms(address))]);
  return { status, alarms };
}

async function checkQuorum(ctx: RunContext, run: NodeRun, label: string): Promise<void> {
  const problems = await run.step(`quorum gate (${label})`, async () => {
    const nodes = await ctx.kube.listNodes();
    const controlPlanes = nodes.filter((n) => n.role === 'control-plane');
    const etcd = new Map<string, Awaited<ReturnType<typeof etcdReading>>>();
    // The peers are independent and read-only: ask them all at once.
    const peers = controlPlanes.map((p) => p.internalIPs[0]).filter((a, i) => controlPlanes[i].name !== run.node.name && !!a);
    const readings = await Promise.all(peers.map((a) => etcdReading(ctx.talos, a)));
    peers.forEach((a, i) => etcd.set(a, readings[i]));
    return quorumGate({ target: run.node.name, controlPlanes, etcd });
  });
  if (problems.length > 0) throw new QuorumRefusal(problems);
}

/**
 * The quorum gate for a control plane; a refusal gives the node back (nothing was rebooted).
 * Returns the fence read still usable as the Lease proof of the next mutation: none after the gate
 * ran, since the proof must come from the read immediately before the mutation.
 */
async function quorumOrRelease(
  ctx: RunContext,
  run: NodeRun,
  fence: FenceRead,
  label: string,
  nextStep: string,
): Promise<FenceRead | undefined> {
  if (run.node.role !== 'control-plane') return fence;
  try {
    await checkQuorum(ctx, run, label);
  } catch (e) {
    if (!(e instanceof QuorumRefusal)) throw e;
    throw new NodeStop('refused', e.message, { disposition: 'release', nextStep });
  }
  return undefined;
}

async function drain(ctx: RunContext, run: NodeRun, proof: FenceRead | undefined): Promise<void> {
  const name = run.node.name;
  run.enter('draining');
  try {
    try {
      await run.step('drain', async () => {
        await beforeMutation(ctx, { fresh: true, read: proof });
        return ctx.kube.drain(name, ctx.config.drainTimeoutMs);
      });
    } catch (e) {
      // A drain cut off by the network is retried once under the same claim, after the apiserver
      // answers again and the guard and the Lease still hold. A PDB timeout is never retried: it
      // is the cluster saying no.
      if (!isTransport(e) || ctx.cancelled?.()) throw e;
      await waitForApiserver(ctx, run);
      const again = await guard(ctx, run, 'after the drain was cut off');
      await run.step('drain (retry after a transport failure)', async () => {
        await beforeMutation(ctx, { fresh: true, read: again });
        return ctx.kube.drain(name, ctx.config.drainTimeoutMs);
      });
    }
  } catch (e) {
    // A lost Lease is not a drain failure: Talos was patched, so the node stays fenced for a person
    // (stopNode's default). A cancellation is one: the pods that could not move stay where they were.
    if (e instanceof NodeStop || e instanceof LeaseLostError) throw e;
    // A drain that did not finish leaves the pods that could not move where they were: restore schedulability.
    throw new NodeStop('failed', `drain failed: ${errorMessage(e)}`, {
      disposition: 'release',
      nextStep:
        'The node was uncordoned again (unless it was cordoned before the run) and was not rebooted. Check the PodDisruptionBudgets that blocked the drain, then rerun.',
    });
  }
}

/** Wait for Ready with a new boot id and the lifecycle taints gone; anything else in the guard changing is a failure. */
async function waitForReady(ctx: RunContext, run: NodeRun, bootBefore: string): Promise<NodeState> {
  const { kube, config, keys, clock } = ctx;
  const name = run.node.name;
  const deadline = clock.now() + config.readyTimeoutMs;
  return run.step('wait for Ready', async () => {
    let transportRetried = false;
    for (;;) {
      let node: NodeState;
      try {
        node = await kube.getNode(name);
      } catch (e) {
        // The apiserver may itself be restarting (a control plane just rebooted): wait for it once.
        if (!isTransport(e) || transportRetried) throw e;
        transportRetried = true;
        await waitForApiserver(ctx, run);
        continue;
      }
      const problems = [...identityChanges(run.node, node), ...checkGuard(run.capture!, node, keys, { allowLifecycleTaints: true })];
      if (problems.length > 0) throw new NodeStop('failed', `while waiting for ${name} to come back: ${problems.join('; ')}`);
      if (node.ready === 'True' && lifecycleTaints(node).length === 0 && node.bootID !== bootBefore) return node;
      if (clock.now() + ctx.pollIntervalMs > deadline) {
        throw new NodeStop(
          'failed',
          `${name} did not come back Ready with a new boot id and without lifecycle taints within ${formatDuration(config.readyTimeoutMs)} (Ready=${node.ready}, taints: ${lifecycleTaints(node).join(', ') || 'none'}, boot id ${node.bootID === bootBefore ? 'unchanged' : 'changed'})`,
        );
      }
      await clock.sleep(ctx.pollIntervalMs);
    }
  });
}

/** Drain, reboot, wait for Ready, prove. A stop after the reboot was sent leaves the node fenced (the default). */
export async function rebootNode(ctx: RunContext, run: NodeRun): Promise<void> {
  const { talos, config } = ctx;
  const name = run.node.name;

  const beforeDrain = await guard(ctx, run, 'before drain');
  const drainProof = await quorumOrRelease(
    ctx,
    run,
    beforeDrain,
    'before drain',
    'The node was released and was not drained or rebooted. Fix etcd on the peers, then rerun.',
  );
  await drain(ctx, run, drainProof);
  const drained = await guard(ctx, run, 'after drain');
  const rebootProof = await quorumOrRelease(
    ctx,
    run,
    drained,
    'after drain',
    'The node was drained but not rebooted, and released again. Fix etcd on the peers, then rerun.',
  );

  const bootBefore = drained.node.bootID;
  run.enter('rebooting');
  await run.step('talosctl reboot', async () => {
    await beforeMutation(ctx, { fresh: true, read: rebootProof });
    return talos.reboot(run.address, config.readyTimeoutMs);
  });
  const back = await waitForReady(ctx, run, bootBefore);

  // Prove it: a new boot, and the evidence rule now holds.
  run.enter('proving');
  const proof = await run.step(
    'prove the new credential is loaded',
    () => readOne(ctx, name, run.address),
    (v) => `${v.verdict}: ${v.reason}`,
  );
  run.record.proof = proof;
  settleProof(ctx, run, proof, { before: bootBefore, after: back.bootID });
}
