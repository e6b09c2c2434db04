// Drain → reboot → prove → Ready, under the claim: the drain with its gates (src/pipeline/drain.ts),
// the reboot once the Lease is proven, then the proof, read first, and the wait for Ready, whose last
// read the release may take as its fence read.
import { formatDuration } from '../core/format.js';
import { RebootNotSentError } from '../core/errors.js';
import type { EvidenceVerdict } from '../core/model/verdict.js';
import { checkGuard } from '../rules/claim.js';
import { lifecycleTaints } from '../rules/controllerTaints.js';
import { identityChanges } from '../rules/inventory.js';
import { readAgainBecause } from '../rules/proof.js';
import { STEP } from '../core/steps.js';
import type { RunContext } from './context.js';
import { readBootIdBefore } from './bootIdBefore.js';
import { drainNode } from './drain.js';
import { readOne } from './evidence.js';
import { beforeMutation, readNodeForMutation, type FenceRead } from './fence.js';
import type { NodeRun } from './nodeRun.js';
import { NodeStop, settleProof } from './stop.js';
import { isTransport, waitForApiserver } from './apiserver.js';
import { CancelledError } from './errors.js';

/**
 * Drain, reboot, prove, wait for Ready. A stop after the reboot was sent leaves the node fenced (the
 * default). Returns the last Ready read, a fence read the release may use (see releaseVerified).
 */
export async function rebootNode(ctx: RunContext, run: NodeRun): Promise<FenceRead> {
  const { drained, rebootProof } = await drainNode(ctx, run);
  const bootBefore = drained.node.bootID;
  // /etc is rebuilt at boot: what the listings before the reboot showed absent is no fact about the next boot
  ctx.absentPaths.delete(run.address);
  await sendReboot(ctx, run, rebootProof);
  // ready-timeout bounds the whole coming back: the proof (cri up), then Ready. (The boot id read
  // before the reboot has its own bound, src/pipeline/bootIdBefore.ts, and never spends it.)
  const deadline = ctx.clock.now() + ctx.config.readyTimeoutMs;

  // Prove it first: Talos reads only, and Talos answers (the reboot returned once its boot id changed).
  // A proof that contradicts or does not prove stops the node here, left fenced, without the wait.
  run.enter('proving');
  const proof = await readProof(ctx, run, deadline);
  run.recordProof(proof);
  settleProof(ctx, run, proof);
  return waitForReady(ctx, run, bootBefore, deadline);
}

/**
 * The reboot, once the boot id before it was read (within its own bound) and the Lease is proven; the
 * adapter's wait for a new boot id, ready-timeout, starts at the Reboot's answer. A reboot never sent
 * (the boot id unreadable past its bound) gives the node back, as after a failed drain.
 */
async function sendReboot(ctx: RunContext, run: NodeRun, proof: FenceRead | undefined): Promise<void> {
  try {
    await run.step(STEP.reboot, async () => {
      const bootBefore = await readBootIdBefore(ctx, run.address, run.node.name);
      // (the fence read still proves the Lease after the reads only while its renewal has not expired: confirm() checks)
      await beforeMutation(ctx, { fresh: true, read: proof });
      // `rebooting` from the moment the request may go out, not before the Lease proof: a run that
      // stops on the proof (a lost Lease, a cancellation) sent no reboot and must not say it did
      run.enter('rebooting');
      return ctx.talos.reboot(run.address, ctx.config.readyTimeoutMs, bootBefore);
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
      // The channel outlives a cancellation (for the releases), so these reads would still be answered:
      // the wait ends here, the node left fenced (its Reboot was sent), not at ready-timeout.
      if (ctx.cancelled?.()) throw new CancelledError(`the run was cancelled while ${name} was coming back`);
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
      const problems = [...identityChanges(run.node, node), ...checkGuard(run.capture!, node, keys)];
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
  const first = await run.step(
    STEP.prove,
    () => readOne(ctx, { name: run.node.name, address: run.address, desired: run.desired }),
    describe,
  );
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
    proof = await readOne(ctx, { name: run.node.name, address: run.address, desired: run.desired });
    if (readAgainBecause(proof) === undefined || ctx.cancelled?.()) return proof;
  }
}
