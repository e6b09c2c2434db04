// One HTTP request to a registry or its token endpoint, with node:https: a timeout per request, the
// CA bundle of `registry-ca-file` added to Node's default CAs, redirects followed a bounded number of
// times (a manifest or a token endpoint may redirect). No secret is ever an argument of a process:
// the credential goes in a header of this process's own request.
import http from 'node:http';
import https from 'node:https';
import { rootCertificates } from 'node:tls';

export interface HttpAnswer {
  status: number;
  statusText: string;
  headers: http.IncomingHttpHeaders;
  /** the body as text, at most MAX_BODY bytes (an error document or a token) */
  body: string;
  /** the URL that answered, after redirects */
  url: string;
}

export interface HttpOptions {
  /** PEM bundle added to Node's default CAs */
  ca?: string;
  timeoutMs: number;
  maxRedirects?: number;
}

/** The request could not be sent or got no answer: the network, TLS, the timeout. */
export class TransportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TransportError';
  }
}

const MAX_BODY = 64 * 1024;
export const REQUEST_TIMEOUT_MS = 15_000;

export async function request(
  method: string,
  url: string,
  headers: Record<string, string>,
  opts: HttpOptions,
  body?: string,
): Promise<HttpAnswer> {
  let current = new URL(url);
  let hdrs = { ...headers };
  for (let hop = 0; ; hop++) {
    const answer = await once(method, current, hdrs, opts, body);
    const location = answer.headers.location;
    if (![301, 302, 303, 307, 308].includes(answer.status) || !location) return answer;
    if (hop >= (opts.maxRedirects ?? 5)) throw new TransportError(`more than ${opts.maxRedirects ?? 5} redirects (last to ${location})`);
    const next = new URL(location, current);
    // as Go's HTTP client does: the credential stays with the host it was meant for
    if (next.host !== current.host) hdrs = Object.fromEntries(Object.entries(hdrs).filter(([k]) => k.toLowerCase() !== 'authorization'));
    if (answer.status === 303) {
      method = method === 'HEAD' ? 'HEAD' : 'GET';
      body = undefined;
    }
    current = next;
  }
}

function once(method: string, url: URL, headers: Record<string, string>, opts: HttpOptions, body?: string): Promise<HttpAnswer> {
  const mod = url.protocol === 'http:' ? http : https;
  return new Promise((resolve, reject) => {
    const req = mod.request(url, {
      method,
      headers: { 'user-agent': 'talos-registry-auth-rollout', ...headers, ...(body ? { 'content-length': Buffer.byteLength(body) } : {}) },
      ...(url.protocol === 'https:' && opts.ca ? { ca: [...rootCertificates, opts.ca] } : {}),
      agent: false,
    });
    req.setTimeout(opts.timeoutMs, () => req.destroy(new TransportError(`no answer within ${Math.round(opts.timeoutMs / 1000)} s`)));
    req.on('error', (e: NodeJS.ErrnoException) => reject(e instanceof TransportError ? e : new TransportError(describe(e))));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size < MAX_BODY) chunks.push(c);
        size += c.length;
      });
      res.on('error', (e: NodeJS.ErrnoException) => reject(new TransportError(describe(e))));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          statusText: res.statusMessage ?? '',
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8').slice(0, MAX_BODY),
          url: url.toString(),
        }),
      );
    });
    req.end(body);
  });
}

/** A socket or TLS error in the words a user can act on. */
function describe(e: NodeJS.ErrnoException): string {
  const code = e.code ? ` (${e.code})` : '';
  if (e.code && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(e.code)) {
    return `TLS: ${e.message}${code}: the registry's certificate is not trusted (a private CA: give its PEM with registry-ca-file)`;
  }
  return `${e.message}${code}`;
}
