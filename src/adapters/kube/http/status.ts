// The one table that classifies an API server's answer (its HTTP status and the `Status` object's
// `reason`) and a failed exchange with the channel into the causes the project uses (FailureCause,
// src/core/errors.ts): the same classes kubectl's stderr was read into before
// (src/adapters/kube/parse/kubectlErrors.ts), now from the typed answer (docs/kube-channel.md#errors).
import type { FailureCause } from '../../../core/errors.js';

/**
 * metav1.StatusReason → cause (k8s.io/apimachinery pkg/apis/meta/v1/types.go, the reasons and their codes).
 * A reason absent from the table falls back to the HTTP code (CODES below).
 */
const REASONS: Readonly<Record<string, FailureCause>> = {
  Invalid: 'invalid', // 422: a JSON Patch `test` failed, or validation
  Conflict: 'conflict', // 409
  AlreadyExists: 'conflict', // 409 on create
  NotFound: 'not-found', // 404
  Forbidden: 'forbidden', // 403 (also a namespace that is terminating: a cause says so)
  Unauthorized: 'forbidden', // 401
  TooManyRequests: 'too-many-requests', // 429: a PDB refusing an eviction, or API priority and fairness
  InternalError: 'server', // 500
  ServiceUnavailable: 'server', // 503
  Timeout: 'server', // 504: "may still be processing the request" (docs/kubernetes-facts.md#k13-server-timeout)
  ServerTimeout: 'server', // 500 with a retry hint
  BadRequest: 'usage', // 400: the request itself was refused
  MethodNotAllowed: 'usage', // 405
  NotAcceptable: 'usage', // 406
  UnsupportedMediaType: 'usage', // 415
  RequestEntityTooLarge: 'usage', // 413
};

/** HTTP code → cause, for an answer without a known reason (an etcd timeout is a 500 without one). */
function byCode(code: number): FailureCause {
  if (code === 422) return 'invalid';
  if (code === 409) return 'conflict';
  if (code === 404) return 'not-found';
  if (code === 401 || code === 403) return 'forbidden';
  if (code === 429) return 'too-many-requests';
  if (code >= 500) return 'server';
  if (code === 400 || code === 405 || code === 406 || code === 413 || code === 415) return 'usage';
  return 'unknown';
}

/**
 * `kubectl proxy` answers a request it could not forward with a 500 and the Go error as plain text
 * (k8s.io/kubectl pkg/proxy/proxy_server.go, `responder.Error`): the API server unreachable, TLS, the
 * credential plugin failing. Those are transport failures, as kubectl's own "Unable to connect to the
 * server" was; the words are Go's net/http and crypto/tls ones.
 */
const TRANSPORT_TEXT =
  /connection refused|connection reset by peer|no such host|unexpected EOF|\bEOF\b|i\/o timeout|TLS handshake|tls: |x509: |broken pipe|no route to host|http2: |net\/http: |getting credentials|dial tcp|proxyconnect/;

export interface Answer {
  status: number;
  /** the body's text (a `Status` object as JSON from the API server, plain text from the proxy itself) */
  body: string;
  /** the `Retry-After` header, when the answer has one (a 429, a 503 of an apiserver shutting down) */
  retryAfter?: string;
}

/**
 * The wait a `Retry-After` header asks for, in ms: whole seconds, as the API server writes it
 * (client-go reads only that form too: k8s.io/client-go rest/request.go retryAfterSeconds).
 */
export function retryAfterMs(a: Pick<Answer, 'retryAfter'>): number | undefined {
  const v = a.retryAfter?.trim();
  return v !== undefined && /^\d+$/.test(v) ? Number(v) * 1000 : undefined;
}

/** The server's words: the Status `message`, or the plain text. */
export function answerMessage(a: Answer): string {
  const s = statusOf(a.body);
  if (s && typeof s.message === 'string' && s.message) return s.message;
  return a.body.trim().slice(0, 2000) || `HTTP ${a.status}`;
}

/** The body as a metav1.Status, when it is one. */
export function statusOf(body: string): { reason?: string; code?: number; message?: string; details?: unknown } | undefined {
  try {
    const o = JSON.parse(body) as Record<string, unknown>;
    return o && o.kind === 'Status' ? o : undefined;
  } catch {
    return undefined;
  }
}

/** The cause of a non-2xx answer. */
export function classifyAnswer(a: Answer): FailureCause {
  const s = statusOf(a.body);
  if (s) {
    const byReason = s.reason ? REASONS[s.reason] : undefined;
    return byReason ?? byCode(typeof s.code === 'number' && s.code > 0 ? s.code : a.status);
  }
  // not a Status: the proxy's own answer (a 500 it could not forward, a 403 of its filter)
  if (a.status >= 500 && TRANSPORT_TEXT.test(a.body)) return 'transport';
  return byCode(a.status);
}

/** Whether a failed Status names a cause of `type` (`NamespaceTerminating`, for an eviction). */
export function hasStatusCause(body: string, type: string): boolean {
  const details = statusOf(body)?.details as { causes?: Array<{ type?: string }> } | undefined;
  return Array.isArray(details?.causes) && details.causes.some((c) => c?.type === type);
}

/**
 * The cause of an exchange that got no answer: Node's socket errors on the channel's Unix socket.
 * ENOENT/ECONNREFUSED: the proxy is not there (nothing was sent); the rest: the exchange broke.
 */
export function classifySocketError(code: string | undefined): FailureCause {
  return code === 'ETIMEDOUT' ? 'timeout' : 'transport';
}
