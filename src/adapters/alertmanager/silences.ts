// Alertmanager's API v2 silences (api/v2/openapi.yaml, prometheus/alertmanager; docs/alert-silence.md):
// POST /api/v2/silences creates a silence, or updates the one whose `id` the body carries, and answers
// `{"silenceID": …}`; GET /api/v2/silence/{id} reads one (`status.state`: active, pending, expired);
// DELETE /api/v2/silence/{id} expires it. A 400's body is the server's message as a JSON string
// ("Failed to create silence: end time can't be in the past", "invalid silence: …"), a 404 of POST
// "silence not found", of GET and DELETE empty. The HTTP is the pre-flight's client
// (../registry/https.ts: undici, the CA bundle added to Node's, the runner's proxies, redirects by
// its rules) with the bearer token as the one credential, judged by the credential rule before each
// request (never over plain http, only to the Alertmanager's origin). Parses and classifies only.
import { openHttp, type HttpAnswer, type HttpClient, type HttpOptions } from '../registry/https.js';
import type { SilenceMatcher } from '../../core/model/silence.js';

/** A silence as POST /api/v2/silences takes it (`postableSilence`). */
export interface PostableSilence {
  /** set: update that silence (extended in place, or replaced by a new id: silence.go `Set`, `canUpdate`) */
  id?: string;
  matchers: SilenceMatcher[];
  startsAt: string;
  endsAt: string;
  createdBy: string;
  comment: string;
}

/** A silence as GET answers it (`gettableSilence`). */
export interface GettableSilence extends Required<PostableSilence> {
  status: { state: 'active' | 'pending' | 'expired' };
  updatedAt: string;
}

/** A request Alertmanager answered with an error, or that got no answer (`status` undefined): the message says which, never the token. */
export class AlertmanagerError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'AlertmanagerError';
  }
}

export interface SilencesClient {
  /** POST: the silence's id (a new one unless `s.id` was updated in place) */
  post(s: PostableSilence): Promise<string>;
  /** GET: undefined when Alertmanager knows no such silence (404) */
  get(id: string): Promise<GettableSilence | undefined>;
  /** DELETE: `gone` when Alertmanager knows no such silence (404: garbage-collected past its retention) */
  expire(id: string): Promise<'expired' | 'gone'>;
  close(): Promise<void>;
}

export interface SilencesOptions {
  /** `alertmanager-url`, without a trailing slash */
  url: string;
  /** the bearer token (a secret: never in a message) */
  token?: string;
  http: Omit<HttpOptions, 'bodyIsCredential' | 'caInput'>;
}

export function openSilences(opts: SilencesOptions): SilencesClient {
  const origin = new URL(opts.url).origin;
  const client: HttpClient = openHttp({ ...opts.http, bodyIsCredential: false, caInput: 'alertmanager-ca-file' }, { registry: origin });
  const headers = (json: boolean): Record<string, string> => ({
    accept: 'application/json',
    ...(json ? { 'content-type': 'application/json' } : {}),
    ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
  });
  const call = async (method: string, path: string, body?: unknown): Promise<HttpAnswer> => {
    const url = `${opts.url}/api/v2${path}`;
    try {
      return await client.request(method, url, headers(body !== undefined), body === undefined ? undefined : JSON.stringify(body), {
        to: 'registry',
      });
    } catch (e) {
      throw new AlertmanagerError(`${method} ${url}: ${(e as Error).message}`);
    }
  };
  const silencePath = (id: string) => `/silence/${encodeURIComponent(id)}`;
  return {
    post: async (s) => {
      const a = await call('POST', '/silences', s);
      if (a.status !== 200) throw failed('POST', `${opts.url}/api/v2/silences`, a);
      const id = (parseJson(a) as { silenceID?: unknown } | undefined)?.silenceID;
      if (typeof id !== 'string' || !id)
        throw new AlertmanagerError(`POST ${opts.url}/api/v2/silences: the answer names no silenceID`, a.status);
      return id;
    },
    get: async (id) => {
      const a = await call('GET', silencePath(id));
      if (a.status === 404) return undefined;
      if (a.status !== 200) throw failed('GET', `${opts.url}/api/v2${silencePath(id)}`, a);
      const s = parseJson(a) as GettableSilence | undefined;
      if (!s || s.id !== id || !Array.isArray(s.matchers) || typeof s.startsAt !== 'string' || !s.status?.state) {
        throw new AlertmanagerError(`GET ${opts.url}/api/v2${silencePath(id)}: not a silence`, a.status);
      }
      return s;
    },
    expire: async (id) => {
      const a = await call('DELETE', silencePath(id));
      if (a.status === 404) return 'gone';
      if (a.status !== 200) throw failed('DELETE', `${opts.url}/api/v2${silencePath(id)}`, a);
      return 'expired';
    },
    close: () => client.close(),
  };
}

function parseJson(a: HttpAnswer): unknown {
  try {
    return JSON.parse(a.body) as unknown;
  } catch {
    return undefined;
  }
}

/** The server's message: a JSON string (the API's error payloads), a go-openapi `{code, message}`, else the body's first line. */
function failed(method: string, url: string, a: HttpAnswer): AlertmanagerError {
  const parsed = parseJson(a);
  const message = typeof parsed === 'object' && parsed !== null ? (parsed as { message?: unknown }).message : undefined;
  const text = typeof parsed === 'string' ? parsed : typeof message === 'string' ? message : a.body.split('\n')[0].slice(0, 300);
  return new AlertmanagerError(`${method} ${url}: ${a.status} ${a.statusText}${text ? `: ${text}` : ''}`, a.status);
}
