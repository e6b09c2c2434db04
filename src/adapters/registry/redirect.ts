// Whether and how the pre-flight's HTTP client follows a redirect: the one place the rules live, pure
// (docs/preflight.md, "Redirects"). undici's request follows none by itself; https.ts asks this at each
// 3xx. The rules are the Fetch standard's (§4.4 "HTTP-redirect fetch") and Go's net/http client's
// (client.go `redirectBehavior`, `shouldCopyHeaderOnRedirect`), where the stricter of the two wins:
// - 301/302 of a POST and 303 of anything but GET/HEAD become a GET without a body (and without the
//   body's headers); 307/308 keep the method and the body.
// - Where a request carrying a credential (an Authorization header or a body) may be redirected is the
//   credential rule's (core/credentialRoute.ts), the one every credential-bearing request passes:
//   - to plain http (but the origin of a `registry-plain-http` registry) or another scheme: withheld,
//     not followed even without the credential, since following would ask for the credential's
//     answer in clear text;
//   - to another origin (scheme, host or port): the Authorization header is dropped (Fetch drops it on
//     a cross-origin redirect; Go keeps it for a subdomain, which is not followed here), and a 307/308
//     that would re-send the body (the refresh-token form, a credential) is withheld.
import { credentialRoute, type CredentialScope } from '../../core/credentialRoute.js';

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
  | { kind: 'refuse'; reason: string }
  /** not followed: the credential rule does not let the credential go there (its reason and fix) */
  | { kind: 'withhold'; reason: string; fix: string };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Fetch's "request-body-header names": they describe a body that a GET no longer has. */
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];

export function redirectStep(hop: Hop, status: number, location: string | undefined, scope: CredentialScope): RedirectStep {
  if (!REDIRECTS.has(status) || !location) return { kind: 'final' };
  let url: URL;
  try {
    url = new URL(location, hop.url);
  } catch {
    return { kind: 'refuse', reason: `${status} to an invalid Location` };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { kind: 'refuse', reason: `${status} to ${url.protocol} (not HTTP)` };
  const credential = 'authorization' in hop.headers || hop.body !== undefined;
  const toGet =
    ((status === 301 || status === 302) && hop.method === 'POST') || (status === 303 && hop.method !== 'GET' && hop.method !== 'HEAD');
  const verdict = credential ? credentialRoute(url, { to: 'redirect', from: hop.url.origin, status }, scope) : { ok: true as const };
  if (!verdict.ok && verdict.why !== 'other-origin') return { kind: 'withhold', reason: verdict.reason, fix: verdict.fix };
  const crossOrigin = !verdict.ok;
  if (!toGet && hop.body !== undefined && crossOrigin) {
    return {
      kind: 'withhold',
      reason: `${status} from ${hop.url.origin} to ${url.origin}: the request's body carries a credential and would be sent to another origin`,
      fix: verdict.fix,
    };
  }
  const headers = { ...hop.headers };
  if (crossOrigin) delete headers.authorization;
  if (toGet) for (const h of BODY_HEADERS) delete headers[h];
  return { kind: 'follow', next: { method: toGet ? 'GET' : hop.method, url, headers, body: toGet ? undefined : hop.body } };
}
