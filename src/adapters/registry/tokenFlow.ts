// The registry's own token flow, as a client pulling an image runs it (docs/preflight.md): GET
// /v2/ → its WWW-Authenticate challenge → the token endpoint with the credential and a pull scope
// (Basic auth on a GET, or for an identity token the OAuth2 refresh-token POST) → HEAD of the
// manifest with the token. Without an image, the login alone: the token endpoint without a scope, as
// `docker login` asks it. It records each exchange and stops at the first that is not a yes; which
// answer means what is the rule's (src/rules/preflight.ts). The credential goes only into request
// headers or the POST body, never into what is recorded.
import type { AuthFields } from '../../core/model/credential.js';
import type { RegistryCheck, RegistryExchange, RegistryStep } from '../../core/model/preflight.js';
import { refLabel, type ImageRef } from '../../core/imageRef.js';
import { usableChallenge } from './challenge.js';
import { request, TransportError, type HttpAnswer, type HttpOptions } from './https.js';

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
}

export async function checkRegistry(target: CheckTarget, http: HttpOptions): Promise<RegistryCheck> {
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
      exchanges.push({ step, asked, failure: e instanceof TransportError ? e.message : String(e) });
      return undefined;
    }
  };
  const base = `https://${target.apiHost}`;
  const ping = await ask('ping', `GET ${base}/v2/`, () => request('GET', `${base}/v2/`, {}, http));
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
      await ask('login', `GET ${base}/v2/ with basic auth`, () => request('GET', `${base}/v2/`, { authorization: `Basic ${basic}` }, http));
    return done('basic');
  }
  const token = await bearerToken(target, challenge.params, ask, http);
  if (token && target.image) await head(target, `Bearer ${token}`, 'with the token', ask, http);
  return done('bearer');
}

type Ask = (step: RegistryStep, asked: string, go: () => Promise<HttpAnswer>) => Promise<HttpAnswer | undefined>;

async function head(target: CheckTarget, authorization: string | undefined, how: string, ask: Ask, http: HttpOptions): Promise<void> {
  const image = target.image!;
  const url = `https://${target.apiHost}/v2/${image.repository}/manifests/${image.reference}`;
  const headers: Record<string, string> = { accept: MANIFEST_ACCEPT, ...(authorization ? { authorization } : {}) };
  await ask('manifest', `HEAD ${url} (${refLabel(image)}) ${how}`, () => request('HEAD', url, headers, http));
}

/** The token endpoint's answer, or undefined when it said no (recorded). */
async function bearerToken(target: CheckTarget, params: Record<string, string>, ask: Ask, http: HttpOptions): Promise<string | undefined> {
  const url = new URL(params.realm);
  const scope = target.image ? `repository:${target.image.repository}:pull` : undefined;
  const { identitytoken } = target.credential;
  let answer: HttpAnswer | undefined;
  if (identitytoken) {
    const form = new URLSearchParams({ grant_type: 'refresh_token', client_id: CLIENT_ID });
    if (params.service) form.set('service', params.service);
    if (scope) form.set('scope', scope);
    const shown = `POST ${url.toString()} (grant_type=refresh_token${params.service ? `, service=${params.service}` : ''}${scope ? `, scope=${scope}` : ''}) with the new identity token`;
    form.set('refresh_token', identitytoken);
    answer = await ask('token', shown, () =>
      request('POST', url.toString(), { 'content-type': 'application/x-www-form-urlencoded' }, http, form.toString()),
    );
  } else {
    if (params.service) url.searchParams.set('service', params.service);
    if (scope) url.searchParams.append('scope', scope);
    const basic = basicOf(target.credential);
    answer = await ask('token', `GET ${url.toString()} with the new credential`, () =>
      request('GET', url.toString(), basic ? { authorization: `Basic ${basic}` } : {}, http),
    );
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
