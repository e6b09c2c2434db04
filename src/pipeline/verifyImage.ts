// Prove the credential through containerd itself: a pod pinned to the node pulls a private image
// with imagePullPolicy Always and no imagePullSecrets, so only the node's CRI registry auth can
// authenticate the pull. `talosctl image pull` is no proof: Talos pulls with its own resolver from
// the machine config and skips cached images (docs/talos-facts.md#t16-image-pull-is-no-proof).
import type { KubeClient, PodState } from '../adapters/types.js';
import { formatDuration } from '../core/format.js';
import type { Clock } from '../core/clock.js';
import { CancelledError, VerifyFailed } from './errors.js';

export interface VerifyImageArgs {
  kube: KubeClient;
  node: string;
  image: string;
  namespace: string;
  timeoutMs: number;
  pollMs: number;
  clock: Clock;
  /** makes the pod name unique per run */
  nonce: string;
  /** true once the run was cancelled: the wait ends at its next turn, and the pod is deleted */
  cancelled?: () => boolean;
}

export function verifyPodManifest(args: Pick<VerifyImageArgs, 'node' | 'image' | 'namespace' | 'nonce'>): Record<string, unknown> {
  const suffix = hash(args.nonce + args.node).slice(0, 8);
  const base = `registry-auth-verify-${args.node}`
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 52);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${base}-${suffix}`,
      namespace: args.namespace,
      labels: { 'app.kubernetes.io/name': 'registry-auth-verify', 'app.kubernetes.io/managed-by': 'talos-registry-auth-rollout' },
    },
    spec: {
      nodeName: args.node,
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      // The node is cordoned and may carry any taint: the probe must run there regardless.
      tolerations: [{ operator: 'Exists' }],
      containers: [{ name: 'verify', image: args.image, imagePullPolicy: 'Always', resources: { requests: { cpu: '1m', memory: '1Mi' } } }],
    },
  };
}

function hash(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

/** Resolves with the pulled image id; throws VerifyFailed with the reason otherwise. Always deletes the pod. */
export async function verifyImage(args: VerifyImageArgs): Promise<string> {
  const manifest = verifyPodManifest(args);
  const pod = await args.kube.createPod(manifest);
  try {
    if (pod.imagePullSecrets.length > 0) {
      // An admission step (a service account's imagePullSecrets) added credentials: a successful
      // pull would prove those, not the node's containerd config.
      throw new VerifyFailed(
        `the admitted probe pod carries imagePullSecrets (${pod.imagePullSecrets.join(', ')}), injected by the namespace's service account; use a verify-namespace without them`,
      );
    }
    const deadline = args.clock.now() + args.timeoutMs;
    for (;;) {
      // The channel outlives a cancellation (for the releases), so these reads would still be answered,
      // for up to the cleanup's window, which the pod's deletion below needs.
      if (args.cancelled?.())
        throw new CancelledError(`the run was cancelled while the probe pod ${pod.namespace}/${pod.name} waited to pull ${args.image}`);
      const current: PodState | undefined = await args.kube.getPod(pod.namespace, pod.name);
      if (!current) throw new VerifyFailed(`probe pod ${pod.namespace}/${pod.name} disappeared before the image was pulled`);
      const c = current.containerStatuses[0];
      if (c?.imageID || c?.running || c?.terminated) return c.imageID || '(container ran)';
      if (c?.waitingReason === 'ErrImagePull' || c?.waitingReason === 'ImagePullBackOff' || c?.waitingReason === 'InvalidImageName') {
        throw new VerifyFailed(
          `containerd on ${args.node} could not pull ${args.image}: ${c.waitingReason}${c.waitingMessage ? `: ${c.waitingMessage}` : ''}`,
        );
      }
      if (args.clock.now() + args.pollMs > deadline) {
        throw new VerifyFailed(
          `the probe pod did not pull ${args.image} within ${formatDuration(args.timeoutMs)} (phase ${current.phase || 'unknown'}${c?.waitingReason ? `, ${c.waitingReason}` : ''})`,
        );
      }
      await args.clock.sleep(args.pollMs);
    }
  } finally {
    await args.kube.deletePod(pod.namespace, pod.name).catch(() => undefined);
  }
}

/** The run's settings a pull through a node's containerd uses (the roll's proof and the converged run's alike). */
export interface PullSettings {
  kube: KubeClient;
  config: { verifyNamespace: string; readyTimeoutMs: number };
  pollIntervalMs: number;
  clock: Clock;
  owner: string;
  cancelled?: () => boolean;
}

/** `image` pulled through `node`'s containerd with the run's settings: one home for the two callers' arguments. */
export function pullThroughNode(ctx: PullSettings, node: string, image: string): Promise<string> {
  return verifyImage({
    kube: ctx.kube,
    node,
    image,
    namespace: ctx.config.verifyNamespace,
    timeoutMs: ctx.config.readyTimeoutMs,
    pollMs: ctx.pollIntervalMs,
    clock: ctx.clock,
    nonce: ctx.owner,
    cancelled: ctx.cancelled,
  });
}
