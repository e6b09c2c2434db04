// The pipeline's errors that reach a person: each class builds its message once, from what it
// carries (the node, the Lease, the nodes that failed or were quarantined, the cause), so no caller
// edits a message and no message text is matched on. The stop of one node (NodeStop) is the
// pipeline's stop type, beside stopNode in src/pipeline/stop.ts.
import { errorMessage, RolloutError } from '../core/errors.js';
import { formatDuration } from '../core/format.js';
import { workloadName } from '../core/workloads.js';
import type { Unsettled } from '../rules/settle.js';

/** The runner was cancelled: no further step or node starts. */
export class CancelledError extends Error {
  readonly kind = 'cancelled' as const;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CancelledError';
  }
}

// ── the run Lease (src/pipeline/runLock.ts) ──

/** Another run holds the Lease. Never overridden by time: see judgeLease. */
export class LeaseHeldError extends Error {
  readonly holder: string;
  readonly runUrl?: string;
  readonly expired: boolean;
  constructor(lease: string, holder: string, expired: boolean, runUrl?: string, renewTime?: string) {
    const who = runUrl
      ? `${holder} (workflow run ${runUrl})`
      : `${holder} (not an owner token of this action, so no workflow run can be named)`;
    const age = expired
      ? `its last renewal${renewTime ? ` (${renewTime})` : ''} is older than its lease duration by the holder's own clock, which is not trusted: it is taken over only once nothing renews it for its whole duration while a run watches it`
      : `it was renewed recently${renewTime ? ` (${renewTime})` : ''}`;
    super(
      `Lease ${lease} is held by ${who}; ${age}. Nothing was changed. ` +
        'Wait for that run to finish, then rerun: a Lease its run no longer renews (a killed job) is taken over once it has gone unrenewed for its duration, and that run’s claims are completed (docs/recovery.md).',
    );
    this.name = 'LeaseHeldError';
    this.holder = holder;
    this.runUrl = runUrl;
    this.expired = expired;
  }
}

/** The Lease is no longer provably ours: the rollout must not start another mutation. */
export class LeaseLostError extends Error {
  readonly reason: string;
  constructor(lease: string, reason: string) {
    super(`run lock (Lease ${lease}) lost: ${reason}. Stopping before the next mutation.`);
    this.name = 'LeaseLostError';
    this.reason = reason;
  }
}

/**
 * Creating or taking the Lease got no clear answer (a timeout, a dropped connection, a cancellation)
 * and no read could tell whether it landed: the Lease may be held by this run. Whoever handles this
 * must not forget it: the post step releases it by CAS (a no-op when it is not ours).
 */
export class LeaseUnknownError extends Error {
  constructor(lease: string, cause: string) {
    super(
      `Lease ${lease}: acquiring it got no clear answer (${cause}) and it could not be read again, so it may be held by this run. ` +
        'No node was touched. The post step releases it if it names this run; otherwise run this action with `mode: recover-fences` once this run has completed.',
    );
    this.name = 'LeaseUnknownError';
  }
}

/** Two races in a row for the Lease: someone else is acquiring it right now. */
export class LeaseContendedError extends Error {
  constructor(lease: string, detail: string) {
    super(`Lease ${lease} changed under us twice while acquiring it (${detail}); another run is starting. Nothing was changed.`);
    this.name = 'LeaseContendedError';
  }
}

/** The run ended but its Lease could not be released (someone else holds it by then, or the release failed): `why` says which. */
export class LeaseNotReleasedError extends Error {
  constructor(why: string) {
    super(`the run Lease was not released at the end of the run: ${why}`);
    this.name = 'LeaseNotReleasedError';
  }
}

/** Another run holds the Lease (the cause), and what the nodes show of it: the claims it left, or none. */
export class HolderFencesError extends Error {
  constructor(held: LeaseHeldError, fences: string) {
    super(`${held.message}${fences}`, { cause: held });
    this.name = 'HolderFencesError';
  }
}

// ── one node's steps ──

