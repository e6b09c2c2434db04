// The registry twin: an OCI distribution registry over HTTPS on a loopback address, with its own CA,
// speaking Docker's token flow (docker/distribution docs/spec/auth/token.md) on the same server:
// GET /v2/ answers 401 with `WWW-Authenticate: Bearer realm="https://127.0.0.1:PORT/token",
// service="registry-sim"`; the token endpoint takes Basic auth (or the OAuth2 refresh-token POST,
// oauth.md) and accepts one configured credential, refusing any other; a manifest HEAD answers 200
// with Docker-Content-Digest for a known repository and tag, 404 otherwise (a HEAD has no body), 401
// without a valid token, 403 for a token whose scope lacks the repository. Error bodies are
// distribution's (registry/api/errcode, registry/api/v2/errors.go): UNAUTHORIZED "authentication
// required", DENIED "requested access to the resource is denied", MANIFEST_UNKNOWN "manifest
// unknown", NAME_UNKNOWN "repository name not known to registry". Every request is counted.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { clusterCerts } from '../talos/api/certs.js';

export interface RegistrySimOptions {
  /** the one credential the token endpoint accepts */
  username: string;
  password: string;
  /** an identity token accepted as the refresh_token of the OAuth2 POST */
  identityToken?: string;
  /** repository → its tags */
  repositories: Record<string, string[]>;
  /** repositories that exist but the credential may not pull (403 DENIED with its token) */
  forbidden?: string[];
  /**
   * The status the token endpoint answers every POST with, as a registry without the OAuth2 POST does
   * (containerd's core/remotes/docker/authorizer.go names them: GCR 404, JFrog Artifactory 401, ACR
   * 400; a server that routes only GET answers 405). undefined: the POST is served.
   */
  oauthPost?: 400 | 401 | 404 | 405;
  /**
   * Where the token endpoint sends every request instead (a `302 Found` with this `Location`), as a
   * registry whose auth service moved, or one fronted by a misconfigured load balancer, answers.
   * undefined: the token endpoint serves.
   */
  tokenRedirect?: string;
  /**
   * Also serve the same API over plain http, on a loopback port of its own (`httpHost`), as a registry
   * behind a TLS-terminating proxy whose plain port still serves, or a `registry.local:5000` that serves
   * only http. A ping over http names the http port's token endpoint as its realm. `realmOverHttp`: the
   * HTTPS challenge names that plain-http realm too (`http://127.0.0.1:HTTPPORT/token`), as such a proxy
   * does when the registry builds its realm from the request it sees (no `X-Forwarded-Proto`).
   */
  plainHttp?: { realmOverHttp?: boolean };
}

export interface RegistryRequest {
  method: string;
  path: string;
  /** `http` only on the plain-http port (`plainHttp`) */
  scheme: 'https' | 'http';
  /** whether an Authorization header came (never its value) */
  authorized: boolean;
  /** whether a body carrying a `refresh_token` came (never its value) */
  refreshToken: boolean;
  /** the client's port: a test can tell a request that came through its proxy's tunnel */
  peerPort: number;
}

export const REGISTRY_SERVICE = 'registry-sim';

const ERRORS = {
  UNAUTHORIZED: 'authentication required',
  DENIED: 'requested access to the resource is denied',
  MANIFEST_UNKNOWN: 'manifest unknown',
  NAME_UNKNOWN: 'repository name not known to registry',
  UNSUPPORTED: 'The operation is unsupported.',
  UNAVAILABLE: 'service unavailable',
} as const;

export class RegistrySim {
  readonly requests: RegistryRequest[] = [];
  /**
   * `true`: the registry is down behind its address: every request (still counted) is answered
   * `503 UNAVAILABLE` with the detail `health check failed: please see /debug/health`, as distribution's
   * `health.Handler` answers while a registered health check fails (distribution `health/health.go`,
   * `errcode.ErrorCodeUnavailable` of `registry/api/errcode/register.go`).
   */
  outage = false;
  /** token → the repositories it may pull */
  private readonly tokens = new Map<string, Set<string>>();

  /** the plain-http port's `127.0.0.1:PORT` (with `plainHttp`), else undefined */
  httpHost?: string;
  private plain?: http.Server;

  private constructor(
    private readonly server: https.Server,
    readonly host: string,
    /** the CA the server certificate is signed by (PEM): what `registry-ca-file` is given */
    readonly caPem: string,
    private readonly opts: RegistrySimOptions,
  ) {}

