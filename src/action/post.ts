// The post step (`post-if: always()`), in a fresh process after the main step ended, cancelled or
// killed. It reads what the main step saved (src/action/state.ts) and acts only on what this run owns,
// by each held node's phase (src/core/model.ts NodePhase), so it leaves exactly what the main step left:
// - `claiming` (the claim PATCH was sent, its outcome unknown): read the node; release it, by a CAS on
//   our token and phase=claimed, only when the claim landed; nothing to do when it did not; when the
//   node cannot be read, say the claim may be on it, with the release command, and keep the Lease;
// - `claimed` or `draining` (no reboot was started): release it, restoring the cordon state from
//   `was-cordoned`, exactly what the main step does after a failed drain (a node that was quarantined
//   when claimed stays cordoned and quarantined, as the claim found it: src/rules/release.ts);
// - a node the main step quarantined is not handed over at all: the quarantine gave up the claim, so
//   nothing of this run is on it; one killed while its quarantine patch was in flight is found
//   without this run's token (landed: nothing to do) or released as `draining` (did not land);
// - `mutating`, `rebooting`, `proving`, `left-fenced`: leave it cordoned and claimed, and say exactly
//   what to check and how to release it;
// - `left-as-set`: another actor changed it while the run held it: write nothing; read it to say who
//   holds it now and what of this run still stands (src/rules/commands.ts leftAsSetReport);
// - the run Lease: release it (CAS on our token) unless a node needs it kept: one left claimed or
//   fenced, one whose claim may be on it, or one left as set after Talos may have been changed.
// Everything it writes goes through the masking port (src/action/masked.ts), with the secrets of the
// inputs read again (src/action/inputs.ts readInputSecrets): a fresh process knows none of the main
// step's.
import { Runner } from '../adapters/exec.js';
import { Kubectl } from '../adapters/kube/kubectl.js';
import { casLost, errorMessage, ToolError } from '../core/errors.js';
import { annotationKeys, type AnnotatedPhase, type AnnotationKeys, type HeldNode, type JsonPatchOp } from '../core/model.js';
import { leftAsSetReport, releaseCommand } from '../rules/commands.js';
import { formatCommandLine } from '../report/log.js';
import { annotationPath } from '../rules/claim.js';
import { releaseLeasePatch } from '../rules/lease.js';
import { buildReleasePatch, leftAsSetKeepsLease } from '../rules/release.js';
import { readInputSecrets } from './inputs.js';
import { runnerCore, type MaskedCore } from './masked.js';
import { loadAccess, loadHeld, loadLease, type SavedAccess, type SavedLease } from './state.js';

function load<T>(core: MaskedCore, what: () => T, fallback: T): { value: T; broken: boolean } {
  try {
    return { value: what(), broken: false };
  } catch (e) {
    core.error(`post step: ${errorMessage(e)}; nothing done for it`);
    return { value: fallback, broken: true };
  }
}

export async function cleanup(core: MaskedCore): Promise<void> {
  const held = load<HeldNode[]>(core, () => loadHeld(core), []);
  const lease = load<SavedLease | undefined>(core, () => loadLease(core), undefined);
  const access = load<SavedAccess | undefined>(core, () => loadAccess(core), undefined);
  if (held.value.length === 0 && !lease.value && !held.broken && !lease.broken) {
    core.info('post step: this run holds no node and no Lease; nothing to clean up');
    return;
  }
  if (!access.value) {
    core.setFailed(
      'post step: the main step did not save how to reach the cluster; nothing was done. Run `mode: fences` to see what is left.',
    );
    return;
  }
  const { kubeconfig, kubeContext } = access.value;
  const keys = annotationKeys(access.value.annotationPrefix);
  const runner = new Runner();
  runner.onCommand((r) => core.info(formatCommandLine(r)));
  const kube = new Kubectl({ runner, kubeconfig, context: kubeContext });

  let leftClaimed = held.broken;
  let keepLease = held.broken;
  for (const h of held.value) {
    const r = await cleanupNode(core, kube, keys, access.value, h);
    if (r.left) leftClaimed = true;
    if (r.keepLease) keepLease = true;
  }

  if (lease.value) {
    const l = lease.value;
    if (keepLease) {
      core.warning(
        `kept the run Lease ${l.namespace}/${l.name}: a node of this run is left claimed; recover-fences releases it once this run is completed`,
        { title: 'run Lease kept' },
      );
    } else {
      try {
        await kube.patchLease(l.namespace, l.name, releaseLeasePatch(l.owner));
        core.info(`post step: released the run Lease ${l.namespace}/${l.name}`);
      } catch (e) {
        const why = casLost(e) ? 'it is no longer held by this run' : errorMessage(e);
        core.info(`post step: did not release the run Lease ${l.namespace}/${l.name}: ${why}`);
      }
    }
  }
  if (leftClaimed) core.setFailed('the post step left a node of this run claimed or cordoned; see the error annotation for what to check');
}

/** What the post step left of one node: still this run's (or cordoned by it) for a person, and whether the Lease must stay. */
interface NodeCleanup {
  left: boolean;
  keepLease: boolean;
}

