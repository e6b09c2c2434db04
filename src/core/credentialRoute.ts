// Where the pre-flight check may send the new credential (docs/preflight.md "Where the credential may
// go"): the one rule every request carrying it passes, whatever sends it there: the registry itself, the
// token realm its challenge names, a redirect's target, a proxy. Pure: URLs in, a verdict out. The
// registry adapter's HTTP client asks it before each request that carries a credential (an
// Authorization header or the refresh-token body: src/adapters/registry/https.ts), the redirect rule
// for each redirect (src/adapters/registry/redirect.ts); nothing is sent when it says no.
//
// 1. Never over plain http, but to the registry's own origin when the user configured the registry as
//    plain http (`registry-plain-http`): the credential then travels as the nodes send it, by the
//    user's own choice. A token realm, a redirect or another host in plain http is refused, also for
//    such a registry.
// 2. Only to the registry's origin, but for the token realm the registry's own challenge names:
//    Docker's token flow sends the credential there, usually another host (auth.docker.io for
//    registry-1.docker.io), and containerd does (core/remotes/docker/authorizer.go `AddResponses`: the
//    credential of the host whose 401 it is, `auth.GenerateTokenOptions` takes the challenge's realm as
//    it is; auth/fetch.go `FetchToken` sets it as Basic auth on the GET to that realm,
//    `FetchTokenWithOAuth` posts it as `refresh_token`). A challenge that came from another origin (a
//    /v2/ redirected elsewhere) is not the registry's: its realm gets nothing. A redirect keeps the
//    credential only on the origin it was sent to (the redirect rule drops it, or refuses a body).
// 3. Through a proxy only inside TLS: to an https URL through any proxy (an http:// proxy's CONNECT
//    tunnel or a SOCKS one carries the TLS between the runner and the registry, end to end: undici's
//    ProxyAgent); to a plain-http URL never through one (the proxy reads the request as it is).

export type CredentialLeg =
  /** Basic auth at /v2/, a manifest HEAD with Basic auth or the token */
  | { to: 'registry' }
  /** the token endpoint a Bearer challenge names; `challengeFrom`: the origin that answered that 401 */
  | { to: 'realm'; challengeFrom: string }
  /** a redirect of a request that carried the credential, from the origin it was sent to */
  | { to: 'redirect'; from: string; status: number };

export interface CredentialScope {
  /** the registry's origin as the check dials it: `https://host[:port]`, `http://` only for a `registry-plain-http` host */
  registry: string;
}

/** Why a credential may not go there: the URL is no http(s), it is plain http, another origin, or behind a proxy that would read it. */
export type WithheldWhy = 'not-http' | 'clear-text' | 'other-origin' | 'proxy';

export type CredentialVerdict = { ok: true } | { ok: false; why: WithheldWhy; reason: string; fix: string };

/** The URL as a message names it: origin and path, never a query or user info. */
export function urlLabel(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/**
 * May a request carrying the credential go to `url`, for `leg`, through `proxy` (undefined: direct)?
 * The refusal names the URL and the fix, never a secret (a proxy is named without its user info).
 */
export function credentialRoute(url: URL, leg: CredentialLeg, scope: CredentialScope, proxy?: URL): CredentialVerdict {
  const where = describe(url, leg);
  const no = (why: WithheldWhy, reason: string, fix: string): CredentialVerdict => ({ ok: false, why, reason, fix });
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return no('not-http', `${where} is not http or https`, fixFor(leg, 'not-http'));
  }
  if (url.protocol === 'http:' && !(url.origin === scope.registry && scope.registry.startsWith('http:'))) {
    return no('clear-text', `${where} is plain http: the credential would travel in clear text`, fixFor(leg, 'clear-text'));
  }
  if (leg.to === 'realm' && leg.challengeFrom !== scope.registry) {
    return no(
      'other-origin',
      `the challenge naming ${where} came from ${leg.challengeFrom}, not from the registry ${scope.registry}`,
      fixFor(leg, 'other-origin'),
    );
  }
  const origin = leg.to === 'registry' ? scope.registry : leg.to === 'redirect' ? leg.from : undefined;
  if (origin !== undefined && url.origin !== origin) {
    return no(
      'other-origin',
      `${where} is another origin than ${origin}: the credential stays with its origin`,
      fixFor(leg, 'other-origin'),
    );
  }
  if (proxy && url.protocol === 'http:') {
    return no(
      'proxy',
      `${where} is plain http and would go through the proxy ${proxy.protocol}//${proxy.host}, which reads such a request as it is`,
      `name ${url.host} in NO_PROXY: a plain-http registry is asked directly or not at all`,
    );
  }
  return { ok: true };
}

function describe(url: URL, leg: CredentialLeg): string {
  switch (leg.to) {
    case 'registry':
      return `the registry ${urlLabel(url)}`;
    case 'realm':
      return `the token realm ${urlLabel(url)}`;
    case 'redirect':
      return `the ${leg.status} redirect from ${leg.from} to ${urlLabel(url)}`;
  }
}

function fixFor(leg: CredentialLeg, why: Exclude<WithheldWhy, 'proxy'>): string {
  if (leg.to === 'realm' && why !== 'other-origin') {
    // the common case: a TLS-terminating proxy in front of the registry, the registry building its
    // realm from the plain-http request it sees
    return (
      "the registry's 401 challenge must name an https:// token realm: behind a TLS-terminating proxy, have the proxy send " +
      "X-Forwarded-Proto: https (or set the registry's token realm to its https:// URL). The nodes' containerd sends the " +
      'credential to the realm the challenge names, this one included, so preflight: false would hide this, not stop it'
    );
  }
  if (leg.to === 'realm') {
    return "containerd sends a host's credential only to the realm of that host's own challenge: name in the auth patch the host whose /v2/ answers the 401 itself";
  }
  if (leg.to === 'redirect') {
    return 'the registry (or its token service) must not redirect a request carrying a credential to plain http or another scheme';
  }
  return why === 'clear-text'
    ? 'a registry that serves only plain http is named in registry-plain-http; any other is asked over https'
    : 'the credential goes only to the registry it is for';
}
