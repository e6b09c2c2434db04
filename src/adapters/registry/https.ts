// The pre-flight check's HTTP client: undici (the client Node's own fetch is built on) does the
// protocol, the TLS and the proxies; this file adds what a registry check needs around it: a timeout
// per request, the trust (Node's default CAs, NODE_EXTRA_CA_CERTS and `registry-ca-file`, added
// together, never one replacing another), the runner's HTTPS_PROXY / HTTP_PROXY / NO_PROXY (the proxy of
// each request chosen by core/proxyEnv.ts `proxyFor`, as undici's EnvHttpProxyAgent chooses, and reached
// with undici's ProxyAgent), redirects followed by the rules of redirect.ts, a bounded number of times,
// and the credential rule (core/credentialRoute.ts) asked before every request that carries a
// credential: to the registry, its token realm, a redirect's target, through a proxy. A refusal is a
// CredentialWithheld and nothing is sent. No secret is ever an argument of a process: the credential
// goes in a header or the body of this process's own request. undici is loaded on the first request,
// not at the bundle's start.
import { STATUS_CODES } from 'node:http';
import * as tls from 'node:tls';
import type { Dispatcher } from 'undici';
import { credentialRoute, type CredentialLeg, type CredentialScope } from '../../core/credentialRoute.js';
import { proxyFor, type ProxyEnv } from '../../core/proxyEnv.js';
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
  /**
   * false: a body is no credential (the Alertmanager's silence): only an Authorization header is, and
   * only it is judged by the credential rule; default: a body is one (the refresh-token form)
   */
  bodyIsCredential?: false;
  /** the input a user names a private CA with, for the untrusted-certificate message; default `registry-ca-file` */
  caInput?: string;
}

/** The request could not be sent, got no answer, or was not followed: the network, TLS, the timeout, a refused redirect. */
export class TransportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TransportError';
  }
}

/**
 * A request not sent: it would have carried the credential where the credential rule
 * (core/credentialRoute.ts) does not let it go. `reason` names the URL, `fix` what to change; no secret.
 */
export class CredentialWithheld extends Error {
  constructor(
    readonly reason: string,
    readonly fix: string,
  ) {
    super(`not sent: ${reason}`);
    this.name = 'CredentialWithheld';
  }
}

const MAX_BODY = 64 * 1024;
export const REQUEST_TIMEOUT_MS = 15_000;
const USER_AGENT = 'talos-registry-auth-rollout';

/** One client for one host's check: its connections are reused between the requests and closed by `close`. */
export interface HttpClient {
  /**
   * `credential`: where a request carrying one (an Authorization header or a body) goes, judged by the
   * credential rule before it is sent; a request that carries one without saying where is refused.
   */
  request(method: string, url: string, headers: Record<string, string>, body?: string, credential?: CredentialLeg): Promise<HttpAnswer>;
  close(): Promise<void>;
}

/** `scope`: the registry this client's check is for (the credential rule's one fixed point). */
export function openHttp(opts: HttpOptions, scope: CredentialScope): HttpClient {
  let dispatchers: Promise<Dispatchers> | undefined;
  const open = () => (dispatchers ??= makeDispatchers(opts));
  return {
    request: async (method, url, headers, body, credential) => follow(await open(), opts, scope, method, url, headers, body, credential),
    close: async () => {
      if (dispatchers) await (await dispatchers).close();
    },
  };
}

/** The direct connection, and one undici ProxyAgent per proxy a request was routed through. */
interface Dispatchers {
  via(proxy: string | undefined): Dispatcher;
  close(): Promise<void>;
}

async function makeDispatchers(opts: HttpOptions): Promise<Dispatchers> {
  const { Agent, ProxyAgent } = await import('undici');
  const tlsOpts = opts.ca ? { secureContext: secureContextFor(opts.ca, opts.nodeExtraCa) } : {};
  const direct = new Agent({ connect: tlsOpts });
  const proxies = new Map<string, Dispatcher>();
  return {
    // `connect` is the TLS of a direct connection, `requestTls` the registry's TLS inside a CONNECT or
    // SOCKS tunnel; the proxy's own TLS (an https:// proxy) keeps Node's defaults. undici reads no
    // environment of its own here: the proxy is the one proxyFor chose from what the shell read.
    via: (proxy) => {
      if (!proxy) return direct;
      let agent = proxies.get(proxy);
      if (!agent) proxies.set(proxy, (agent = new ProxyAgent({ uri: proxy, connect: tlsOpts, requestTls: tlsOpts })));
      return agent;
    },
    close: async () => {
      await Promise.all([direct.close(), ...[...proxies.values()].map((p) => p.close())]);
    },
  };
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
  dispatchers: Dispatchers,
  opts: HttpOptions,
  scope: CredentialScope,
  method: string,
  url: string,
  headers: Record<string, string>,
  body: string | undefined,
  credential: CredentialLeg | undefined,
): Promise<HttpAnswer> {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  let hop: Hop = { method, url: new URL(url), headers: lower, body };
  let leg = credential;
  const max = opts.maxRedirects ?? 5;
  for (let n = 0; ; n++) {
    const proxy = proxyFor(hop.url, opts.proxy);
    if ('authorization' in hop.headers || (hop.body !== undefined && opts.bodyIsCredential !== false)) {
      if (!leg) throw new Error(`a request carrying a credential to ${hop.url.origin} must say where it goes (a bug)`);
      const verdict = credentialRoute(hop.url, leg, scope, proxy ? new URL(proxy) : undefined);
      if (!verdict.ok) throw new CredentialWithheld(verdict.reason, verdict.fix);
    }
    const answer = await once(dispatchers.via(proxy), opts, hop);
    const location = answer.headers.location;
    const step = redirectStep(hop, answer.status, Array.isArray(location) ? location[0] : location, scope);
    if (step.kind === 'final') return answer;
    if (step.kind === 'withhold') throw new CredentialWithheld(step.reason, step.fix);
    if (step.kind === 'refuse') throw new TransportError(`redirect not followed: ${step.reason}`);
    if (n >= max) throw new TransportError(`more than ${max} redirects (last to ${step.next.url.toString()})`);
    leg = { to: 'redirect', from: hop.url.origin, status: answer.status };
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
    throw new TransportError(describe(e as NodeJS.ErrnoException, opts.caInput ?? 'registry-ca-file'));
  }
}

/** A socket, TLS or proxy error in the words a user can act on. */
function describe(e: NodeJS.ErrnoException, caInput: string): string {
  // undici may wrap the socket's error in its own (`fetch failed`-like); the socket's says more
  const inner = (e.cause as NodeJS.ErrnoException | undefined) ?? e;
  const code = inner.code ? ` (${inner.code})` : '';
  if (inner.code && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(inner.code)) {
    return `TLS: ${inner.message}${code}: the server's certificate is not trusted (a private CA: give its PEM with ${caInput})`;
  }
  if (/^Proxy response \(\d+\)/.test(inner.message)) return `the proxy refused the tunnel: ${inner.message}`;
  return `${inner.message}${code}`;
}
