// Drain → reboot → prove → Ready, under the claim, with the guard and the quorum gate in between.
import { formatDuration } from '../core/format.js';
import type { TalosClient } from '../adapters/types.js';
import { unique } from '../core/async.js';
import { RebootNotSentError, ServerIdentityError, errorMessage } from '../core/errors.js';
import type { EvidenceVerdict, NodeState, Reading } from '../core/model.js';
import { checkGuard, lifecycleTaints } from '../rules/claim.js';
import { identityChanges } from '../rules/inventory.js';
import { readAgainBecause } from '../rules/proof.js';
import { quorumGate, type EtcdReadings } from '../rules/quorum.js';
import { CHECKPOINT, guardStep, quorumGateStep, STEP } from '../core/steps.js';
import { LeaseLostError } from './lease.js';
import { beforeMutation, readNodeForMutation, type FenceRead, type RunContext } from './context.js';
import { readOne } from './evidence.js';
import { NodeStop, settleProof, type NodeRun } from './nodeRun.js';
import { isDrainTimeout, quarantineStop } from './quarantine.js';
import { settleBeforeDrain } from './settleDrain.js';
import { isTransport, waitForApiserver } from './transport.js';

/** What the node must still show while we hold it: the identity we read, and the fence we set. */
function claimProblems(ctx: RunContext, run: NodeRun, node: NodeState, opts: { allowConditionTaints?: boolean } = {}): string[] {
  return unique([...identityChanges(run.node, node), ...checkGuard(run.capture!, node, ctx.keys, opts)]);
}

export async function fenceProblems(ctx: RunContext, run: NodeRun, label: string): Promise<FenceRead & { problems: string[] }> {
  const read = await run.step(label, () => readNodeForMutation(ctx, run.node.name));
  return { ...read, problems: claimProblems(ctx, run, read.node) };
}

/**
 * Another actor changed the node while we hold it. Nothing more is done to it, not even an uncordon
 * (an autoscaler may be deleting it; a changed address may point at another machine).
 */
function claimLost(label: string, problems: string[], seen: NodeState | undefined): NodeStop {
  // stopNode says who holds the node now (from `seen`) and what a person does next (leftAsSetReport)
  return new NodeStop('failed', `guard failed ${label}: ${problems.join('; ')}`, {
    disposition: 'leave-as-set',
    seen,
    nextStep: 'It was not rebooted.',
  });
}

/** The guard: a fresh read of the node must still show our claim (claimLost otherwise). */
export async function guard(ctx: RunContext, run: NodeRun, label: string): Promise<FenceRead> {
  const { problems, ...read } = await fenceProblems(ctx, run, guardStep(label));
  if (problems.length > 0) throw claimLost(label, problems, read.node);
  return read;
}

class QuorumRefusal extends Error {
  constructor(readonly problems: string[]) {
    super(`control-plane reboot refused by the quorum gate: ${problems.join('; ')}`);
  }
}

async function reading<T>(f: () => Promise<T>): Promise<Reading<T>> {
  try {
    return { ok: true, value: await f() };
  } catch (e) {
    // an unreadable peer refuses the reboot; a refused server certificate stops the node instead
    if (e instanceof ServerIdentityError) throw e;
    return { ok: false, error: errorMessage(e) };
  }
}

/** A peer's etcd: its own status, the alarms, and its copy of etcd's member list. */
async function etcdReading(talos: TalosClient, address: string): Promise<EtcdReadings> {
  const [status, alarms, members] = await Promise.all([
    reading(() => talos.etcdStatus(address)),
    reading(() => talos.etcdAlarms(address)),
    reading(() => talos.etcdMembers(address)),
  ]);
  return { status, alarms, members };
}

/**
 * Every peer is asked for its status, the alarms and its copy of the member list (the gate requires
 * the copies to agree: src/rules/quorum.ts); the target is asked only for its status, which names its
 * own member (a failure there is no refusal: the target's etcd is the one going down).
 */
