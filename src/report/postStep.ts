// The post step's report (its body, src/fences/post.ts, returns it; its shell, src/action/post.ts, publishes it) and what the step shows for it: a log line,
// an annotation or a failure per node and for the run Lease. Pure: the texts a person reads, built
// from what the post step chose (src/rules/postStep.ts) and what came of it.
import type { Config } from '../core/config.js';
import type { RolloutEvent } from '../core/events.js';
import type { AnnotationKeys, NodeState } from '../core/model/node.js';
import type { HeldNode } from '../core/model/phase.js';
import { fencedNextStep, leftAsSetReport, releaseCommand, unknownClaimCheck } from '../rules/commands.js';
import type { PostChoice, ReleasedFrom, StoppedWhile } from '../rules/postStep.js';
import type { Annotation } from './annotations.js';

/** One held node: what the post step chose and what came of it. */
export interface PostNodeResult {
  held: HeldNode;
  choice: PostChoice;
  /** the node as read now; absent when it could not be read */
  now?: NodeState;
  /** why the node could not be read */
  readError?: string;
  /** for a release: why the patch failed; absent when it landed */
  releaseError?: string;
  /** for a release: the autoscaler marks it left in place because someone changed them, or their record, while the node was held (one line each) */
  marksKept?: string[];
}

export interface PostReport {
  kind: 'post';
  /** a saved value that could not be read, each named: nothing was done for it */
  stateErrors: string[];
  /** the main step saved no node, no Lease: nothing to clean up */
  nothingHeld?: boolean;
  /** the main step did not save how to reach the cluster: nothing was done */
  noAccess?: boolean;
  /** the annotation keys and the kubectl flags the main step resolved (absent with noAccess) */
  keys?: AnnotationKeys;
  kubectl?: Pick<Config, 'kubeconfig' | 'kubeContext'>;
  nodes: PostNodeResult[];
  lease?: { namespace: string; name: string; outcome: 'kept' | 'released' | 'not-released'; why?: string };
  /** a node of this run is left claimed or cordoned for a person (or the saved nodes could not be read) */
  leftClaimed: boolean;
  /** the post step itself failed here; what is above still happened */
  error?: string;
}

/** What the publisher writes for a post report, in this order. */
export interface PostPublication {
  log: string[];
  annotations: Annotation[];
  failures: string[];
}

export function presentPostReport(r: PostReport): PostPublication {
  const out: PostPublication = { log: [], annotations: [], failures: [] };
  for (const e of r.stateErrors)
    out.annotations.push({ kind: 'error', title: 'post step: saved state unreadable', message: `post step: ${e}; nothing done for it` });
  if (r.nothingHeld) out.log.push('post step: this run holds no node and no Lease; nothing to clean up');
  if (r.noAccess) {
    out.failures.push(
      'post step: the main step did not save how to reach the cluster; nothing was done. Run `mode: fences` to see what is left.',
    );
  }
  if (r.keys) for (const n of r.nodes) presentNode(n, r.keys, r.kubectl ?? {}, out);
  if (r.lease) {
    const ref = `${r.lease.namespace}/${r.lease.name}`;
    if (r.lease.outcome === 'kept') {
      out.annotations.push({
        kind: 'warning',
        title: 'run Lease kept',
        message: `kept the run Lease ${ref}: a node of this run is left claimed; recover-fences releases it once this run is completed`,
      });
    } else if (r.lease.outcome === 'released') out.log.push(`post step: released the run Lease ${ref}`);
    else out.log.push(`post step: did not release the run Lease ${ref}: ${r.lease.why ?? ''}`);
  }
  if (r.leftClaimed)
    out.failures.push('the post step left a node of this run claimed or cordoned; see the error annotation for what to check');
  if (r.error) out.failures.push(`post step failed: ${r.error}`);
  return out;
}

/**
 * The Events of what the post step did with the nodes it was handed, for `kubectl describe node`: the
 * main step was stopped before it could write them. A release is `Released`; a node left claimed,
 * fenced or as another actor set it is a Warning `RolloutFailed` whose message is the annotation's
 * (what to check, the release command). Only nodes read now have an Event: it names the node's uid.
 */
