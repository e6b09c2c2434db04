// Typed errors: each carries what a user needs (node, command, classified cause) so nothing
// downstream has to match on message text.
import type { PreflightStop } from './model/preflight.js';

/** Why a kubectl or talosctl call failed, classified once by the adapter that ran it. */
export type FailureCause =
  | 'invalid' // 422: a JSON Patch test op failed, or the object failed validation
  | 'conflict' // 409
  | 'not-found' // 404
  | 'forbidden' // 401/403, or Talos PermissionDenied
  | 'too-many-requests' // 429
  | 'server' // 5xx
  | 'transport' // connection refused/reset, EOF, TLS, i/o timeout, Unavailable
  | 'timeout' // our own deadline, or the tool's --timeout
  | 'cancelled' // the run was cancelled and the tool was stopped mid-call
  | 'usage' // the tool rejected its arguments
  | 'unparseable' // the tool answered, but not in a format we understand
  | 'unknown';

/** Who failed: a process (kubectl, talosctl) or an API client (the Talos API, the Kubernetes API through the run's channel). */
export type ToolName = 'kubectl' | 'talosctl' | 'talos-api' | 'kube-api';

export class ToolError extends Error {
  /** `talos-api`: the Talos API over gRPC (src/adapters/talos/); `kube-api`: the API server over the run's channel (src/adapters/kube/http/) */
  readonly tool: ToolName;
  /** the command line (no secret is ever an argument) */
  readonly command: string;
  /** the classified failure (not Error's own `cause`, which chains an underlying error) */
  readonly kind: FailureCause;
  readonly exitCode: number | null;
  /** the tool's own words, as it printed them: masked where an error is shown (src/action/masked.ts), never here */
  readonly stderr: string;
  readonly node?: string;
  /** how long the server asked to wait before trying again (its `Retry-After`), when it said */
  readonly retryAfterMs?: number;

  constructor(args: {
    tool: ToolName;
    command: string;
    kind: FailureCause;
    exitCode: number | null;
    stderr: string;
    node?: string;
    message?: string;
    retryAfterMs?: number;
  }) {
    const firstLine = args.stderr.trim().split('\n').filter(Boolean).slice(-1)[0] ?? '';
    super(args.message ?? `${args.command} failed (${args.kind}${args.exitCode === null ? '' : `, exit ${args.exitCode}`}): ${firstLine}`);
    this.name = 'ToolError';
    this.tool = args.tool;
    this.command = args.command;
    this.kind = args.kind;
    this.exitCode = args.exitCode;
    this.stderr = args.stderr;
    this.node = args.node;
    if (args.retryAfterMs !== undefined) this.retryAfterMs = args.retryAfterMs;
  }
}

/**
 * A `kubectl drain` that timed out: kubectl's own `--timeout` ("global timeout reached", "context
 * deadline exceeded" while waiting for a pod to terminate) or our deadline past it. Classified once,
 * by the kube adapter that ran the drain (src/adapters/kube/kubectl.ts), which also names from the
 * drain's own output the pods that kept it from finishing, so nothing above it parses kubectl's text.
 */
export class DrainTimeoutError extends ToolError {
  /** `namespace/name` of the pods still pending when the drain gave up, else those a PDB refused (sorted) */
  readonly blockedPods: string[];
  constructor(args: ConstructorParameters<typeof ToolError>[0] & { kind: 'timeout'; blockedPods: string[] }) {
    super(args);
    this.name = 'DrainTimeoutError';
    this.blockedPods = args.blockedPods;
  }
}

/**
 * The Talos API endpoint presented a certificate that is not apid's for it (wrong names, not a
 * server certificate, also a client certificate, or a chain the talosconfig's CA does not sign).
 * Not a ToolError on purpose: it is no failed reading of one node and no transport failure to retry
 * or to read as "unknown, so reboot"; nothing that server answers can be trusted, so the run stops,
 * and the reads never fall back to talosctl because of it.
 */
export class ServerIdentityError extends Error {
  /** `host:port` as dialed */
  readonly endpoint: string;
  /** the name the certificate had to be valid for (the dialed host, or `talos-server-name`) */
  readonly serverName: string;
  readonly reasons: string[];
  constructor(endpoint: string, serverName: string, reasons: string[]) {
    const forName = serverName === endpoint.replace(/:\d+$/, '').replace(/^\[|\]$/g, '') ? '' : ` (checked for the name ${serverName})`;
    super(
      `the Talos API at ${endpoint} presented a certificate that is not a valid server certificate for it${forName}: ${reasons.join('; ')}`,
    );
    this.name = 'ServerIdentityError';
    this.endpoint = endpoint;
    this.serverName = serverName;
    this.reasons = reasons;
  }
}

/**
 * A reboot that was provably never requested: what it needs before the request (over the Talos API,
 * the boot id to compare with afterwards) could not be read, so nothing was sent and the node still
 * runs the containerd it ran, holding the old credential. The cause says why.
 */
