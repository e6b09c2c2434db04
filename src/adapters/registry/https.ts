// The pre-flight check's HTTP client: undici (the client Node's own fetch is built on) does the
// protocol, the TLS and the proxies; this file adds what a registry check needs around it: a timeout
// per request, the trust (Node's default CAs, NODE_EXTRA_CA_CERTS and `registry-ca-file`, added
// together, never one replacing another), the runner's HTTPS_PROXY / HTTP_PROXY / NO_PROXY through
// undici's EnvHttpProxyAgent, and redirects followed by the rules of redirect.ts, a bounded number of
// times. No secret is ever an argument of a process: the credential goes in a header or the body of
// this process's own request. undici is loaded on the first request, not at the bundle's start.
import { STATUS_CODES } from 'node:http';
import * as tls from 'node:tls';
import type { Dispatcher } from 'undici';
import type { ProxyEnv } from '../../core/proxyEnv.js';
import { redirectStep, type Hop } from './redirect.js';

export interface HttpAnswer {
  status: number;
  statusText: string;
  /** names lower-case */
  headers: Record<string, string | string[] | undefined>;
  /** the body as text, at most MAX_BODY bytes (an error document or a token) */
  body: string;
  /** the URL that answered, after redirects */
  url: string;
}

export interface HttpOptions {
  /** `registry-ca-file`'s PEM bundle, added to the CAs the runner trusts */
  ca?: string;
  /** the text of the file NODE_EXTRA_CA_CERTS names (read by the shell): kept when `ca` is added */
  nodeExtraCa?: string;
  /** the runner's proxies (undefined: none) */
  proxy?: ProxyEnv;
  timeoutMs: number;
  maxRedirects?: number;
}

/** The request could not be sent, got no answer, or was not followed: the network, TLS, the timeout, a refused redirect. */
export class TransportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TransportError';
  }
}

const MAX_BODY = 64 * 1024;
export const REQUEST_TIMEOUT_MS = 15_000;
const USER_AGENT = 'talos-registry-auth-rollout';

/** One client for one host's check: its connections are reused between the requests and closed by `close`. */
export interface HttpClient {
  request(method: string, url: string, headers: Record<string, string>, body?: string): Promise<HttpAnswer>;
  close(): Promise<void>;
}

export function openHttp(opts: HttpOptions): HttpClient {
  let dispatcher: Promise<Dispatcher> | undefined;
  const open = () => (dispatcher ??= makeDispatcher(opts));
  return {
    request: async (method, url, headers, body) => follow(await open(), opts, method, url, headers, body),
    close: async () => {
      if (dispatcher) await (await dispatcher).close();
    },
  };
}

async function makeDispatcher(opts: HttpOptions): Promise<Dispatcher> {
  const { Agent, EnvHttpProxyAgent } = await import('undici');
  const tlsOpts = opts.ca ? { secureContext: secureContextFor(opts.ca, opts.nodeExtraCa) } : {};
  const proxy = opts.proxy;
  if (!proxy || (!proxy.httpProxy && !proxy.httpsProxy)) return new Agent({ connect: tlsOpts });
  // the values as the shell read them ('' for unset), so undici reads no environment of its own;
  // `connect` is the TLS of a direct connection, `requestTls` the registry's TLS inside a CONNECT
  // tunnel; the proxy's own TLS (an https:// proxy) keeps Node's defaults
  return new EnvHttpProxyAgent({ ...proxy, connect: tlsOpts, requestTls: tlsOpts });
}

/**
 * One TLS context per trust, made once: a `ca` list given to each connection is parsed again at each
 * (Node's 140-odd roots, about 100 ms of CPU a connection), a context is not.
 */
const contexts = new Map<string, tls.SecureContext>();
function secureContextFor(registryCa: string, nodeExtraCa: string | undefined): tls.SecureContext {
  const key = `${registryCa}\0${nodeExtraCa ?? ''}`;
  let context = contexts.get(key);
  if (!context) contexts.set(key, (context = tls.createSecureContext({ ca: trustedCas(registryCa, nodeExtraCa) })));
  return context;
}

/**
 * The CAs a registry's certificate is checked against when `registry-ca-file` is given: Node's default
 * set (the bundled roots; on Node >= 22.15 also NODE_EXTRA_CA_CERTS and, with --use-system-ca, the
 * system's), NODE_EXTRA_CA_CERTS (Node 20 has no getCACertificates), then the file. TLS's `ca` replaces
 * Node's default set, so it has to name all of them (a duplicate costs nothing).
 */
export function trustedCas(registryCa: string, nodeExtraCa: string | undefined): string[] {
  const getCACertificates = (tls as { getCACertificates?: (type: 'default') => string[] }).getCACertificates;
  return [...(getCACertificates?.('default') ?? tls.rootCertificates), ...(nodeExtraCa ? [nodeExtraCa] : []), registryCa];
}

async function follow(
  dispatcher: Dispatcher,
  opts: HttpOptions,
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: string,
): Promise<HttpAnswer> {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  let hop: Hop = { method, url: new URL(url), headers: lower, body };
  const max = opts.maxRedirects ?? 5;
  for (let n = 0; ; n++) {
    const answer = await once(dispatcher, opts, hop);
    const location = answer.headers.location;
    const step = redirectStep(hop, answer.status, Array.isArray(location) ? location[0] : location);
    if (step.kind === 'final') return answer;
    if (step.kind === 'refuse') throw new TransportError(`redirect not followed: ${step.reason}`);
    if (n >= max) throw new TransportError(`more than ${max} redirects (last to ${step.next.url.toString()})`);
    hop = step.next;
  }
}

async function once(dispatcher: Dispatcher, opts: HttpOptions, hop: Hop): Promise<HttpAnswer> {
  const signal = AbortSignal.timeout(opts.timeoutMs);
  try {
    const res = await dispatcher.request({
      origin: hop.url.origin,
      path: `${hop.url.pathname}${hop.url.search}`,
      method: hop.method,
      headers: { 'user-agent': USER_AGENT, ...hop.headers },
      body: hop.body,
      signal,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      // enough of an error document or a token: the rest is not read (leaving the loop ends the body)
      if (size >= MAX_BODY) break;
    }
    return {
      status: res.statusCode,
      statusText: STATUS_CODES[res.statusCode] ?? '',
      headers: res.headers,
      body: Buffer.concat(chunks).toString('utf8').slice(0, MAX_BODY),
      url: hop.url.toString(),
    };
  } catch (e) {
    if (signal.aborted) throw new TransportError(`no answer within ${Math.round(opts.timeoutMs / 1000)} s`);
    throw new TransportError(describe(e as NodeJS.ErrnoException));
  }
}

/** A socket, TLS or proxy error in the words a user can act on. */
function describe(e: NodeJS.ErrnoException): string {
  // undici may wrap the socket's error in its own (`fetch failed`-like); the socket's says more
  const inner = (e.cause as NodeJS.ErrnoException | undefined) ?? e;
  const code = inner.code ? ` (${inner.code})` : '';
  if (inner.code && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(inner.code)) {
    return `TLS: ${inner.message}${code}: the registry's certificate is not trusted (a private CA: give its PEM with registry-ca-file)`;
  }
  if (/^Proxy response \(\d+\)/.test(inner.message)) return `the proxy refused the tunnel: ${inner.message}`;
  return `${inner.message}${code}`;
}