/** The quorum gate refused a control plane's drain or reboot (src/rules/quorum.ts says why). */
export class QuorumRefusal extends Error {
  constructor(readonly problems: string[]) {
    super(`control-plane reboot refused by the quorum gate: ${problems.join('; ')}`);
  }
}

/** The watch of the node could not be kept, so the drain was ended: the claim was no longer proven. */
export class DrainUnwatched extends Error {}

/** The probe pod of verify-image did not pull the image through containerd (src/pipeline/verifyImage.ts): the message says why. */
export class VerifyFailed extends Error {}

/** The settle gate timed out: the workloads still not available, each with why. */
export class SettleTimeoutError extends RolloutError {
  constructor(
    node: string,
    readonly unsettled: readonly Unsettled[],
    timeoutMs: number,
    held: 'drain' | 'start',
  ) {
    const reason = `settle gate: ${unsettled.map((u) => `${workloadName(u.workload)} (${u.why})`).join('; ')} did not become available again (as before its drain) within settle-timeout ${formatDuration(timeoutMs)}; the ${held} was not started`;
    super(
      node,
      reason,
      held === 'drain'
        ? `The node was released and was not drained or rebooted. Check why the workloads named do not become available (kubectl describe), then rerun; settle-timeout: 0 turns the wait off.`
        : `No further node was started. Check why the workloads named do not become available (kubectl describe), then rerun; settle-timeout: 0 turns the wait off.`,
    );
    this.name = 'SettleTimeoutError';
    this.reason = reason;
  }

  /** the message without the node's name in front */
  readonly reason: string;
}

// ── how the run ended ──

/** One node's stop as the roll saw it: its message and next step, and the stop (or error) behind it. */
export interface NodeFailure {
  node: string;
  message: string;
  nextStep: string;
  cause: unknown;
}

/** An error that ended the run between nodes (its cause), saying truthfully how far the run got. */
export class EndedEarlyError extends Error {
  constructor(cause: unknown, processed: number) {
    const so = processed === 0 ? 'no node was processed' : `${processed} node(s) were already processed (listed below)`;
    super(`${errorMessage(cause)}; ${so} and no further node was started`, { cause });
    this.name = 'EndedEarlyError';
  }
}

/**
 * The roll stopped because quarantined nodes hold the capacity (src/rules/quarantine.ts
 * capacityStopMessage): the message names them and every node not started with why; `nextStep` what a person does.
 */
export class CapacityStopError extends Error {
  constructor(
    message: string,
    readonly nextStep: string,
  ) {
    super(`${message}\nNext step: ${nextStep}`);
    this.name = 'CapacityStopError';
  }
}

/**
 * The error of a run that quarantined nodes: each one, what blocked its drain and how to lift it
 * (the node's reason and next step), after the error that ended the run otherwise, when one did.
 */
export class QuarantinedNodesError extends Error {
  constructor(
    readonly quarantined: readonly NodeFailure[],
    readonly other?: Error,
  ) {
    const otherText = other ? `${other.message}${other instanceof RolloutError ? `\nNext step: ${other.nextStep}` : ''}\n` : '';
    const lines = quarantined.map((q) => `- ${q.node}: ${q.message}. ${q.nextStep}`);
    super(
      `${otherText}${quarantined.length} node(s) quarantined: their drain timed out, so they were left cordoned and not rebooted, and their containerd still runs the OLD credential:\n${lines.join('\n')}`,
      { cause: other ?? quarantined[0].cause },
    );
    this.name = 'QuarantinedNodesError';
  }
}

/**
 * The error of a roll that stopped on failed nodes: the first one's (with its next step), naming the
 * others when there are several; every failure stays reachable in `failures`, each with its cause.
 */
export class NodesFailedError extends RolloutError {
  constructor(readonly failures: readonly NodeFailure[]) {
    const [first] = failures;
    const others =
      failures.length > 1 ? ` (${failures.length} nodes failed: ${failures.map((f) => f.node).join(', ')}; see each below)` : '';
    super(first.node, `${first.message}${others}`, first.nextStep, { cause: first.cause });
  }
}
