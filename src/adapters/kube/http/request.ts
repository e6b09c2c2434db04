// One request to the API server over the run's channel (channel.ts), with node's own HTTP/1.1 client
// (keep-alive connections on the Unix socket): no process, no library to load at start
// (docs/kube-channel.md#why-nodehttp-and-not-undici). A failure is a ToolError classified once (status.ts).
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { ToolError } from '../../../core/errors.js';
import type { KubeChannel, Opened } from './channel.js';
import { answerMessage, classifyAnswer, classifySocketError, retryAfterMs, type Answer } from './status.js';

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface KubeRequest {
  method: Method;
  /** the path and its query, as the API server takes it (`/api/v1/nodes/w-1`) */
  path: string;
  /** JSON-encoded as the body */
  body?: unknown;
  /** the body's type: `application/json` unless a patch names its own */
  contentType?: string;
  /** our deadline for the whole exchange (the proxy has none of its own) */
  timeoutMs: number;
  /** aborting ends the exchange at once: cause 'cancelled' */
  signal?: AbortSignal;
  /** the node the request is about, for the error */
  node?: string;
  /** what the action is doing (`claim`, `drain`, `watch`…): the User-Agent's comment, in the API server's audit log */
  op: string;
  /** streams the body as it arrives (a watch); the answer's body is then empty */
  onChunk?: (chunk: string) => void;
}

/** The User-Agent every request carries: the action and, in the comment, which of its operations sent it. */
export const USER_AGENT = 'talos-registry-auth-rollout';

/** Counts and records requests (the bench reports them per node). */
export interface RequestListener {
  (r: { method: Method; path: string; op: string; status: number | undefined; durationMs: number }): void;
}

/** A node:http error's code (ENOENT, ECONNREFUSED, ECONNRESET…). */
function codeOf(e: unknown): string | undefined {
  const c = (e as { code?: unknown } | undefined)?.code;
  return typeof c === 'string' ? c : undefined;
}

/**
 * The run was cancelled (SIGINT/SIGTERM of the step): the runner sends SIGTERM 7.5 s after SIGINT and
 * kills the step 2.5 s later (docs/kube-channel.md). The channel outlives the cancellation so the step
 * can give its nodes back, within that grace:
 * - a request in flight then gets IN_FLIGHT_GRACE_MS more for its answer (a claim or a release that
 *   is answered has a known outcome), then ends `cancelled`;
 * - a request sent after it (the step's cleanup: releases, Events, the Lease) waits AFTER_CANCEL_MS at
 *   most, and none goes on past CLEANUP_WINDOW_MS after the cancellation: the step must still publish
 *   its report (the outputs a workflow reads) before the runner's SIGTERM.
 */
export const IN_FLIGHT_GRACE_MS = 2_000;
export const AFTER_CANCEL_MS = 3_000;
export const CLEANUP_WINDOW_MS = 6_000;

/** Nothing was sent: the socket is not there or nobody listens on it (the proxy died). */
const NOT_SENT = new Set(['ENOENT', 'ECONNREFUSED']);

export class KubeHttp {
  readonly listeners = new Set<RequestListener>();
  /** requests sent, for the bench and the tests */
  requestCount = 0;

  constructor(readonly channel: KubeChannel) {}

  /** `METHOD path`, as errors name the request. */
  describe(req: Pick<KubeRequest, 'method' | 'path'>): string {
    return `${req.method} ${req.path}`;
  }

  /**
   * The answer, whatever its status; throws a ToolError when there is none (transport, timeout,
   * cancelled). A request that could not reach the proxy at all (it died) is sent once more on the
   * channel re-opened: nothing of it was sent.
   */
  async exchange(req: KubeRequest): Promise<Answer> {
    let opened = await this.opened(req);
    try {
      return await this.once(opened, req);
    } catch (e) {
      if (!NOT_SENT.has(codeOf(e) ?? '')) throw this.noAnswer(req, e);
      await waitForExit(opened);
      opened = await this.opened(req);
      try {
        return await this.once(opened, req);
      } catch (e2) {
        throw this.noAnswer(req, e2);
      }
    }
  }

  private async opened(req: KubeRequest): Promise<Opened> {
    try {
      return await this.channel.open();
    } catch (e) {
      if (e instanceof ToolError && e.node === undefined && req.node !== undefined) {
        throw new ToolError({
          tool: e.tool,
          command: e.command,
          kind: e.kind,
          exitCode: e.exitCode,
          stderr: e.stderr,
          node: req.node,
          message: e.message,
        });
      }
      throw e;
    }
  }

  /** The answer when it is a 2xx, parsed as JSON (undefined for an empty body); a ToolError otherwise. */
  async json<T = unknown>(req: KubeRequest): Promise<T> {
    const a = await this.exchange(req);
    if (a.status < 200 || a.status > 299) throw this.refused(req, a);
    if (a.body.trim() === '') return undefined as T;
    try {
      return JSON.parse(a.body) as T;
    } catch {
      throw new ToolError({
        tool: 'kube-api',
        command: this.describe(req),
        kind: 'unparseable',
        exitCode: null,
        stderr: `the answer (HTTP ${a.status}) is not JSON`,
        node: req.node,
      });
    }
  }

