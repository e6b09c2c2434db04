// The post step (`post-if: always()`), in a fresh process after the main step ended, cancelled or
// killed. It reads what the main step saved (src/state.ts) and acts only on what this run owns,
// by each held node's phase (src/model.ts NodePhase), so it leaves exactly what the main step left:
// - `claimed` or `draining` (no reboot was started): release it, restoring the cordon state from
//   `was-cordoned`, exactly what the main step does after a failed drain;
// - `mutating`, `rebooting`, `proving`, `left-fenced`: leave it cordoned and claimed, and say exactly
//   what to check and how to release it;
// - `left-as-set`: another actor changed it while the run held it: touch nothing, and say so;
// - the run Lease: release it if this run still holds it and no node of this run is left claimed.
import * as core from '@actions/core';
import { Runner } from './adapters/exec.js';
import { Kubectl } from './adapters/kubectl.js';
import { errorMessage, ToolError } from './errors.js';
import { annotationKeys, type AnnotationKeys, type HeldNode, type JsonPatchOp } from './model.js';
import { releaseCommand } from './recovery.js';
import { formatCommandLine } from './report/log.js';
import { annotationPath } from './rules/claim.js';
import { releaseLeasePatch } from './rules/lease.js';
import { buildReleasePatch } from './rules/release.js';
import { loadAccess, loadHeld, loadLease, type SavedAccess, type SavedLease } from './state.js';

function load<T>(what: () => T, fallback: T): { value: T; broken: boolean } {
  try {
    return { value: what(), broken: false };
  } catch (e) {
    core.error(`post step: ${errorMessage(e)}; nothing done for it`);
    return { value: fallback, broken: true };
  }
}

export async function cleanup(): Promise<void> {
  const held = load<HeldNode[]>(() => loadHeld(core), []);
  const lease = load<SavedLease | undefined>(() => loadLease(core), undefined);
  const access = load<SavedAccess | undefined>(() => loadAccess(core), undefined);
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
  for (const h of held.value) {
    if (!(await cleanupNode(kube, keys, access.value, h))) leftClaimed = true;
  }

  if (lease.value) {
    const l = lease.value;
    if (leftClaimed) {
      core.warning(
        `kept the run Lease ${l.namespace}/${l.name}: a node of this run is left claimed; recover-fences releases it once this run is completed`,
        { title: 'run Lease kept' },
      );
    } else {
      try {
        await kube.patchLease(l.namespace, l.name, releaseLeasePatch(l.owner));
        core.info(`post step: released the run Lease ${l.namespace}/${l.name}`);
      } catch (e) {
        const why =
          e instanceof ToolError && (e.kind === 'invalid' || e.kind === 'not-found') ? 'it is no longer held by this run' : errorMessage(e);
        core.info(`post step: did not release the run Lease ${l.namespace}/${l.name}: ${why}`);
      }
    }
  }
  if (leftClaimed) core.setFailed('the post step left a node of this run claimed; see the error annotation for what to check');
}

/** One held node, by its saved phase. Returns false when the node stays claimed by this run. */
async function cleanupNode(kube: Kubectl, keys: AnnotationKeys, access: SavedAccess, h: HeldNode): Promise<boolean> {
  const { node, phase, capture } = h;
  const release = releaseCommand(capture, keys, access);
  if (phase === 'left-as-set') {
    // Not even read-modify-written: another actor owns what the node looks like now.
    core.error(
      `${node} was left exactly as another actor set it while this run held it (the main step's guard found the change); it still carries this run's claim. ` +
        `Check who changed it (\`kubectl get node ${node} -o yaml\`); when it is safe, release the claim: ${release}`,
      { title: `${node}: left as another actor set it` },
    );
    return false;
  }
  const current = await kube.getNode(node).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
  if (current instanceof Error) {
    core.error(`could not read node ${node} to clean up after this run: ${current.message}`, {
      title: `${node}: post step could not check the node`,
    });
    return false;
  }
  if (current.annotations[keys.owner] !== h.owner) {
    core.info(`post step: ${node} is no longer claimed by this run; nothing to do`);
    return true;
  }
  if (phase === 'claimed' || phase === 'draining') {
    // Nothing was rebooted: giving the node back is what the main step does after a failed drain.
    // The extra test on the phase annotation keeps us from releasing a node another step of ours
    // (or a person) moved on since the state was saved.
    const expectedPhase = phase === 'claimed' ? 'claimed' : 'mutating';
    const ops: JsonPatchOp[] = [
      { op: 'test', path: annotationPath(keys.phase), value: expectedPhase },
      ...buildReleasePatch(capture, keys, {}),
    ];
    try {
      await kube.patchNode(node, ops);
      core.notice(
        `released ${node} (it was ${phase === 'claimed' ? 'claimed' : 'being drained'}; no reboot had started) and restored its cordon state (was-cordoned=${capture.wasCordoned})`,
        { title: `${node}: released by the post step` },
      );
      return true;
    } catch (e) {
      const msg = e instanceof ToolError ? `${e.kind}: ${e.message}` : String(e);
      core.error(`could not release ${node}: ${msg}. Release it by hand: ${release}`, { title: `${node}: left claimed` });
      return false;
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
  return false;
}

await cleanup().catch((e: unknown) => core.setFailed(`post step failed: ${errorMessage(e)}`));