async function checkQuorum(ctx: RunContext, run: NodeRun, label: string): Promise<void> {
  const problems = await run.step(quorumGateStep(label), async () => {
    const nodes = await ctx.kube.listNodes();
    const controlPlanes = nodes.filter((n) => n.role === 'control-plane');
    const etcd = new Map<string, EtcdReadings>();
    // The peers are independent and read-only: ask them all at once.
    const peers = controlPlanes.map((p) => p.internalIPs[0]).filter((a, i) => controlPlanes[i].name !== run.node.name && !!a);
    const [targetStatus, readings] = await Promise.all([
      reading(() => ctx.talos.etcdStatus(run.address)),
      Promise.all(peers.map((a) => etcdReading(ctx.talos, a))),
    ]);
    peers.forEach((a, i) => etcd.set(a, readings[i]));
    return quorumGate({ target: run.node.name, controlPlanes, etcd, targetStatus });
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

/** The watch of the node could not be kept, so the drain was ended: the claim was no longer proven. */
class DrainUnwatched extends Error {}

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
        // the node lifecycle controller's condition taints come and go with the kubelet's reports: no other actor
        const problems = node ? claimProblems(ctx, run, node, { allowConditionTaints: true }) : [`${name} was deleted`];
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
    if (ctx.config.undrainable === 'quarantine' && isDrainTimeout(e)) throw await quarantineStop(ctx, run, e);
    // A drain that did not finish leaves the pods that could not move where they were: restore schedulability.
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

/**
 * Wait for Ready with a new boot id and the lifecycle taints gone; anything else in the guard changing
 * is a failure. Each poll is a fence read (the node, and the run Lease beside it in the same command):
 * the last one, Ready, is returned so that the release, when no step runs between them, takes it as
 * its fence read instead of reading the node once more.
 */
async function waitForReady(ctx: RunContext, run: NodeRun, bootBefore: string, deadline: number): Promise<FenceRead> {
  const { config, keys, clock } = ctx;
  const name = run.node.name;
  return run.step(STEP.waitReady, async () => {
    let transportRetried = false;
    for (;;) {
      let read: FenceRead;
      try {
        read = await readNodeForMutation(ctx, name);
      } catch (e) {
        // The apiserver may itself be restarting (a control plane just rebooted): wait for it once.
        if (!isTransport(e) || transportRetried) throw e;
        transportRetried = true;
        await waitForApiserver(ctx, run);
        continue;
      }
      const node = read.node;
      const problems = [...identityChanges(run.node, node), ...checkGuard(run.capture!, node, keys, { allowLifecycleTaints: true })];
      if (problems.length > 0) throw new NodeStop('failed', `while waiting for ${name} to come back: ${problems.join('; ')}`);
      if (node.ready === 'True' && lifecycleTaints(node).length === 0 && node.bootID !== bootBefore) return read;
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

/**
 * The post-reboot evidence: one reading (the `prove` step); when it is not final yet
 * (readAgainBecause: Talos answers before it loads cri and before machined has written the CRI files
 * of the rebuilt /etc, and a cri restarted a moment ago has no health yet), a second step reads it
 * again until it is final or `deadline`, and its last reading is the one judged. Two steps, so the
 * record (and the benchmark's own time) tells the boot's wait from the proof's work.
 */
async function readProof(ctx: RunContext, run: NodeRun, deadline: number): Promise<EvidenceVerdict> {
  const describe = (v: EvidenceVerdict) => `${v.verdict}: ${v.reason}`;
  const first = await run.step(STEP.prove, () => readOne(ctx, run.node.name, run.address), describe);
  if (readAgainBecause(first) === undefined || ctx.cancelled?.()) return first;
  return run.step(STEP.waitProofFinal, () => readUntilFinal(ctx, run, first, deadline), describe);
}

async function readUntilFinal(ctx: RunContext, run: NodeRun, first: EvidenceVerdict, deadline: number): Promise<EvidenceVerdict> {
  ctx.log.info(`${run.node.name}: after the reboot ${readAgainBecause(first)}; reading it again until it is final (ready-timeout)`);
  for (let proof = first; ;) {
    if (ctx.clock.now() + ctx.pollIntervalMs > deadline) {
      ctx.log.info(`${run.node.name}: still at the ready-timeout, ${readAgainBecause(proof)}`);
      return proof;
    }
    await ctx.clock.sleep(ctx.pollIntervalMs);
    proof = await readOne(ctx, run.node.name, run.address);
    if (readAgainBecause(proof) === undefined || ctx.cancelled?.()) return proof;
  }
}

/**
 * Drain, reboot, prove, wait for Ready. A stop after the reboot was sent leaves the node fenced (the
 * default). Returns the last Ready read, a fence read the release may use (see releaseVerified).
 */
export async function rebootNode(ctx: RunContext, run: NodeRun): Promise<FenceRead> {
  const { talos, config } = ctx;

  await settleBeforeDrain(ctx, run);
  const beforeDrain = await guard(ctx, run, CHECKPOINT.beforeDrain);
  const drainProof = await quorumOrRelease(
    ctx,
    run,
    beforeDrain,
    CHECKPOINT.beforeDrain,
    'The node was released and was not drained or rebooted. Fix etcd on the peers (or remove the etcd members the refusal names), then rerun.',
  );
  await drain(ctx, run, drainProof, beforeDrain.node);
  const drained = await guard(ctx, run, CHECKPOINT.afterDrain);
  const rebootProof = await quorumOrRelease(
    ctx,
    run,
    drained,
    CHECKPOINT.afterDrain,
    'The node was drained but not rebooted, and released again. Fix etcd on the peers (or remove the etcd members the refusal names), then rerun.',
  );

  const bootBefore = drained.node.bootID;
  run.enter('rebooting');
  // /etc is rebuilt at boot: what the listings before the reboot showed absent is no fact about the next boot
  ctx.absentPaths.delete(run.address);
  try {
    await run.step(STEP.reboot, async () => {
      await beforeMutation(ctx, { fresh: true, read: rebootProof });
      return talos.reboot(run.address, config.readyTimeoutMs);
    });
  } catch (e) {
    if (!(e instanceof RebootNotSentError)) throw e;
    // Nothing was sent: the node runs the containerd it ran. Give it back as after a failed drain.
    throw new NodeStop(
      'failed',
      `the reboot was not sent, so its containerd still holds the old credential: ${e.message}`,
      {
        disposition: 'release',
        nextStep:
          `The node was drained but not rebooted, and released again (uncordoned unless it was cordoned before the run), without the verified marker; ` +
          `the credential patch was sent, so its machine config may carry the new credential, but its running containerd still holds the old one. ` +
          `Check that Talos answers (\`talosctl -n ${run.address} version\`), then rerun.`,
      },
      { cause: e },
    );
  }
  // ready-timeout bounds the whole coming back: the proof (cri up), then Ready.
  const deadline = ctx.clock.now() + config.readyTimeoutMs;

  // Prove it first: Talos reads only, and Talos answers (the reboot returned once its boot id changed).
  // A proof that contradicts or does not prove stops the node here, left fenced, without the wait.
  run.enter('proving');
  const proof = await readProof(ctx, run, deadline);
  run.recordProof(proof);
  settleProof(ctx, run, proof);
  return waitForReady(ctx, run, bootBefore, deadline);
}