  /** A non-2xx answer as a ToolError: its cause from the status and the Status reason (status.ts). */
  refused(req: Pick<KubeRequest, 'method' | 'path' | 'node'>, a: Answer): ToolError {
    const kind = classifyAnswer(a);
    const message = answerMessage(a);
    return new ToolError({
      tool: 'kube-api',
      command: this.describe(req),
      kind,
      exitCode: null,
      stderr: message,
      node: req.node,
      message: `${this.describe(req)} failed (${kind}, HTTP ${a.status}): ${message}`,
      retryAfterMs: retryAfterMs(a),
    });
  }

  private noAnswer(req: KubeRequest, e: unknown): ToolError {
    if (e instanceof ToolError) return e;
    const code = codeOf(e);
    const kind = code === 'ABORT_ERR' ? 'cancelled' : code === 'RAR_TIMEOUT' ? 'timeout' : classifySocketError(code);
    const why = e instanceof Error ? e.message : String(e);
    return new ToolError({
      tool: 'kube-api',
      command: this.describe(req),
      kind,
      exitCode: null,
      stderr: why,
      node: req.node,
      message: `${this.describe(req)} failed (${kind}): ${why}`,
    });
  }

  private once(opened: Opened, req: KubeRequest): Promise<Answer> {
    const t0 = performance.now();
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const run = this.channel.runSignal;
    const cancelledAt = this.channel.cancelledAt;
    const sentAfterCancel = cancelledAt !== undefined;
    let timeoutMs = req.timeoutMs;
    if (sentAfterCancel) {
      const windowLeft = Math.floor(cancelledAt + CLEANUP_WINDOW_MS - t0);
      if (windowLeft <= 0) {
        const why = `not sent: the cancelled step's ${CLEANUP_WINDOW_MS} ms to give back what it holds are over`;
        return Promise.reject(Object.assign(new Error(why), { code: 'RAR_TIMEOUT' }));
      }
      timeoutMs = Math.min(timeoutMs, AFTER_CANCEL_MS, windowLeft);
    }
    this.requestCount++;
    return new Promise<Answer>((resolve, reject) => {
      let done = false;
      let grace: NodeJS.Timeout | undefined;
      const finish = (err: Error | undefined, a?: Answer) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        clearTimeout(grace);
        req.signal?.removeEventListener('abort', onAbort);
        run.removeEventListener('abort', onRunCancelled);
        for (const l of this.listeners)
          l({ method: req.method, path: req.path, op: req.op, status: a?.status, durationMs: Math.round(performance.now() - t0) });
        if (a) resolve(a);
        else reject(err ?? new Error('no answer'));
      };
      const headers: Record<string, string> = {
        // kubectl proxy's Host filter accepts localhost (its --accept-hosts default)
        Host: 'localhost',
        Accept: 'application/json',
        'User-Agent': `${USER_AGENT} (${req.op})`,
      };
      if (body !== undefined) {
        headers['Content-Type'] = req.contentType ?? 'application/json';
        headers['Content-Length'] = String(Buffer.byteLength(body));
      }
      const r = httpRequest(
        { socketPath: opened.socketPath, agent: opened.agent, method: req.method, path: req.path, headers },
        (res: IncomingMessage) => {
          res.setEncoding('utf8');
          let text = '';
          const ok = (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300;
          res.on('data', (s: string) => {
            if (req.onChunk && ok) req.onChunk(s);
            else text += s;
          });
          const retryAfter = res.headers['retry-after'];
          res.on('end', () =>
            finish(undefined, { status: res.statusCode ?? 0, body: text, ...(typeof retryAfter === 'string' ? { retryAfter } : {}) }),
          );
          res.on('error', (e) => finish(e));
          res.on('aborted', () => finish(Object.assign(new Error('the answer was cut short'), { code: 'ECONNRESET' })));
        },
      );
      const timer = setTimeout(() => {
        r.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'RAR_TIMEOUT' }));
      }, timeoutMs);
      const onAbort = () => r.destroy(Object.assign(new Error('cancelled'), { code: 'ABORT_ERR' }));
      if (req.signal?.aborted) onAbort();
      else req.signal?.addEventListener('abort', onAbort, { once: true });
      const onRunCancelled = () => {
        grace = setTimeout(() => {
          const why = `the run was cancelled and no answer came within ${IN_FLIGHT_GRACE_MS} ms`;
          r.destroy(Object.assign(new Error(why), { code: 'ABORT_ERR' }));
        }, IN_FLIGHT_GRACE_MS);
      };
      if (!sentAfterCancel) run.addEventListener('abort', onRunCancelled, { once: true });
      r.on('error', (e) => finish(e));
      r.end(body);
    });
  }
}

/** A connection the proxy refused: give its exit a moment to be seen, so the channel starts a new one. */
async function waitForExit(opened: Opened): Promise<void> {
  for (let i = 0; i < 40 && opened.alive; i++) await new Promise((r) => setTimeout(r, 50));
}
