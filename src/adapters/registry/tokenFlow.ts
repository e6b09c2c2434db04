// The registry's own token flow, as a client pulling an image runs it (docs/preflight.md): GET
// /v2/ → its WWW-Authenticate challenge → the token endpoint with the credential and a pull scope
// (Basic auth on a GET, or for an identity token the OAuth2 refresh-token POST) → HEAD of the
// manifest with the token. Without an image, the login alone: the token endpoint without a scope, as
// `docker login` asks it. The credential is read as containerd's CRI reads it (ParseAuth: a username
// first, else the identity token, else `auth`), and an identity token's POST falls back to the GET as
// containerd's does (docs/preflight.md). It records each exchange and stops at the first that is not a
// yes; which answer means what is the rule's (src/rules/preflight.ts). The credential goes only into
// request headers or the POST body, never into what is recorded, and each request carrying it says
// where it goes (the registry, or the realm its own challenge named): the HTTP client asks the
// credential rule (core/credentialRoute.ts) before sending it, and a request it refuses is recorded as
// withheld, not sent.
import type { AuthFields } from '../../core/model/credential.js';
import type { RegistryCheck, RegistryExchange, RegistryStep } from '../../core/model/preflight.js';
import { refLabel, type ImageRef } from '../../core/imageRef.js';
import { usableChallenge } from './challenge.js';
import type { CredentialLeg } from '../../core/credentialRoute.js';
import { CredentialWithheld, openHttp, TransportError, type HttpAnswer, type HttpClient, type HttpOptions } from './https.js';

/** Accept of a pull (containerd's remotes/docker resolver sends these): an index or a manifest, OCI or Docker. */
export const MANIFEST_ACCEPT = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ');

// docker/distribution docs/spec/auth/oauth.md: client_id is required on the refresh-token grant
const CLIENT_ID = 'talos-registry-auth-rollout';

export interface CheckTarget {
  host: string;
  apiHost: string;
  credential: AuthFields;
  image?: ImageRef;
  /** the user named the host in `registry-plain-http`: asked over http, and only there may the credential go in clear text */
  plainHttp?: boolean;
}

/** The registry's origin as the check dials it. */
function baseOf(target: CheckTarget): string {
  return `${target.plainHttp ? 'http' : 'https'}://${target.apiHost}`;
}

export async function checkRegistry(target: CheckTarget, opts: HttpOptions): Promise<RegistryCheck> {
  const http = openHttp(opts, { registry: new URL(baseOf(target)).origin });
  try {
    return await checkWith(target, http);
  } finally {
    await http.close();
  }
}

async function checkWith(target: CheckTarget, http: HttpClient): Promise<RegistryCheck> {
  const exchanges: RegistryExchange[] = [];
  const done = (auth: RegistryCheck['auth']): RegistryCheck => ({
    host: target.host,
    image: target.image && refLabel(target.image),
    auth,
    exchanges,
  });
  const ask = async (step: RegistryStep, asked: string, go: () => Promise<HttpAnswer>): Promise<HttpAnswer | undefined> => {
    try {
      const a = await go();
      // a token endpoint's yes must carry a token: a 200 without one is no usable answer
      const tokenless = step === 'token' && a.status === 200 && !tokenOf(a.body);
      exchanges.push({
        step,
        asked,
        status: a.status,
        statusText: a.statusText,
        registryError: tokenless ? 'no token or access_token in the answer' : registryError(a.body),
        ...(tokenless ? { unusable: true } : {}),
      });
      return a;
    } catch (e) {
      if (e instanceof CredentialWithheld) exchanges.push({ step, asked, withheld: { reason: e.reason, fix: e.fix } });
      else exchanges.push({ step, asked, failure: e instanceof TransportError ? e.message : String(e) });
      return undefined;
    }
  };
  const base = baseOf(target);
  const ping = await ask('ping', `GET ${base}/v2/`, () => http.request('GET', `${base}/v2/`, {}));
  if (!ping) return done('unknown');
  const basic = basicOf(target.credential);
  if (ping.status === 200) {
    // the registry asks for no credential: the HEAD carries Basic auth, which a registry may still check
    if (target.image) await head(target, basic && `Basic ${basic}`, 'with basic auth', ask, http);
    return done('none');
  }
  if (ping.status !== 401) return done('unknown');
  const challenge = usableChallenge(header(ping, 'www-authenticate'));
  if (!challenge) {
    exchanges[exchanges.length - 1].registryError =
      `a challenge this check cannot answer: ${header(ping, 'www-authenticate') ?? 'no WWW-Authenticate'}`;
    return done('unknown');
  }
  if (challenge.scheme === 'basic') {
    if (!basic) {
      exchanges.push({
        step: 'login',
        asked: `basic auth at ${base}/v2/`,
        failure: 'the credential has no username/password or auth for basic auth',
      });
      return done('basic');
    }
    if (target.image) await head(target, `Basic ${basic}`, 'with basic auth', ask, http);
    else
      await ask('login', `GET ${base}/v2/ with basic auth`, () =>
        http.request('GET', `${base}/v2/`, { authorization: `Basic ${basic}` }, undefined, TO_REGISTRY),
      );
    return done('basic');
  }
  // the realm the registry's own challenge named: the one place other than the registry the credential may go
  const realm: CredentialLeg = { to: 'realm', challengeFrom: new URL(ping.url).origin };
  const token = await bearerToken(target, challenge.params, realm, ask, http);
  if (token && target.image) await head(target, `Bearer ${token}`, 'with the token', ask, http);
  return done('bearer');
}

