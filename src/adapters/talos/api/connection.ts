// One gRPC channel to the talosconfig context's endpoint (apid), over mutual TLS, shared by every
// call of the run: grpc-js multiplexes the calls as streams of one HTTP/2 connection. Each call
// names exactly one target node with the `node` metadata key (apid's one-to-one routing; the
// deprecated `nodes` key is refused by the COSI State API) and carries its own deadline.
// Failures become ToolError with the cause classified from the gRPC status, as talosctl's
// printed `rpc error: code = … desc = …` is classified on the CLI path.
// The server's certificate is checked on every connection (serverIdentity.ts), and a refused one is
// never trusted nor worked around (no fallback to talosctl). On the first connection (verifyServer,
// before the run mutates anything) a refusal is a ServerIdentityError that every later call gets too,
// never a failed reading. On a reconnection it fails that connection only: apid's certificate is
// re-issued when the machine's addresses change (a VIP moving to another control plane while the one
// holding it reboots, a node back from its reboot before its certificate names the dialed address;
// docs/talos-api.md, "Server identity"), so a call that met it waits for the next dial within its own
// deadline, and only MAX_REFUSALS refusals in a row make it the run's ServerIdentityError (the
// verdicts are kept by refusals.ts).
import { type PeerCertificate, connect as tlsConnect } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import type { ServerIdentityError, ToolError } from '../../../core/errors.js';
import { grpcToolError, refusedUntilDeadline } from './grpcFailures.js';
import { RPC, encodePlain, messageType, mutates, toPlain, type RpcName } from './proto.js';
import { ServerRefusals } from './refusals.js';
import { expectedServerName, serverCertificateProblems, sniFor } from './serverIdentity.js';
import { splitEndpoint, type TalosCredentials } from './talosconfig.js';

export { grpcDetailsOf } from './grpcFailures.js';

export interface TalosConnectionOptions {
  /** `host[:port]` from the talosconfig (port 50000 when absent) */
  endpoint: string;
  credentials: TalosCredentials;
  /**
   * The name the server certificate must be valid for instead of the endpoint's host (the
   * `talos-server-name` input: an endpoint reached through a load balancer or a tunnel). See
   * docs/talos-api.md, "Server identity".
   */
  serverName?: string;
  /** per-call deadline; default 30 s */
  callTimeoutMs?: number;
  /** calls in flight at once on the connection; default 32 */
  maxInFlight?: number;
}

type Plain = Record<string, unknown>;

/** What every grpc-js request of one call is started with: its method, codec, message, metadata and deadline. */
interface RequestArgs {
  path: string;
  serialize: (value: Plain) => Buffer;
  deserialize: (bytes: Buffer) => Plain;
  request: Plain;
  metadata: grpc.Metadata;
  options: grpc.CallOptions;
}

/** the channel's reconnect interval while the endpoint is unreachable */
const RECONNECT_MS = 1000;

/** One call's own deadline and cancellation (the reboot's short polls); the connection's defaults otherwise. */
export interface CallOptions {
  /** this call's deadline instead of callTimeoutMs */
  timeoutMs?: number;
  /** cancels the call (gRPC Canceled → a ToolError of kind `cancelled`) */
  signal?: AbortSignal;
}

export class TalosConnection {
  readonly endpoint: string;
  /** the name the server certificate is checked for */
  readonly serverName: string;
  private readonly host: string;
  private readonly port: number;
  private readonly credentials: TalosCredentials;
  private readonly client: grpc.Client;
  /** the server certificate's verdicts: the refusal that is the run's, the reconnections refused */
  private readonly refusals: ServerRefusals;
  private readonly callTimeoutMs: number;
  private readonly maxInFlight: number;
  private inFlight = 0;
  private readonly queue: Array<() => void> = [];

  constructor(opts: TalosConnectionOptions) {
    const { host, port } = splitEndpoint(opts.endpoint);
    this.endpoint = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    this.callTimeoutMs = opts.callTimeoutMs ?? 30_000;
    this.maxInFlight = Math.max(1, opts.maxInFlight ?? 32);
    this.host = host;
    this.port = port;
    this.serverName = expectedServerName(host, opts.serverName);
    this.refusals = new ServerRefusals(this.endpoint, this.serverName);
    const c = (this.credentials = opts.credentials);
    const creds = grpc.credentials.createSsl(Buffer.from(c.ca), Buffer.from(c.key), Buffer.from(c.crt), {
      // The chain is verified against the talosconfig CA by TLS itself; this is the identity check,
      // made on every (re)connection: the endpoint may be another machine after a reboot.
      checkServerIdentity: (_host: string, cert: PeerCertificate) => this.refusals.check(cert),
    });
    // SNI and :authority carry the name checked, except that an IP address is no TLS server name
    // (serverIdentity.ts sniFor): the identity check above reads the IP itself, not the SNI.
    const sni = sniFor(this.serverName);
    this.client = new grpc.Client(this.endpoint, creds, {
      'grpc.ssl_target_name_override': sni,
      'grpc.default_authority': sni,
      // our own channel: no subchannel shared with another client in the process
      'grpc.use_local_subchannel_pool': 1,
      // The endpoint may itself be a node the run reboots: reconnect once a second while it is away, as
      // talosctl's reboot tracker does (it dials without backoff), not after grpc's backoff of up to 2 min.
      'grpc.initial_reconnect_backoff_ms': RECONNECT_MS,
      'grpc.max_reconnect_backoff_ms': RECONNECT_MS,
    });
  }

