// The exact, CAS-guarded command a person runs to release a node this run left claimed.
import type { Config } from '../core/config.js';
import { shellQuote } from '../core/shell.js';
import type { AnnotationKeys, ClaimCapture, NodeState } from '../core/model/node.js';
import type { AnnotatedPhase } from '../core/model/phase.js';
import { cordonedAtClaim } from './claim.js';
import { buildReleasePatch, guardedReleasePatch } from './release.js';

/** A kubectl command line a person can paste, with the run's kubeconfig and context, in backticks. */
export function kubectlCommand(config: Pick<Config, 'kubeconfig' | 'kubeContext'>, args: string): string {
  const globals = [
    config.kubeconfig ? `--kubeconfig=${shellQuote(config.kubeconfig)}` : '',
    config.kubeContext ? `--context=${shellQuote(config.kubeContext)}` : '',
  ].filter(Boolean);
  return `\`${['kubectl', ...globals, args].join(' ')}\``;
}

/**
 * The release patch tests our owner token and the uid, so it cannot release a node another run
 * claimed meanwhile or a replacement node of the same name. It sets no verified marker. With
 * `phase`, it also tests the phase annotation (a claim whose outcome was unknown is released only
 * as `claimed`: the claim puts that phase on the node with the token, atomically).
 */
export function releaseCommand(
  capture: ClaimCapture,
  keys: AnnotationKeys,
  config: Pick<Config, 'kubeconfig' | 'kubeContext'>,
  phase?: Extract<AnnotatedPhase, 'claimed'>,
): string {
  const ops = phase ? guardedReleasePatch(capture, keys, phase) : buildReleasePatch(capture, keys, {});
  return kubectlCommand(config, `patch node ${capture.node} --type=json -p ${shellQuote(JSON.stringify(ops))}`);
}

/**
 * How a person finds and releases a claim that may be on the node (its PATCH was sent, its outcome
 * unknown, and the node could not be read): the release tests phase=claimed, which the claim wrote
 * with the token, so it cannot release anything else. One text for the main step and the post step.
 */
export function unknownClaimCheck(node: string, keys: AnnotationKeys, release: string): string {
  return (
    `check \`kubectl get node ${node} -o yaml\` and, if it carries this run's owner token with ${keys.phase}=claimed, release it: ${release} ` +
    '(it fails with "The request is invalid" when the claim is not there, and then nothing needs doing).'
  );
}

/**
 * The next step of a node left fenced (phase=mutating: Talos may carry the change, nothing proved it):
 * what to check and how to release it. One text for the main step, which says it when it stops on the
 * node, and the post step, which adds when the run stopped (`stopped`). `recover-fences` never
 * releases a node in phase=mutating; it frees the run Lease this run keeps, once the run is completed.
 */
export function fencedNextStep(args: {
  node: string;
  /** the node's InternalIP, the address talosctl reaches it by */
  address: string;
  /** the release command (releaseCommand, above) */
  release: string;
  /** when the run stopped, e.g. `while it was being rebooted`; absent: not said */
  stopped?: string;
}): string {
  const { node, address, release, stopped } = args;
  const because = stopped ? ` because the run stopped ${stopped}` : '';
  return (
    `Node ${node} is left cordoned and claimed (phase=mutating)${because}. ` +
    `Check it: \`kubectl get node ${node}\` (Ready, bootID), \`talosctl -n ${address} service cri\`, \`talosctl -n ${address} version\`. ` +
    `When it is healthy, release it: ${release}, and rerun the action (once this run is completed, \`recover-fences\` frees the run Lease it kept).`
  );
}

/**
 * What is left on a node another actor changed while this run held it, and a next step that works.
 * Said from the node as last read (`now`), never assumed: who holds it now (this run, another owner,
 * nobody, or a re-created object), whether this run's cordon still stands, and whether Talos may carry
 * this run's change. The release command is printed only when it can apply, i.e. when the node still
 * carries this run's token; a claim another owner holds is theirs to release.
 */
export function leftAsSetReport(args: {
  capture: ClaimCapture;
  /** the node as last read; undefined when it could not be read */
  now: NodeState | undefined;
  keys: AnnotationKeys;
  config: Pick<Config, 'kubeconfig' | 'kubeContext'>;
  /** the credential patch was sent (undefined: not known, from the saved phase only) */
  talosChanged: boolean | undefined;
  /** whether the run Lease stays held for this node (src/rules/release.ts leftAsSetKeepsLease) */
  leaseKept: boolean;
}): string {
  const { capture, now, keys, config, talosChanged, leaseKept } = args;
  const name = capture.node;
  const get = kubectlCommand(config, `get node ${name} -o yaml`);
  const talos =
    talosChanged === true
      ? 'The credential patch was sent to Talos, so its machine config may carry the new credential.'
      : talosChanged === false
        ? 'Nothing on Talos was changed by this run.'
        : leaseKept
          ? 'The run had marked it phase=mutating: the credential patch may have been sent to Talos.'
          : 'Nothing on Talos was changed by this run.';
  const lease = leaseKept ? ' The run Lease is kept until a person has checked it.' : '';
  const parts = ['Another actor changed the node while this run held it; it was left exactly as they set it.', talos + lease];
  if (!now) {
    parts.push(`It could not be read again: check ${get} before anything else.`);
    return parts.join(' ');
  }
  if (now.uid !== capture.uid) {
    parts.push(
      `The node ${name} was re-created (uid ${capture.uid} → ${now.uid}): nothing of this run is on the new object. Check it and its Talos endpoint (${get}) before anything else.`,
    );
    return parts.join(' ');
  }
  const owner = now.annotations[keys.owner];
  const cordon = now.unschedulable
    ? capture.quarantined !== undefined
      ? `It stays cordoned (it was quarantined, ${keys.quarantined}, before this run).`
      : capture.wasCordoned
        ? 'It stays cordoned (it was cordoned before this run).'
        : "This run's cordon still stands (spec.unschedulable=true; it was schedulable before this run)."
    : 'It is not cordoned any more (someone uncordoned it).';
  const uncordon = now.unschedulable && !cordonedAtClaim(capture) ? kubectlCommand(config, `uncordon ${name}`) : undefined;
  if (owner === capture.owner) {
    parts.push(`It still carries this run's claim (${keys.owner}=${owner}).`, cordon);
    parts.push(`Check who changed it (${get}); when it is safe, release this run's claim: ${releaseCommand(capture, keys, config)}`);
  } else if (owner === undefined) {
    parts.push(`Its ${keys.owner} annotation was removed: nobody holds it.`, cordon);
    parts.push(
      `Check who changed it (${get}); \`mode: fences\` lists what is left of the claim.` +
        (uncordon ? ` When it is safe, give back this run's cordon: ${uncordon}` : ''),
    );
  } else {
    parts.push(`It is now held by ${JSON.stringify(owner)} (${keys.owner}), not by this run: that claim is theirs to release.`, cordon);
    parts.push(
      `Check with whoever holds it (${get}; \`mode: fences\` shows the holder's run and the command that releases its claim).` +
        (uncordon ? ` Once they are done, and only then, give back this run's cordon if they did not: ${uncordon}` : ''),
    );
  }
  return parts.join(' ');
}