const DONE: NodeCleanup = { left: false, keepLease: false };
const LEFT_FOR_A_PERSON: NodeCleanup = { left: true, keepLease: true };

/** One held node, by its saved phase. */
async function cleanupNode(core: MaskedCore, kube: Kubectl, keys: AnnotationKeys, access: SavedAccess, h: HeldNode): Promise<NodeCleanup> {
  const { node, phase, capture } = h;
  const release = releaseCommand(capture, keys, access);
  const current = await kube.getNode(node).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
  if (phase === 'left-as-set') {
    // Read, never written: another actor owns what the node looks like now.
    const keepLease = leftAsSetKeepsLease(h.stoppedIn);
    const now = current instanceof Error ? undefined : current;
    const report = leftAsSetReport({
      capture,
      now,
      keys,
      config: access,
      talosChanged: keepLease ? undefined : false,
      leaseKept: keepLease,
    });
    core.error(`${node}: ${report}`, { title: `${node}: left as another actor set it` });
    return { left: true, keepLease };
  }
  if (current instanceof Error) {
    if (phase === 'claiming') {
      core.error(
        `could not read node ${node} to learn whether this run's claim landed (${current.message}): the claim may be on the node (cordoned, ${keys.phase}=claimed); nothing on Talos was changed, and the run Lease is kept. ` +
          `Check \`kubectl get node ${node} -o yaml\`; if it carries this run's owner token with ${keys.phase}=claimed, release it: ${releaseCommand(capture, keys, access, 'claimed')} (it fails with "The request is invalid" when the claim is not there).`,
        { title: `${node}: the claim may be on the node` },
      );
      return LEFT_FOR_A_PERSON;
    }
    core.error(`could not read node ${node} to clean up after this run: ${current.message}`, {
      title: `${node}: post step could not check the node`,
    });
    return LEFT_FOR_A_PERSON;
  }
  if (current.annotations[keys.owner] !== h.owner || (phase === 'claiming' && current.uid !== capture.uid)) {
    core.info(
      phase === 'claiming'
        ? `post step: the claim on ${node} did not land (the node does not carry this run's token); nothing to do`
        : `post step: ${node} is no longer claimed by this run; nothing to do`,
    );
    return DONE;
  }
  if (phase === 'claiming' || phase === 'claimed' || phase === 'draining') {
    // Nothing was rebooted: giving the node back is what the main step does after a failed drain.
    // The extra test on the phase annotation keeps us from releasing a node another step of ours
    // (or a person) moved on since the state was saved. A claim sent with an unknown outcome that
    // landed put phase=claimed with it, atomically.
    const expectedPhase: AnnotatedPhase = phase === 'draining' ? 'mutating' : 'claimed';
    const ops: JsonPatchOp[] = [
      { op: 'test', path: annotationPath(keys.phase), value: expectedPhase },
      ...buildReleasePatch(capture, keys, {}),
    ];
    const was =
      phase === 'claiming'
        ? "this run's claim had landed although the main step could not tell; nothing on Talos was changed"
        : phase === 'claimed'
          ? 'it was claimed; no reboot had started'
          : 'it was being drained; no reboot had started';
    try {
      await kube.patchNode(node, ops);
      const restored =
        capture.quarantined !== undefined
          ? `left it cordoned and quarantined, as the claim found it (${keys.quarantined})`
          : `restored its cordon state (was-cordoned=${capture.wasCordoned})`;
      core.notice(`released ${node} (${was}) and ${restored}`, {
        title: `${node}: released by the post step`,
      });
      return DONE;
    } catch (e) {
      const msg = e instanceof ToolError ? `${e.kind}: ${e.message}` : String(e);
      core.error(`could not release ${node}: ${msg}. Release it by hand: ${release}`, { title: `${node}: left claimed` });
      return LEFT_FOR_A_PERSON;
    }
  }
  const at = phase === 'left-fenced' ? (h.stoppedIn ?? 'mutating') : phase;
  const why = at === 'rebooting' || at === 'proving' ? 'it was being rebooted' : 'its Talos configuration was being changed';
  core.error(
    `${node} was left cordoned and claimed (phase=mutating) because the run stopped while ${why}. ` +
      `Check: \`kubectl get node ${node}\` (Ready, bootID), \`talosctl -n ${capture.internalIP} service cri\` and \`talosctl -n ${capture.internalIP} version\`. ` +
      `When it is healthy, release it: ${release}, or rerun the action after \`recover-fences\`.`,
    { title: `${node}: left fenced by a stopped run` },
  );
  return LEFT_FOR_A_PERSON;
}

/** The post step as its entry (src/post.ts) runs it: a failure fails the step, it never throws. */
export async function postStep(core: MaskedCore = runnerCore()): Promise<void> {
  readInputSecrets(
    (name) => core.getInput(name),
    (s) => core.addSecret(s),
  );
  await cleanup(core).catch((e: unknown) => core.setFailed(`post step failed: ${errorMessage(e)}`));
}