  close(): void {
    this.client.close();
  }

  /** calls started and not settled */
  get active(): number {
    return this.inFlight;
  }

  /** calls waiting for a slot */
  get waiting(): number {
    return this.queue.length;
  }

  /** One unary call to one node. */
  async unary(rpc: RpcName, node: string, request: Plain = {}, opts: CallOptions = {}): Promise<Plain> {
    return this.call<Plain>(rpc, node, request, opts, (a, done) =>
      this.client.makeUnaryRequest<Plain, Plain>(a.path, a.serialize, a.deserialize, a.request, a.metadata, a.options, (err, value) => {
        if (err) done.reject(err);
        else done.resolve(value ?? {});
      }),
    );
  }

  /** A server-streaming call to one node, collected whole (List of one path, Read of one file). */
  async stream(rpc: RpcName, node: string, request: Plain, opts: CallOptions = {}): Promise<Plain[]> {
    return this.call<Plain[]>(rpc, node, request, opts, (a, done) => {
      const out: Plain[] = [];
      const call = this.client.makeServerStreamRequest<Plain, Plain>(a.path, a.serialize, a.deserialize, a.request, a.metadata, a.options);
      call.on('data', (d: Plain) => out.push(d));
      call.on('error', (err: grpc.ServiceError) => done.reject(err));
      call.on('status', (s: grpc.StatusObject) => {
        if (s.code !== grpc.status.OK) return;
        done.resolve(out);
      });
      return call;
    });
  }

  /**
   * One call of `rpc` to `node` (unary or streaming), within the in-flight limit and through `dialing`:
   * `issue` starts it with the arguments every grpc-js request takes and settles it through `done`,
   * which first detaches the call from the caller's signal and from the wait for the next dial.
   */
  private call<T>(
    rpc: RpcName,
    node: string,
    request: Plain,
    opts: CallOptions,
    issue: (args: RequestArgs, done: { resolve: (value: T) => void; reject: (err: grpc.ServiceError) => void }) => { cancel(): void },
  ): Promise<T> {
    const m = RPC[rpc];
    const reqType = messageType(m.req);
    const resType = messageType(m.res);
    const deadline = Date.now() + (opts.timeoutMs ?? this.callTimeoutMs);
    return this.limited(() =>
      this.dialing(
        m.path,
        node,
        !mutates(rpc),
        opts.signal,
        (waitForReady, track) =>
          new Promise<T>((resolve, reject) => {
            const args: RequestArgs = {
              path: m.path,
              serialize: (v) => encodePlain(reqType, v),
              deserialize: (b) => toPlain(resType, b),
              request,
              metadata: this.metadata(node, waitForReady),
              options: { deadline },
            };
            const release = () => {
              unbind();
              untrack();
            };
            const call = issue(args, {
              resolve: (value) => {
                release();
                resolve(value);
              },
              reject: (err) => {
                release();
                reject(err);
              },
            });
            const unbind = cancelOn(opts.signal, call);
            const untrack = track(call);
          }),
      ),
    );
  }

  /**
   * One call, and the same call once more, waiting for the next dial (waitForReady) until its deadline,
   * when its first try met either of two things:
   * - its connection's certificate refused on a reconnection: sending it again is safe, even for a
   *   Reboot, as grpc failed it with "No connection established", before any request left;
   * - a read's connection dropped under it (droppedUnderCall): the request may have reached the node
   *   and the answer did not; reading again changes nothing, and an evidence read lost to a drop (the
   *   endpoint's VIP moving, apid restarting) would otherwise be a reboot for want of evidence. A call
   *   that changes the machine is not sent again here: its caller finds out what it did.
   * The second try is cancelled when the refusal becomes the run's (ServerRefusals.check, refusals.ts).
   */
  private async dialing<T>(
    path: string,
    node: string,
    read: boolean,
    signal: AbortSignal | undefined,
    attempt: (waitForReady: boolean, track: (call: { cancel(): void }) => () => void) => Promise<T>,
  ): Promise<T> {
    const before = this.refusals.runRefusal();
    if (before) throw before;
    const untracked = () => () => undefined;
    try {
      return await attempt(false, untracked);
    } catch (e) {
      const err = e as grpc.ServiceError;
      if (!this.refusals.refusedReconnection(err) && !(read && droppedUnderCall(err))) throw this.failure(path, node, err, signal);
    }
    try {
      return await attempt(true, (call) => this.refusals.waitingForDial(call));
    } catch (e) {
      const err = e as grpc.ServiceError;
      // read again: a refusal that became the run's while this call waited ended it (ServerRefusals.check)
      const refused = this.refusals.runRefusal();
      if (refused) throw refused;
      const last = this.refusals.last;
      if (err.code === grpc.status.DEADLINE_EXCEEDED && last) throw refusedUntilDeadline(this.endpoint, path, node, last);
      throw this.failure(path, node, err, signal);
    }
  }

