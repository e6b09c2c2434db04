// One node, the numbered steps of the roll in order. Each step is a small function; a step that
// stops the node throws, and src/pipeline/stop.ts's stopNode decides what the node is left as.
import { formatDuration } from '../core/format.js';
import { errorMessage } from '../core/errors.js';
import type { ClaimCapture, NodeState } from '../core/model/node.js';
import type { EvidenceVerdict } from '../core/model/verdict.js';
import { buildPhasePatch } from '../rules/claim.js';
import { isTalosAtLeast } from '../rules/evidence/talosVersion.js';
import { placedLaunch } from '../rules/evidence/launchAfterPatch.js';
import { identityChanges } from '../rules/inventory.js';
import { shadowedCredentials } from '../rules/credentialForms.js';
import { hostsToRoll, markerWrite, proofHowOf } from '../rules/marker.js';
import { buildReleasePatch } from '../rules/release.js';
import { adoptable, adoptedCapture, buildAdoptPatch } from '../rules/adopt.js';
import { CRI_RESTART_NOT_WAITED, criRestartStep, STEP, verifyImageStep } from '../core/steps.js';
import { pullThroughNode } from './verifyImage.js';
import { claimNode } from './claim.js';
import type { RunContext } from './context.js';
import { readOne, waitForCriRestart } from './evidence.js';
import { beforeMutation, fenceProblems, readNodeForMutation, type FenceRead } from './fence.js';
import type { NodeRun } from './nodeRun.js';
import { rebootNode } from './reboot.js';
import { NodeStop } from './stop.js';
import { isTestFailure, patchNodeSurvivingLoss, releaseNode } from './nodeWrite.js';

export async function rollNode(ctx: RunContext, run: NodeRun): Promise<void> {
  const fresh = await readFresh(ctx, run); // 3.1
  await refuseShadowedCredential(ctx, run); // 3.1b
  run.rollFor(hostsToRoll(fresh.annotations, ctx.keys, ctx.want));
  await claim(ctx, run, fresh); // 3.2
  const before = await readEvidenceBefore(ctx, run); // 3.3
  await markMutating(ctx, run); // 3.4
  await applyCredential(ctx, run); // 3.5
  const skipReason = await decide(ctx, run, before); // 3.6
  let ready: FenceRead | undefined;
  if (skipReason) {
    run.recordSkip(skipReason);
  } else {
    ready = await rebootNode(ctx, run); // 3.7
    run.recordRebooted(before, ctx.config.verifyImage);
  }
  await verifyThroughContainerd(ctx, run); // 3.8
  // The Ready read is the release's fence read only when no step ran after it (no verify-image).
  await releaseVerified(ctx, run, ctx.config.verifyImage ? undefined : ready); // 3.9
}

/** 3.1 Fresh read: the node must still be the one the inventory saw. */
async function readFresh(ctx: RunContext, run: NodeRun): Promise<NodeState> {
  const fresh = await run.step(STEP.readNode, () => ctx.kube.getNode(run.node.name));
  const changed = identityChanges(run.node, fresh);
  if (changed.length > 0) {
    throw new NodeStop('refused', `node changed since the inventory: ${changed.join('; ')}`, {
      nextStep: 'Nothing was changed. Rerun the action: it lists the nodes again.',
    });
  }
  return fresh;
}

/**
 * 3.1b A patch Talos's own merge applies (talosctl) cannot put the credential where Talos reads it
 * when the node's config carries a RegistryAuthConfig document for a host the patch sets only in
 * the legacy form (src/rules/credentialForms.ts): the old credential would stay in effect, and the node
 * would be drained and rebooted for nothing and left fenced by its failed proof. Checked before the
 * claim, so a refused node is not even cordoned: only a read has happened. (After the claim, the read
 * would be nearer the patch, but no read can be atomic with the patch anyway: a machine config has no
 * compare-and-swap, and the proof after the reboot still catches a change in between.)
 */
async function refuseShadowedCredential(ctx: RunContext, run: NodeRun): Promise<void> {
  const read = ctx.talos.readCredentialForms?.bind(ctx.talos);
  const patch = ctx.patchForms;
  if (!read || !patch || patch.legacy.length === 0) return;
  const forms = await run.step(
    STEP.readCredentialForms,
    () => read(run.address),
    (f) => `RegistryAuthConfig documents: ${f.documents.join(', ') || 'none'}; legacy auth maps: ${f.legacy.join(', ') || 'none'}`,
  );
  const why = shadowedCredentials(run.node.name, patch, forms);
  if (why.length > 0) {
    throw new NodeStop('refused', why.join('; '), {
      nextStep: `Nothing was changed: the node was not claimed, cordoned or patched. Change the auth patch as said, then rerun.`,
    });
  }
}

