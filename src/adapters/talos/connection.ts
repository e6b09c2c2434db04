// One gRPC channel to the talosconfig context's endpoint (apid), over mutual TLS, shared by every
// call of the run: grpc-js multiplexes the calls as streams of one HTTP/2 connection. Each call
// names exactly one target node with the `node` metadata key (apid's one-to-one routing; the
// deprecated `nodes` key is refused by the COSI State API) and carries its own deadline.
// Failures become ToolError with the cause classified from the gRPC status, as talosctl's
// printed `rpc error: code = … desc = …` is classified on the CLI path.
import { isIP } from 'node:net';
import { type PeerCertificate, checkServerIdentity } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { ToolError } from '../../errors.js';
import { classifyTalosError } from '../parse/talosErrors.js';
import { RPC, encodePlain, messageType, toPlain, type RpcName } from './proto.js';
import { splitEndpoint, type TalosCredentials } from './talosconfig.js';

export interface TalosConnectionOptions {
  /** `host[:port]` from the talosconfig (port 50000 when absent) */
  endpoint: string;
  credentials: TalosCredentials;
  /**
   * When set, the server certificate must also be valid for this name. Unset, the identity is the
   * cluster CA's server certificate (see docs/talos-api.md, "Server identity").
   */
  serverName?: string;
  /** per-call deadline; default 30 s */
  callTimeoutMs?: number;
  /** calls in flight at once on the connection; default 32 */
  maxInFlight?: number;
  /**
   * Applied to every text a node sends back in an error before it enters a ToolError: the runner's
   * redactor, so an API failure echoing a credential is masked as talosctl's stderr is (src/adapters/exec.ts).
   * Called when the error happens, so secrets registered after the connection opened count.
   */
  redact?: (text: string) => string;
}

type Plain = Record<string, unknown>;

/** grpc-go's names for the status codes, as apid's errors print them. */
const CODE_NAMES = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
];

const SERVER_AUTH_OID = '1.3.6.1.5.5.7.3.1';

export class TalosConnection {
  readonly endpoint: string;
  private readonly client: grpc.Client;
  private readonly callTimeoutMs: number;
  private readonly maxInFlight: number;
  private inFlight = 0;
  private readonly queue: Array<() => void> = [];
  /** see TalosConnectionOptions.redact */
  readonly redact: (text: string) => string;

  constructor(opts: TalosConnectionOptions) {
    const { host, port } = splitEndpoint(opts.endpoint);
    this.endpoint = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    this.callTimeoutMs = opts.callTimeoutMs ?? 30_000;
    this.maxInFlight = Math.max(1, opts.maxInFlight ?? 32);
    this.redact = opts.redact ?? ((t) => t);
    const c = opts.credentials;
    const creds = grpc.credentials.createSsl(Buffer.from(c.ca), Buffer.from(c.key), Buffer.from(c.crt), {
      // The chain is verified against the talosconfig CA by TLS itself; this is the identity check.
      checkServerIdentity: (_host: string, cert: PeerCertificate) => serverIdentity(cert, opts.serverName),
    });
    // The expected name is set explicitly (SNI and :authority) rather than left to the dialed
    // address, which need not be among the certificate's SANs (a load balancer, a tunnel). An IP
    // address is no TLS server name (RFC 6066, and Node warns with DEP0123 when one is sent), so a
    // dialed IP sends a fixed placeholder name: apid serves one certificate whatever the SNI, and the
    // identity check above never reads it (only an explicit `serverName` is matched).
    const name = opts.serverName ?? (isIP(host) ? IP_ENDPOINT_SERVER_NAME : host);
    this.client = new grpc.Client(this.endpoint, creds, {
      'grpc.ssl_target_name_override': name,
      'grpc.default_authority': name,
      // our own channel: no subchannel shared with another client in the process
      'grpc.use_local_subchannel_pool': 1,
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
  async unary(rpc: RpcName, node: string, request: Plain = {}): Promise<Plain> {
    const m = RPC[rpc];
    const reqType = messageType(m.req);
    const resType = messageType(m.res);
    return this.limited(
      () =>
        new Promise<Plain>((resolve, reject) => {
          this.client.makeUnaryRequest<Plain, Plain>(
            m.path,
            (v) => encodePlain(reqType, v),
            (b) => toPlain(resType, b),
            request,
            this.metadata(node),
            { deadline: Date.now() + this.callTimeoutMs },
            (err, value) => (err ? reject(this.toolError(m.path, node, err)) : resolve(value ?? {})),
          );
        }),
    );
  }

  /** A server-streaming call to one node, collected whole (List of one path, Read of one file). */
  async stream(rpc: RpcName, node: string, request: Plain): Promise<Plain[]> {
    const m = RPC[rpc];
    const reqType = messageType(m.req);
    const resType = messageType(m.res);
    return this.limited(
      () =>
        new Promise<Plain[]>((resolve, reject) => {
          const out: Plain[] = [];
          const call = this.client.makeServerStreamRequest<Plain, Plain>(
            m.path,
            (v) => encodePlain(reqType, v),
            (b) => toPlain(resType, b),
            request,
            this.metadata(node),
            { deadline: Date.now() + this.callTimeoutMs },
          );
          call.on('data', (d: Plain) => out.push(d));
          call.on('error', (err: grpc.ServiceError) => reject(this.toolError(m.path, node, err)));
          call.on('status', (s: grpc.StatusObject) => {
            if (s.code === grpc.status.OK) resolve(out);
          });
        }),
    );
  }

  private metadata(node: string): grpc.Metadata {
    const md = new grpc.Metadata();
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

  private toolError(path: string, node: string, err: grpc.ServiceError): ToolError {
    const code = CODE_NAMES[err.code] ?? String(err.code);
    const text = `rpc error: code = ${code} desc = ${this.redact(String(err.details ?? ''))}`;
    const kind = classifyTalosError(text);
    return new ToolError({
      tool: 'talos-api',
      command: `${path} (node ${node} via ${this.endpoint})`,
      kind,
      exitCode: null,
      stderr: text,
      node,
      message: `${path} for ${node} via ${this.endpoint} failed (${kind}: ${text})`,
    });
  }
}

/** The gRPC status code name of a ToolError from this module (undefined for others). */
export function grpcCodeOf(e: ToolError): string | undefined {
  return /^rpc error: code = (\w+) desc = /.exec(e.stderr)?.[1];
}

/** The status description of a ToolError from this module. */
export function grpcDetailsOf(e: ToolError): string {
  return e.stderr.replace(/^rpc error: code = \w+ desc = /, '');
}

/** The TLS server name sent when the endpoint is an IP address (see the constructor). */
const IP_ENDPOINT_SERVER_NAME = 'talos-apid';

function serverIdentity(cert: PeerCertificate, serverName: string | undefined): Error | undefined {
  // apid's server certificate carries ExtKeyUsage ServerAuth only; the CA's client certificates
  // (talosconfig users, apid's own client side) carry ClientAuth only, so a client key of the same
  // CA cannot stand in for a server.
  const eku = (cert as PeerCertificate & { ext_key_usage?: string[] }).ext_key_usage ?? [];
  if (!eku.includes(SERVER_AUTH_OID)) {
    return new Error(
      `the server certificate (${String(cert.subject?.CN ?? 'no CN')}) is not a TLS server certificate (no ExtKeyUsage serverAuth)`,
    );
  }
  return serverName === undefined ? undefined : checkServerIdentity(serverName, cert);
}
