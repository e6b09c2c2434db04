// The post step (`post-if: always()`), in a fresh process after the main step ended, cancelled or
// killed. It reads what the main step saved with core.saveState and acts only on what this run owns:
// - a node held in phase `claimed` or `draining` (no reboot was started): release it, restoring the
//   cordon state from `was-cordoned` — exactly what the main step does after a failed drain;
// - a node held in phase `mutating` or `rebooting`: leave it cordoned and claimed, and say exactly
//   what to check and how to release it;
// - the run Lease: release it if this run still holds it and no node of this run is left fenced.
import * as core from '@actions/core';
import { Runner } from './adapters/exec.js';
import { Kubectl } from './adapters/kubectl.js';
import { ToolError } from './errors.js';
import { annotationKeys, type ClaimCapture, type JsonPatchOp } from './model.js';
import { releaseCommand } from './recovery.js';
import { formatCommandLine } from './report/log.js';
import type { HoldPhase } from './rollout.js';
import { releaseLeasePatch } from './rules/lease.js';
import { annotationPath } from './rules/claim.js';
import { buildReleasePatch } from './rules/release.js';

export interface SavedHolding {
  node: string;
  phase: HoldPhase;
  capture: ClaimCapture;
  owner: string;
}

export interface SavedLease {
  namespace: string;
  name: string;
  owner: string;
}

function parseState<T>(name: string): T | undefined {
  const raw = core.getState(name);
  if (!raw) return undefined;
  try {
    return JSON.parse(raw) as T;
  } catch {
    core.warning(`post step: the saved state "${name}" is not JSON; nothing done for it`);
    return undefined;
  }
}

export async function cleanup(): Promise<void> {
  const holding = parseState<SavedHolding>('holding');
  const lease = parseState<SavedLease>('lease');
  if (!holding && !lease) {
    core.info('post step: this run holds no node and no Lease; nothing to clean up');
    return;
  }
  const prefix = core.getInput('annotation-prefix') || 'registry-auth-rollout';
  const keys = annotationKeys(prefix);
  const kubeconfig = core.getInput('kubeconfig') || undefined;
  const kubeContext = core.getInput('kube-context') || undefined;
  const runner = new Runner();
  runner.onCommand((r) => core.info(formatCommandLine(r)));
  const kube = new Kubectl({ runner, kubeconfig, context: kubeContext });

  let leftFenced = false;
  if (holding) {
    const { node, phase, capture } = holding;
    const current = await kube.getNode(node).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
    if (current instanceof Error) {
      core.error(`could not read node ${node} to clean up after this run: ${current.message}`, {
        title: `${node}: post step could not check the node`,
      });
      leftFenced = true;
    } else if (current.annotations[keys.owner] !== holding.owner) {
      core.info(`post step: ${node} is no longer claimed by this run; nothing to do`);
    } else if (phase === 'claimed' || phase === 'draining') {
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
      } catch (e) {
        leftFenced = true;
        const msg = e instanceof ToolError ? `${e.kind}: ${e.message}` : String(e);
        core.error(`could not release ${node}: ${msg}. Release it by hand: ${releaseCommand(capture, keys, { kubeconfig, kubeContext })}`, {
          title: `${node}: left claimed`,
        });
      }
    } else {
      leftFenced = true;
      core.error(
        `${node} was left cordoned and claimed (phase=mutating) because the run stopped while ${phase === 'rebooting' ? 'it was being rebooted' : 'its Talos configuration was being changed'}. ` +
          `Check: \`kubectl get node ${node}\` (Ready, bootID), \`talosctl -n ${capture.internalIP} service cri\` and \`talosctl -n ${capture.internalIP} version\`. ` +
          `When it is healthy, release it: ${releaseCommand(capture, keys, { kubeconfig, kubeContext })}, or rerun the action after \`recover-fences\`.`,
        { title: `${node}: left fenced by a stopped run` },
      );
    }
  }

  if (lease) {
    if (leftFenced) {
      core.warning(
        `kept the run Lease ${lease.namespace}/${lease.name}: a node of this run is left fenced; recover-fences releases it once this run is completed`,
        { title: 'run Lease kept' },
      );
    } else {
      try {
        await kube.patchLease(lease.namespace, lease.name, releaseLeasePatch(lease.owner));
        core.info(`post step: released the run Lease ${lease.namespace}/${lease.name}`);
      } catch (e) {
        const why =
          e instanceof ToolError && (e.kind === 'invalid' || e.kind === 'not-found')
            ? 'it is no longer held by this run'
            : e instanceof Error
              ? e.message
              : String(e);
        core.info(`post step: did not release the run Lease ${lease.namespace}/${lease.name}: ${why}`);
      }
    }
  }
  if (leftFenced) core.setFailed('the post step left a node fenced; see the error annotation for what to check');
}

await cleanup().catch((e: unknown) => core.setFailed(`post step failed: ${e instanceof Error ? e.message : String(e)}`));