type Ask = (step: RegistryStep, asked: string, go: () => Promise<HttpAnswer>) => Promise<HttpAnswer | undefined>;

const TO_REGISTRY: CredentialLeg = { to: 'registry' };

async function head(target: CheckTarget, authorization: string | undefined, how: string, ask: Ask, http: HttpClient): Promise<void> {
  const image = target.image!;
  const url = `${baseOf(target)}/v2/${image.repository}/manifests/${image.reference}`;
  const headers: Record<string, string> = { accept: MANIFEST_ACCEPT, ...(authorization ? { authorization } : {}) };
  await ask('manifest', `HEAD ${url} (${refLabel(image)}) ${how}`, () => http.request('HEAD', url, headers, undefined, TO_REGISTRY));
}

/**
 * containerd falls back from an identity token's OAuth2 POST to the GET token flow when the POST is
 * answered one of these (core/remotes/docker/authorizer.go `doBearerAuth`: "Registries without support
 * for POST may return 404 … GCR … 404 … JFrog Artifactory … 401 … ACR … 400"). 405 falls back there
 * only with a username, which an identity token has none of, so a 405 ends the check as it ends the
 * node's pull.
 */
export const POST_FALLBACK_STATUSES: readonly number[] = [400, 401, 404];

/** The token endpoint's answer, or undefined when it said no (recorded). */
async function bearerToken(
  target: CheckTarget,
  params: Record<string, string>,
  realm: CredentialLeg,
  ask: Ask,
  http: HttpClient,
): Promise<string | undefined> {
  const scope = target.image ? `repository:${target.image.repository}:pull` : undefined;
  const identitytoken = identityTokenOf(target.credential);
  let realmUrl: URL;
  try {
    realmUrl = new URL(params.realm);
  } catch {
    await ask('token', `the token realm of the challenge`, () =>
      Promise.reject(new TransportError(`the challenge's realm is no URL: ${params.realm}`)),
    );
    return undefined;
  }
  const get = (basic: string | undefined, how: string) => {
    const url = new URL(realmUrl);
    if (params.service) url.searchParams.set('service', params.service);
    if (scope) url.searchParams.append('scope', scope);
    return ask('token', `GET ${url.toString()} ${how}`, () =>
      http.request('GET', url.toString(), basic ? { authorization: `Basic ${basic}` } : {}, undefined, realm),
    );
  };
  let answer: HttpAnswer | undefined;
  if (identitytoken) {
    const form = new URLSearchParams({ grant_type: 'refresh_token', client_id: CLIENT_ID });
    if (params.service) form.set('service', params.service);
    if (scope) form.set('scope', scope);
    const to = realmUrl.toString();
    const shown = `POST ${to} (grant_type=refresh_token${params.service ? `, service=${params.service}` : ''}${scope ? `, scope=${scope}` : ''}) with the new identity token`;
    form.set('refresh_token', identitytoken);
    answer = await ask('token', shown, () =>
      http.request('POST', to, { 'content-type': 'application/x-www-form-urlencoded' }, form.toString(), realm),
    );
    if (answer && POST_FALLBACK_STATUSES.includes(answer.status)) {
      // containerd's FetchToken: Basic auth with the empty username and the identity token as the password
      const basic = Buffer.from(`:${identitytoken}`).toString('base64');
      answer = await get(
        basic,
        `with the new identity token as basic auth (the POST was answered ${answer.status}; containerd falls back to this GET)`,
      );
    }
  } else {
    answer = await get(basicOf(target.credential), 'with the new credential');
  }
  return answer?.status === 200 ? tokenOf(answer.body) : undefined;
}

/** `token`, else `access_token` (docker/distribution docs/spec/auth/token.md: both may be present, the same value). */
export function tokenOf(body: string): string | undefined {
  try {
    const v = JSON.parse(body) as { token?: unknown; access_token?: unknown };
    const t = typeof v.token === 'string' && v.token ? v.token : v.access_token;
    return typeof t === 'string' && t ? t : undefined;
  } catch {
    return undefined;
  }
}

/** The identity token containerd uses: only when no username is set (CRI's ParseAuth takes a username first). */
function identityTokenOf(f: AuthFields): string | undefined {
  return !f.username && f.identitytoken ? f.identitytoken : undefined;
}

/** base64(user:password), or the `auth` field as given (already that); undefined when neither is set. */
function basicOf(f: AuthFields): string | undefined {
  if (f.username || f.password) return Buffer.from(`${f.username}:${f.password}`).toString('base64');
  return f.auth || undefined;
}

function header(a: HttpAnswer, name: string): string | undefined {
  const v = a.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/** What an error body says, in one line: the distribution error codes, Docker Hub's `details`, else its first line. */
export function registryError(body: string): string | undefined {
  const text = body.trim();
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as { errors?: Array<{ code?: unknown; message?: unknown }>; details?: unknown; error?: unknown };
    if (Array.isArray(v.errors) && v.errors.length > 0) {
      return v.errors.map((e) => [e.code, e.message].filter((x) => typeof x === 'string' && x).join(' ')).join('; ');
    }
    for (const k of ['details', 'error'] as const) if (typeof v[k] === 'string') return v[k];
    // a token document: nothing to say (and nothing to repeat)
    return undefined;
  } catch {
    return text.split('\n')[0].slice(0, 200);
  }
}