/** 3.2 Claim: cordon and owner token in one CAS-guarded patch; or adopt a claim another run abandoned. */
async function claim(ctx: RunContext, run: NodeRun, fresh: NodeState): Promise<void> {
  if (ctx.lock && adoptable(fresh, ctx.keys, ctx.owner)) return adopt(ctx, run, fresh);
  // Published before each PATCH is sent: a run killed or cancelled while it is in flight leaves the
  // post step a node to read (the claim may have landed), never a node it does not know about.
  const sending = (capture: ClaimCapture) => run.claimSending(capture);
  try {
    const result = await run.step(
      STEP.claim,
      () => claimNode(ctx, fresh, ctx.clock, sending),
      (c) =>
        `attempts ${c.attempts}${c.conflicts.length ? `; retried after: ${c.conflicts.join('; ')}` : ''}` +
        (c.adoptedAfter ? `; its answer was lost (${c.adoptedAfter}), a re-read showed it landed: adopted` : ''),
    );
    run.recordClaim(result);
    run.claimHeld(result.capture);
  } catch (e) {
    // A claim that landed but is refused afterwards is ours to account for.
    if (e instanceof NodeStop && e.opts.heldCapture) {
      run.claimHeld(e.opts.heldCapture);
    } else if (!(e instanceof NodeStop && e.opts.claimOutcomeUnknown) && run.phase === 'claiming') {
      // Refused, or never sent: nothing of this run is on the node.
      run.enter('read');
    }
    throw e;
  }
}

/**
 * 3.2 (adoption) The node carries a claim of another run of this action, and this run holds the run
 * Lease: that run lost the Lease (it expired unrenewed, and this run took it over) or gave it up, so it
 * can no longer send anything to Talos (docs/recovery.md). One CAS patch puts this run's token in place
 * of its owner (src/rules/adopt.ts); the roll then goes on from the start, every step judging the node as
 * it is: the evidence says whether the cut-short roll's reboot already loaded the credential. Sent only
 * once the Lease is proven ours now (a renewal, or our own fresh renewal read), not merely believed.
 */
async function adopt(ctx: RunContext, run: NodeRun, fresh: NodeState): Promise<void> {
  const { keys, owner } = ctx;
  const from = fresh.annotations[keys.owner];
  const capture = adoptedCapture(fresh, keys, owner);
  const why =
    ctx.lock?.tookOverFrom === from
      ? 'abandoned: the run Lease it held expired unrenewed and this run took it over'
      : 'abandoned: its run no longer holds the run Lease, this run does';
  await run.step(
    STEP.claim,
    async () => {
      await beforeMutation(ctx, { fresh: true, read: undefined });
      run.claimSending(capture);
      try {
        await patchNodeSurvivingLoss(writer(ctx), fresh.name, buildAdoptPatch(fresh, keys, owner), 'the adoption');
      } catch (e) {
        if (!isTestFailure(e)) throw e;
        run.enter('read');
        throw new NodeStop('refused', `the abandoned claim of ${from} changed before this run could adopt it; left as it is`, {
          nextStep: 'Nothing was changed by this run. Rerun: the node is judged again as it is then.',
          claimFailure: 'conflict',
        });
      }
    },
    () => `adopted the claim of ${from} (phase ${fresh.annotations[keys.phase]}), ${why}`,
  );
  ctx.log.info(`${fresh.name}: adopted the claim of ${from} (phase ${fresh.annotations[keys.phase]}), ${why}`);
  run.recordClaim({ attempts: 1, conflicts: [] });
  run.claimHeld(capture);
}

/** 3.3 Evidence before the patch (none with reboot: always). */
async function readEvidenceBefore(ctx: RunContext, run: NodeRun): Promise<EvidenceVerdict | undefined> {
  if (ctx.config.reboot === 'always') return undefined;
  const before = await run.step(
    STEP.readEvidence,
    () => readOne(ctx, { name: run.node.name, address: run.address, desired: run.desired }),
    (v) => `${v.verdict}: ${v.reason}`,
  );
  run.recordEvidence(before);
  return before;
}