  /** `node` names the target; `waitForReady` makes the call wait for a connection instead of failing at once without one. */
  private metadata(node: string, waitForReady: boolean): grpc.Metadata {
    const md = new grpc.Metadata({ waitForReady });
    md.set('node', node);
    return md;
  }

  private async limited<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inFlight >= this.maxInFlight) await new Promise<void>((r) => this.queue.push(r));
    this.inFlight++;
    try {
      return await fn();
    } finally {
      this.inFlight--;
      this.queue.shift()?.();
    }
  }

  /**
   * Checks the endpoint's certificate with a TLS handshake of its own, before the run mutates
   * anything: unlike a refused gRPC connection, which reaches a call only as Unavailable, it says
   * why, a chain the talosconfig's CA does not sign included. Throws ServerIdentityError. An endpoint
   * that cannot be reached proves nothing either way: the calls then fail as they would have.
   */
  async verifyServer(timeoutMs = this.callTimeoutMs): Promise<void> {
    const c = this.credentials;
    const seen = await new Promise<{ cert: PeerCertificate; chainError?: string } | undefined>((resolve) => {
      const socket = tlsConnect({
        host: this.host,
        port: this.port,
        servername: sniFor(this.serverName),
        ca: c.ca,
        cert: c.crt,
        key: c.key,
        ALPNProtocols: ['h2'],
        // judged below, with the reason kept (rejecting here would leave only a closed socket); the
        // chain's verdict comes from TLS (authorizationError), the identity from serverIdentity.ts
        rejectUnauthorized: false,
        checkServerIdentity: () => undefined,
      });
      const done = (v: { cert: PeerCertificate; chainError?: string } | undefined) => {
        clearTimeout(timer);
        socket.destroy();
        resolve(v);
      };
      const timer = setTimeout(() => done(undefined), timeoutMs);
      socket.once('secureConnect', () => {
        const err = socket.authorizationError as Error | string | null;
        done({ cert: socket.getPeerCertificate(), chainError: err ? String((err as { code?: string }).code ?? err) : undefined });
      });
      socket.once('error', () => done(undefined));
    });
    if (!seen) return;
    const chain = seen.chainError ? [`it does not verify against the talosconfig's CA (${seen.chainError})`] : [];
    const problems = [...chain, ...serverCertificateProblems(seen.cert, this.serverName)];
    this.refusals.firstVerdict(problems);
  }

  /** A failed call: the refused certificate when it is the run's (the call saw only Unavailable), else a ToolError. */
  private failure(path: string, node: string, err: grpc.ServiceError, signal: AbortSignal | undefined): ToolError | ServerIdentityError {
    const byCaller = err.code === grpc.status.CANCELLED && signal?.aborted === true;
    return this.refusals.runRefusal() ?? grpcToolError(this.endpoint, path, node, err, byCaller);
  }
}

/**
 * grpc-js's ends of a call whose connection went away under it: the connection dropped, the server
 * refused the stream, or reset it as cancelled (a server shutting down). Not "Cancelled on client",
 * which is this run cancelling it, nor a deadline.
 */
function droppedUnderCall(err: grpc.ServiceError): boolean {
  const details = String(err.details ?? '');
  if (err.code === grpc.status.UNAVAILABLE) return details === 'Connection dropped' || details === 'Stream refused by server';
  return err.code === grpc.status.CANCELLED && details === 'Call cancelled';
}

/**
 * Cancels `call` when `signal` aborts (at once if it already has); returns the unbinding to run when the
 * call settles, so a long-lived signal (the runner's) collects no listener per call.
 */
function cancelOn(signal: AbortSignal | undefined, call: { cancel(): void }): () => void {
  const cancel = () => call.cancel();
  if (signal?.aborted) cancel();
  else signal?.addEventListener('abort', cancel, { once: true });
  return () => signal?.removeEventListener('abort', cancel);
}