export class RebootNotSentError extends Error {
  readonly node: string;
  constructor(node: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RebootNotSentError';
    this.node = node;
  }
}

/**
 * Failures after which a write may or may not have been applied: the request may have reached the
 * server before the connection dropped, the apiserver's 504 Timeout says it "may still be processing
 * the request" (docs/kubernetes-facts.md#k13-server-timeout), a 5xx may come after the write, an
 * unreadable answer came from a write that was applied, and a tool we stopped (our deadline, a
 * cancellation) may have sent it. "Unknown" is not "no": the caller must read before deciding. Every
 * other kind (422, 409, 404, 403, 429, bad usage) is the server or the tool refusing the request.
 */
const OUTCOME_UNKNOWN: ReadonlySet<FailureCause> = new Set<FailureCause>([
  'transport',
  'timeout',
  'cancelled',
  'server',
  'unparseable',
  'unknown',
]);

/** Whether a failed write may still have been applied (see OUTCOME_UNKNOWN); anything not a ToolError counts as unknown. */
export function outcomeUnknown(e: unknown): boolean {
  return !(e instanceof ToolError) || OUTCOME_UNKNOWN.has(e.kind);
}

/**
 * A CAS-guarded write refused because the object is no longer what we judged: a 422 is one of our
 * `test` ops failing (the object moved since we read it), a 404 the object being gone. The CAS did
 * its job; the thing is left as it is. Any other failure says nothing about the object.
 */
export function casLost(e: unknown): boolean {
  return e instanceof ToolError && (e.kind === 'invalid' || e.kind === 'not-found');
}

/** A bad input, reported before anything is mutated. */
export class InputError extends Error {
  readonly input: string;
  constructor(input: string, message: string) {
    super(`input "${input}": ${message}`);
    this.name = 'InputError';
    this.input = input;
  }
}

/** The rollout stopped on a node; `nextStep` says what to check and how to recover (the node's phase says what it was left as). */
export class RolloutError extends Error {
  readonly node: string;
  readonly nextStep: string;
  constructor(node: string, message: string, nextStep: string, options?: ErrorOptions) {
    super(`${node}: ${message}`, options);
    this.name = 'RolloutError';
    this.node = node;
    this.nextStep = nextStep;
  }
}

/** The message of anything thrown, for a one-line report. */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * The pre-flight check (docs/preflight.md) could not confirm a registry accepts the new credential,
 * before anything was claimed: `refused` (the registry or its token endpoint answered no),
 * `unsupported` (the token endpoint does not serve the request containerd sends for this credential:
 * 400/404/405), `unreachable` (no answer: the network, TLS, a timeout, a 5xx), or `withheld` (the check
 * refused to send the credential where the registry sent it: a plain-http realm, core/credentialRoute.ts;
 * nothing was sent). Names the host, what was asked and what came back, never the credential.
 */
export class PreflightError extends Error {
  readonly host: string;
  readonly verdict: PreflightStop;
  /** e.g. `GET https://ghcr.io/token?service=ghcr.io&scope=repository:org/app:pull with the new credential` */
  readonly asked: string;
  /** e.g. `401 Unauthorized: UNAUTHORIZED authentication required`, or the transport failure, or why it was not sent */
  readonly answered: string;
  /** the pre-flight lines of the hosts checked, this one last (the summary shows them) */
  readonly lines: string[];
  constructor(args: { host: string; verdict: PreflightStop; asked: string; answered: string; fix?: string; lines?: string[] }) {
    const says = {
      refused: ['refused the new credential', 'the registry answered', 'fix the credential (or the preflight-image) and run again'],
      unsupported: [
        'does not serve the token request containerd sends for this credential',
        'the registry answered',
        "check the token endpoint and the credential's form (an identityToken is sent as the OAuth2 refresh-token POST); set preflight: false to skip the check",
      ],
      unreachable: [
        'could not be reached',
        'got',
        'if the runner cannot reach this registry, set preflight: false to skip the check (a private CA: registry-ca-file; a proxy: HTTPS_PROXY, NO_PROXY)',
      ],
      // the check's own refusal (core/credentialRoute.ts): `answered` says why, `fix` what to change
      withheld: [
        'refused to send the new credential',
        'it was',
        args.fix ?? 'the credential goes only over https to the registry and its own token realm',
      ],
    }[args.verdict];
    super(
      `pre-flight: ${args.host} ${says[0]}: asked ${args.asked}; ${says[1]} ${args.answered}. nothing was claimed or changed; ${says[2]}`,
    );
    this.name = 'PreflightError';
    this.host = args.host;
    this.verdict = args.verdict;
    this.asked = args.asked;
    this.answered = args.answered;
    this.lines = args.lines ?? [];
  }
}