/**
 * 3.4 From here on Talos may be touched: mark it, so a crash leaves a fence that says so. The patch
 * tests the fence as well as the hold (uid, our owner, spec.unschedulable true): a node someone
 * uncordoned since the claim is never marked, so no Talos mutation runs on an unfenced node.
 */
async function markMutating(ctx: RunContext, run: NodeRun): Promise<void> {
  const { keys } = ctx;
  const capture = run.capture!;
  try {
    await run.step(STEP.markMutating, async () => {
      await beforeMutation(ctx, { fresh: false });
      return patchNodeSurvivingLoss(
        writer(ctx),
        run.node.name,
        [...buildPhasePatch(capture, keys, 'mutating'), { op: 'test', path: '/spec/unschedulable', value: true }],
        'phase=mutating',
      );
    });
  } catch (e) {
    if (e instanceof NodeStop) throw e;
    // Did another actor change the node (a failed `test`), or did the write fail for another reason?
    const check = await fenceProblems(ctx, run, STEP.reReadAfterMarkFailed).catch(() => undefined);
    if (check && check.problems.length > 0) {
      throw new NodeStop('failed', `phase=mutating was refused: ${check.problems.join('; ')}`, {
        disposition: 'leave-as-set',
        seen: check.node,
      });
    }
    throw e;
  }
  run.enter('mutating');
}

/** 3.5 Apply the credential, on the node we claimed and still fenced. */
async function applyCredential(ctx: RunContext, run: NodeRun): Promise<void> {
  const { problems, ...fence } = await fenceProblems(ctx, run, STEP.reReadBeforePatch);
  if (problems.length > 0) {
    throw new NodeStop('failed', `node changed before the credential patch: ${problems.join('; ')}`, {
      disposition: 'leave-as-set',
      seen: fence.node,
      nextStep: `The node ${run.node.name} is not as this run claimed it; the credential patch was not sent.`,
    });
  }
  try {
    await run.step(STEP.applyPatch, async () => {
      await beforeMutation(ctx, { fresh: true, read: fence });
      run.touchTalos();
      return ctx.talos.patchMachineConfig(run.address);
    });
  } catch (e) {
    if (!run.talosTouched) throw e;
    // Nothing was drained and containerd still runs as before: uncordoning is safe.
    throw new NodeStop(
      'failed',
      `applying the credential patch failed: ${errorMessage(e)}`,
      {
        disposition: 'release',
        nextStep: `The node was released and is schedulable as before; its machine config may or may not carry the new credential. Check \`talosctl -n ${run.address} get registryauthconfigs\` (or the machine config) and rerun.`,
      },
      { cause: e },
    );
  }
}

/**
 * 3.6 Decide: the reason to skip the reboot, or undefined to reboot.
 *
 * A skip before the patch stands: that reading proved the running containerd loaded a config carrying
 * the desired credential, and Talos rewrites a file only when its content changes, so the patch that
 * sets the same credential writes nothing that containerd would read differently. Otherwise, on Talos
 * >= 1.14, a skip needs a containerd launched after the one the reading before the patch placed; a
 * reading that placed none leaves nothing to compare a later launch with, so the node is rebooted
 * without waiting (no reading during the wait could prove anything), and the step says why.
 */
async function decide(ctx: RunContext, run: NodeRun, verdict: EvidenceVerdict | undefined): Promise<string | undefined> {
  const { config } = ctx;
  if (config.reboot !== 'evidence' || !verdict) return undefined;
  if (verdict.verdict === 'skip') return verdict.reason;
  if (!verdict.values.talosVersion || !isTalosAtLeast(verdict.values.talosVersion, 1, 14)) return undefined;
  const before = placedLaunch(verdict);
  if (!before) {
    await run.step(
      CRI_RESTART_NOT_WAITED,
      () => Promise.resolve(NO_ANCHOR),
      (why) => why,
    );
    return undefined;
  }
  const proof = await run.step(
    criRestartStep(formatDuration(config.criRestartWaitMs)),
    () => waitForCriRestart(ctx, { name: run.node.name, address: run.address, desired: run.desired }, before),
    (v) => `${v.verdict}: ${v.reason}`,
  );
  run.recordProof(proof);
  return proof.verdict === 'skip' ? `Talos restarted cri after the patch: ${proof.reason}` : undefined;
}

