// Whether and how the pre-flight's HTTP client follows a redirect: the one place the rules live, pure
// (docs/preflight.md, "Redirects"). undici's request follows none by itself; https.ts asks this at each
// 3xx. The rules are the Fetch standard's (§4.4 "HTTP-redirect fetch") and Go's net/http client's
// (client.go `redirectBehavior`, `shouldCopyHeaderOnRedirect`), where the stricter of the two wins:
// - 301/302 of a POST and 303 of anything but GET/HEAD become a GET without a body (and without the
//   body's headers); 307/308 keep the method and the body.
// - The credential stays with its origin: on any change of scheme, host or port the Authorization
//   header is dropped (Fetch drops it on a cross-origin redirect; Go keeps it for a subdomain, which
//   is not followed here).
// - A body is a credential: the one this check sends is the OAuth2 form carrying the refresh token. So
//   a 307/308 that would re-send it to another origin is refused, not followed without it.
// - `https` → `http` is refused while a credential is attached (an Authorization header or a body):
//   following it, even without the credential, would ask for the credential's answer in clear text.

/** One request as the client is about to send it. */
export interface Hop {
  method: string;
  url: URL;
  /** header names lower-case */
  headers: Record<string, string>;
  body?: string;
}

export type RedirectStep =
  /** not a redirect (or one without a Location): the answer is the answer */
  | { kind: 'final' }
  | { kind: 'follow'; next: Hop }
  /** not followed, and why (no secret: it names URLs, never headers or the body) */
  | { kind: 'refuse'; reason: string };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Fetch's "request-body-header names": they describe a body that a GET no longer has. */
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];

export function redirectStep(hop: Hop, status: number, location: string | undefined): RedirectStep {
  if (!REDIRECTS.has(status) || !location) return { kind: 'final' };
  let url: URL;
  try {
    url = new URL(location, hop.url);
  } catch {
    return { kind: 'refuse', reason: `${status} to an invalid Location` };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { kind: 'refuse', reason: `${status} to ${url.protocol} (not HTTP)` };
  const credential = 'authorization' in hop.headers || hop.body !== undefined;
  const to = `${status} from ${hop.url.origin} to ${url.origin}`;
  if (credential && hop.url.protocol === 'https:' && url.protocol === 'http:') {
    return { kind: 'refuse', reason: `${to}: a credential is never sent after a redirect from https to http` };
  }
  const toGet =
    ((status === 301 || status === 302) && hop.method === 'POST') || (status === 303 && hop.method !== 'GET' && hop.method !== 'HEAD');
  const crossOrigin = url.origin !== hop.url.origin;
  if (!toGet && hop.body !== undefined && crossOrigin) {
    return { kind: 'refuse', reason: `${to}: the request's body carries a credential and would be sent to another origin` };
  }
  const headers = { ...hop.headers };
  if (crossOrigin) delete headers.authorization;
  if (toGet) for (const h of BODY_HEADERS) delete headers[h];
  return { kind: 'follow', next: { method: toGet ? 'GET' : hop.method, url, headers, body: toGet ? undefined : hop.body } };
}