  static async start(opts: RegistrySimOptions): Promise<RegistrySim> {
    // the Talos twin's PKI maker: its server certificate names 127.0.0.1 (serverAuth), under a CA of its own
    const certs = clusterCerts('registry-sim');
    const started: { sim?: RegistrySim } = {};
    const server = https.createServer({ cert: certs.server.crt, key: certs.server.key }, (req, res) => started.sim!.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const sim = (started.sim = new RegistrySim(server, `127.0.0.1:${port}`, certs.ca.crt, opts));
    if (opts.plainHttp) {
      const plain = http.createServer((req, res) => sim.handle(req, res, 'http'));
      await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
      sim.plain = plain;
      sim.httpHost = `127.0.0.1:${(plain.address() as AddressInfo).port}`;
    }
    return sim;
  }

  /** the token endpoint the HTTPS challenge names */
  get realm(): string {
    return this.opts.plainHttp?.realmOverHttp ? this.realmOf('http') : this.realmOf('https');
  }

  private realmOf(scheme: 'https' | 'http'): string {
    return scheme === 'http' ? `http://${this.httpHost}/token` : `https://${this.host}/token`;
  }

  /** the requests that reached the registry, as method and path */
  count(): number {
    return this.requests.length;
  }

  async stop(): Promise<void> {
    for (const s of [this.server, this.plain]) {
      if (!s) continue;
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    }
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse, scheme: 'https' | 'http' = 'https'): void {
    const url = new URL(req.url ?? '/', `${scheme}://${scheme === 'http' ? this.httpHost : this.host}`);
    const auth = req.headers.authorization;
    const record: RegistryRequest = {
      method: req.method ?? '',
      path: url.pathname,
      scheme,
      authorized: auth !== undefined,
      refreshToken: false,
      peerPort: req.socket.remotePort ?? 0,
    };
    this.requests.push(record);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      record.refreshToken = new URLSearchParams(body).has('refresh_token');
      res.setHeader('Docker-Distribution-Api-Version', 'registry/2.0');
      if (this.outage) return error(res, 503, 'UNAVAILABLE', req.method === 'HEAD', 'health check failed: please see /debug/health');
      // over plain http the challenges name the plain port's realm, as a registry serving only http names its own
      const realm = scheme === 'http' ? this.realmOf('http') : this.realm;
      if (url.pathname === '/token') return this.token(req.method ?? '', url, auth, body, res);
      if (url.pathname === '/v2/' || url.pathname === '/v2') return this.ping(auth, res, realm);
      const m = /^\/v2\/(.+)\/manifests\/([^/]+)$/.exec(url.pathname);
      if (m && (req.method === 'HEAD' || req.method === 'GET')) return this.manifest(req.method, m[1], m[2], auth, res, realm);
      error(res, 404, 'NAME_UNKNOWN', req.method === 'HEAD');
    });
  }

  private challenge(res: http.ServerResponse, realm: string, scope?: string): void {
    res.setHeader('WWW-Authenticate', `Bearer realm="${realm}",service="${REGISTRY_SERVICE}"${scope ? `,scope="${scope}"` : ''}`);
  }

  private ping(auth: string | undefined, res: http.ServerResponse, realm: string): void {
    if (this.bearer(auth)) return json(res, 200, {});
    this.challenge(res, realm);
    error(res, 401, 'UNAUTHORIZED');
  }

  private bearer(auth: string | undefined): Set<string> | undefined {
    const m = /^Bearer (\S+)$/.exec(auth ?? '');
    return m ? this.tokens.get(m[1]) : undefined;
  }

  private token(method: string, url: URL, auth: string | undefined, body: string, res: http.ServerResponse): void {
    let accepted: boolean;
    let params = url.searchParams;
    if (this.opts.tokenRedirect) {
      res.writeHead(302, { Location: this.opts.tokenRedirect, 'Content-Length': 0 });
      return void res.end();
    }
    if (method === 'POST' && this.opts.oauthPost) return error(res, this.opts.oauthPost, 'UNSUPPORTED');
    if (method === 'POST') {
      params = new URLSearchParams(body);
      accepted =
        params.get('grant_type') === 'refresh_token' &&
        !!this.opts.identityToken &&
        params.get('refresh_token') === this.opts.identityToken;
    } else {
      const m = /^Basic (\S+)$/.exec(auth ?? '');
      if (!m) {
        // anonymous: a token that may pull nothing private (as Docker Hub and GHCR hand out)
        return this.issue(res, new Set());
      }
      const decoded = Buffer.from(m[1], 'base64').toString('utf8');
      // an identity token as the Basic password: containerd's GET fallback sends it with an empty username
      // (core/remotes/docker/auth/fetch.go FetchToken: req.SetBasicAuth(to.Username, to.Secret))
      const password = decoded.slice(decoded.indexOf(':') + 1);
      accepted =
        decoded === `${this.opts.username}:${this.opts.password}` || (!!this.opts.identityToken && password === this.opts.identityToken);
    }
    if (!accepted) return error(res, 401, 'UNAUTHORIZED');
    const scopes = new Set<string>();
    for (const s of params.getAll('scope').flatMap((x) => x.split(' '))) {
      const m = /^repository:([^:]+):(.+)$/.exec(s);
      if (m && m[2].split(',').includes('pull') && !this.opts.forbidden?.includes(m[1])) scopes.add(m[1]);
    }
    this.issue(res, scopes);
  }

  private issue(res: http.ServerResponse, scopes: Set<string>): void {
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, scopes);
    json(res, 200, { token, access_token: token, expires_in: 300, issued_at: new Date().toISOString() });
  }

  private manifest(method: string, repo: string, ref: string, auth: string | undefined, res: http.ServerResponse, realm: string): void {
    const head = method === 'HEAD';
    const scopes = this.bearer(auth);
    if (!scopes) {
      this.challenge(res, realm, `repository:${repo}:pull`);
      return error(res, 401, 'UNAUTHORIZED', head);
    }
    if (!scopes.has(repo)) return error(res, 403, 'DENIED', head);
    const tags = this.opts.repositories[repo];
    if (!tags) return error(res, 404, 'NAME_UNKNOWN', head);
    const digest = (tag: string) => `sha256:${createHash('sha256').update(`${repo}:${tag}`).digest('hex')}`;
    const known = tags.find((t) => t === ref || digest(t) === ref);
    if (!known) return error(res, 404, 'MANIFEST_UNKNOWN', head);
    const doc = JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests: [] });
    res.writeHead(200, {
      'Content-Type': 'application/vnd.oci.image.index.v1+json',
      'Content-Length': Buffer.byteLength(doc),
      'Docker-Content-Digest': digest(known),
    });
    res.end(head ? undefined : doc);
  }
}

function json(res: http.ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** distribution's error envelope; a HEAD gets the status and headers alone. */
function error(res: http.ServerResponse, status: number, code: keyof typeof ERRORS, head = false, detail: string | null = null): void {
  const text = `${JSON.stringify({ errors: [{ code, message: ERRORS[code], detail }] })}\n`;
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(head ? undefined : text);
}