const NO_ANCHOR =
  'reboot: the reading before the patch placed no containerd launch, so no launch after the patch could be proven to be Talos restarting cri';

/** 3.8 Prove the credential through containerd itself (optional). */
async function verifyThroughContainerd(ctx: RunContext, run: NodeRun): Promise<void> {
  const image = ctx.config.verifyImage;
  if (!image) return;
  await run.step(verifyImageStep(image), () => pullThroughNode(ctx, run.node.name, image));
}

/**
 * 3.9 Release with the verified marker, on the node we claimed, while the Lease is still ours. `ready`,
 * the reboot's last Ready read (node and Lease in one command), is the fence read when the caller ran
 * no step after it: then it is still the read that immediately precedes the mutation, as
 * beforeMutation requires, and reading the node again would prove nothing more. Otherwise (a skipped
 * reboot, or verify-image ran in between) the node is read again here.
 *
 * The marker keeps every other host's entry as the fence read shows it, behind a `test` of that text
 * (src/rules/marker.ts markerWrite). A 422 after which the node is still ours (same uid, our owner
 * token) and only the marker changed is another step's proof landing between the read and the patch:
 * benign, so the node is read again (with the Lease) and the marker rebuilt over the new entries, at
 * most MARKER_ATTEMPTS times. Any other 422 (the claim is gone) stands.
 */
async function releaseVerified(ctx: RunContext, run: NodeRun, ready: FenceRead | undefined): Promise<void> {
  const { keys } = ctx;
  let fence = ready ?? (await run.step(STEP.reReadBeforeRelease, () => readNodeForMutation(ctx, run.node.name)));
  const at = new Date(ctx.clock.now()).toISOString();
  for (let attempt = 1; ; attempt++) {
    const changed = identityChanges(run.node, fence.node);
    if (changed.length > 0) {
      throw new NodeStop('failed', `node changed before the release: ${changed.join('; ')}`, {
        disposition: 'leave-as-set',
        seen: fence.node,
        nextStep: `The machine behind ${run.node.name} may not be the one this run claimed; nothing more was done to it. Check the node and its Talos endpoint before anything else.`,
      });
    }
    const marker = markerWrite(
      fence.node.annotations,
      keys,
      ctx.want,
      at,
      // how the node was proven: an undecided proof released with a warning is written as such, so every
      // later run counts the node as a holder of the old credential until one proves it
      proofHowOf(run.record.proofUndecided),
      run.desired.map((d) => d.host),
    );
    const read = fence;
    try {
      await run.step(STEP.release, async () => {
        await beforeMutation(ctx, { fresh: true, read });
        // a lost answer is judged by a re-read, a failure that passes (a 5xx, a dropped connection, a
        // 409) tried again with backoff: the one writer (src/pipeline/write.ts)
        return releaseNode({ ...ctx, keptMark: (line) => run.markKept(line) }, run.capture!, keys, (c) =>
          buildReleasePatch(c, keys, { marker }),
        );
      });
      break;
    } catch (e) {
      if (!isTestFailure(e) || attempt >= MARKER_ATTEMPTS) throw e;
      const again = await run.step(STEP.reReadBeforeRelease, () => readNodeForMutation(ctx, run.node.name));
      if (!onlyMarkerMoved(ctx, run, read.node, again.node)) throw e;
      fence = again;
    }
  }
  run.released(true);
}

/** The run's context as the one writer takes it: its notes (a lost answer found applied, a try again) in the log. */
const writer = (ctx: RunContext) => ({ ...ctx, note: (m: string) => ctx.log.info(m) });

/** How many times a verified release is rebuilt after another step's marker landed first (benign). */
const MARKER_ATTEMPTS = 3;

/** Whether the node is still ours (uid, owner token) and its markers are not what the failed release tested. */
function onlyMarkerMoved(ctx: RunContext, run: NodeRun, tested: NodeState, now: NodeState): boolean {
  const { keys } = ctx;
  const a = now.annotations;
  if (now.uid !== run.capture!.uid || a[keys.owner] !== run.capture!.owner) return false;
  return a[keys.verified] !== tested.annotations[keys.verified] || a[keys.verifiedRevision] !== tested.annotations[keys.verifiedRevision];
}