export function postStepEvents(r: PostReport, at: string): RolloutEvent[] {
  if (!r.keys) return [];
  const events: RolloutEvent[] = [];
  for (const n of r.nodes) {
    if (!n.now) continue;
    const one: PostPublication = { log: [], annotations: [], failures: [] };
    presentNode(n, r.keys, r.kubectl ?? {}, one);
    const a = one.annotations[0];
    if (!a) continue;
    const about = { kind: 'Node' as const, name: n.held.node, uid: n.now.uid };
    const message = `post step: ${a.message}`;
    events.push(
      a.kind === 'notice'
        ? { about, reason: 'Released', type: 'Normal', message, at }
        : { about, reason: 'RolloutFailed', type: 'Warning', message, at },
    );
  }
  return events;
}

const RELEASED_WHILE: Record<ReleasedFrom, string> = {
  claiming: "this run's claim had landed although the main step could not tell; nothing on Talos was changed",
  claimed: 'it was claimed; no reboot had started',
  settling: 'the settle gate was waiting before its drain; nothing was drained and no reboot had started',
  draining: 'it was being drained; no reboot had started',
};
const DRAINED_NOT_REBOOTED = 'it had been drained; no reboot had been sent';

/** When the run stopped on a node it left fenced (src/rules/postStep.ts StoppedWhile): only what happened. */
const STOPPED: Record<StoppedWhile, string> = {
  'changing-config': 'while its Talos configuration was being changed',
  settling: 'while it waited to drain it, after its Talos configuration was changed; nothing was drained and no reboot was sent',
  draining: 'while it was being drained, after its Talos configuration was changed; no reboot was sent',
  drained:
    'after it was drained, before any reboot was sent (its Talos configuration was changed; its containerd still runs the old credential)',
  rebooting: 'while it was being rebooted',
};

function presentNode(
  n: PostNodeResult,
  keys: AnnotationKeys,
  kubectl: Pick<Config, 'kubeconfig' | 'kubeContext'>,
  out: PostPublication,
): void {
  const { node, capture } = n.held;
  const c = n.choice;
  const error = (title: string, message: string): void => {
    out.annotations.push({ kind: 'error', title, message });
  };
  switch (c.action) {
    case 'report-as-set': {
      const report = leftAsSetReport({
        capture,
        now: n.now,
        keys,
        config: kubectl,
        talosChanged: c.keepsLease ? undefined : false,
        leaseKept: c.keepsLease,
      });
      return error(`${node}: left as another actor set it`, `${node}: ${report}`);
    }
    case 'unreadable':
      if (c.claimMayBeOn) {
        return error(
          `${node}: the claim may be on the node`,
          `could not read node ${node} to learn whether this run's claim landed (${n.readError}): the claim may be on the node (cordoned, ${keys.phase}=claimed); nothing on Talos was changed, and the run Lease is kept. ` +
            `To find out, ${unknownClaimCheck(node, keys, releaseCommand(capture, keys, kubectl, 'claimed'))}`,
        );
      }
      return error(`${node}: post step could not check the node`, `could not read node ${node} to clean up after this run: ${n.readError}`);
    case 'nothing':
      out.log.push(
        c.claimDidNotLand
          ? `post step: the claim on ${node} did not land (the node does not carry this run's token); nothing to do`
          : `post step: ${node} is no longer claimed by this run; nothing to do`,
      );
      return;
    case 'release': {
      if (n.releaseError !== undefined) {
        return error(
          `${node}: left claimed`,
          `could not release ${node}: ${n.releaseError}. Release it by hand: ${releaseCommand(capture, keys, kubectl)}`,
        );
      }
      const restored =
        capture.quarantined !== undefined
          ? `left it cordoned and quarantined, as the claim found it (${keys.quarantined})`
          : `restored its cordon state (was-cordoned=${capture.wasCordoned})`;
      out.annotations.push({
        kind: 'notice',
        title: `${node}: released by the post step`,
        message:
          `released ${node} (${c.from === 'draining' && n.held.drained ? DRAINED_NOT_REBOOTED : RELEASED_WHILE[c.from]}) and ${restored}` +
          (n.marksKept?.length ? `; autoscaler marks: ${n.marksKept.join('; ')}` : ''),
      });
      return;
    }
    case 'leave-fenced':
      return error(
        `${node}: left fenced by a stopped run`,
        fencedNextStep({
          node,
          address: capture.internalIP,
          release: releaseCommand(capture, keys, kubectl),
          stopped: STOPPED[c.stoppedWhile],
        }),
      );
  }
}
