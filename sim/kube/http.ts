// HTTP front of the simulated apiserver: routing, content types, Status errors, the request log and the
// fault hooks. Every JSON answer carries Content-Type: application/json (drain's typed client fails
// without it); /readyz answers text/plain `ok` without a newline, like the real health handler.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { authenticated, UNAUTHORIZED, type KubeAuth, type KubeTls } from './auth.js';
import type { AddressInfo, Socket } from 'node:net';
import { Api, patchTypeOf, type FieldValidation, type WriteResult } from './api.js';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, openapiGroupVersion, openapiRoot, versionInfo } from './discovery.js';
import type { Faults } from './faults.js';
import { goJson, isObject } from './json.js';
import { findResource, R, type ResourceDef } from './resources.js';
import { ApiError, defaultReason, failure, internal, methodNotAllowed, pathNotFound, SERVER_TIMEOUT_MESSAGE } from './status.js';
import { toTable, wantsTable } from './tables.js';
import type { Watches } from './watch.js';

export interface RequestRecord {
  method: string;
  path: string;
  query: string;
  /** 0 when the connection was dropped by a fault */
  status: number;
  command?: string;
  userAgent?: string;
  at: number;
}

interface Route {
  def: ResourceDef;
  ns: string;
  name?: string;
  sub?: string;
}

function parseResource(group: string, version: string, rest: string[], all: readonly ResourceDef[]): Route | undefined {
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const def = findResource(group, version, rest[2]!, all);
    if (def?.namespaced) {
      if (rest.length > 5) return undefined;
      return { def, ns: rest[1]!, name: rest[3], sub: rest[4] };
    }
  }
  const def = findResource(group, version, rest[0]!, all);
  if (!def || rest.length > 3) return undefined;
  if (def.namespaced && rest.length > 1) return undefined;
  return { def, ns: '', name: rest[1], sub: rest[2] };
}

function warningHeader(w: string): string {
  return `299 - "${w.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

const fieldValidations = new Set(['Ignore', 'Warn', 'Strict']);

/** Each request's URL, parsed once: handle() routes by it and record() logs its path and query (neither changes it). */
const parsedUrls = new WeakMap<IncomingMessage, URL>();
function urlOf(req: IncomingMessage): URL {
  let u = parsedUrls.get(req);
  if (!u) {
    u = new URL(req.url ?? '/', 'http://x');
    parsedUrls.set(req, u);
  }
  return u;
}

export class HttpFront {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(
    private readonly api: Api,
    private readonly watches: Watches,
    private readonly faults: Faults,
    private readonly log: RequestRecord[],
    /** every kind served: the built-in ones and the CRDs a test installed (KubeSim.installCrd) */
    private readonly kinds: readonly ResourceDef[],
    /** who may call (sim/kube/auth.ts); undefined: everyone */
    private readonly auth?: KubeAuth,
    /** serve TLS with these (a `client-cert` twin) */
    private readonly tls?: KubeTls,
  ) {}

  async listen(): Promise<number> {
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      if (!authenticated(this.auth, req)) {
        this.send(req, res, 401, UNAUTHORIZED, Date.now());
        return;
      }
      this.handle(req, res).catch((e) => {
        if (!res.headersSent) this.sendError(req, res, internal(String((e as Error)?.message ?? e)), Date.now());
      });
    };
    // a client without a certificate still connects (anonymous, as kube-apiserver lets it): the handler answers 401
    const server: Server = this.tls
      ? createTlsServer(
          { key: this.tls.server.key, cert: this.tls.server.crt, ca: this.tls.ca.crt, requestCert: true, rejectUnauthorized: false },
          handler,
        )
      : createServer(handler);
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    server.keepAliveTimeout = 30_000;
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    return this.port;
  }

  async close(): Promise<void> {
    this.watches.closeAll();
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private record(req: IncomingMessage, status: number, at: number): void {
    const u = urlOf(req);
    const cmd = req.headers['kubectl-command'];
    this.log.push({
      method: req.method ?? 'GET',
      path: u.pathname,
      query: u.search.replace(/^\?/, ''),
      status,
      ...(cmd ? { command: String(cmd) } : {}),
      ...(req.headers['user-agent'] ? { userAgent: req.headers['user-agent'] } : {}),
      at,
    });
  }

  private send(
    req: IncomingMessage,
    res: ServerResponse,
    code: number,
    body: unknown,
    at: number,
    headers: Record<string, string | string[]> = {},
  ): void {
    const s = goJson(body);
    res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(s), ...headers });
    res.end(s);
    this.record(req, code, at);
  }

  private sendError(req: IncomingMessage, res: ServerResponse, e: ApiError, at: number): void {
    this.send(req, res, e.code, e.status, at, e.headers);
  }

  private sendText(req: IncomingMessage, res: ServerResponse, code: number, text: string, at: number): void {
    res.writeHead(code, {
      'Content-Type': 'text/plain; charset=utf-8',
      'X-Content-Type-Options': 'nosniff',
      'Content-Length': Buffer.byteLength(text),
    });
    res.end(text);
    this.record(req, code, at);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = Date.now();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const url = urlOf(req);
    const method = (req.method ?? 'GET').toUpperCase();
    const path = url.pathname;

    // The dispatcher's own /version probe only picks the kubectl binary; faulting it would just eat a count.
    const dispatcher = String(req.headers['user-agent'] ?? '').startsWith('kubectl-dispatcher');
    const fault = dispatcher ? undefined : this.faults.take(method, path);
    if (fault) {
      // The write lands first; the client only gets the fault's answer (or none).
      if (fault.land) this.applyUnanswered(req, method, url, body, at);
      if ('drop' in fault) {
        this.record(req, 0, at);
        req.socket.destroy();
        return;
      }
      if ('hang' in fault) {
        // Never answered: the client's own timeout (or its kill) ends the request.
        this.record(req, 0, at);
        return;
      }
      const reason = fault.reason ?? defaultReason[fault.status];
      const isInternal = fault.status === 500 && (reason === undefined || reason === 'InternalError');
      const message = fault.message ?? (fault.status === 504 && reason === 'Timeout' ? SERVER_TIMEOUT_MESSAGE : 'injected fault');
      const status = isInternal
        ? failure(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] })
        : failure(fault.status, reason, message);
      this.send(
        req,
        res,
        fault.status,
        status,
        at,
        fault.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(fault.retryAfterSeconds) },
      );
      return;
    }

    try {
      this.faults.runWriteHooks(method, path);
      this.route(req, res, method, url, body, at);
    } catch (e) {
      if (e instanceof ApiError) this.sendError(req, res, e, at);
      else this.sendError(req, res, internal(String((e as Error)?.stack ?? e)), at);
    }
  }

  /** Applies a request as usual but throws its answer away (the fault's answer replaces it). */
  private applyUnanswered(req: IncomingMessage, method: string, url: URL, body: Buffer, at: number): void {
    const discard = { writeHead: () => discard, end: () => undefined, headersSent: false } as unknown as ServerResponse;
    const log = this.log.length;
    try {
      this.faults.runWriteHooks(method, url.pathname);
      this.route(req, discard, method, url, body, at);
    } catch {
      // an error answer is thrown away like any other
    }
    // Only the answer the client gets is recorded.
    this.log.splice(log);
  }

  private route(req: IncomingMessage, res: ServerResponse, method: string, url: URL, body: Buffer, at: number): void {
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const segs = path.split('/').filter((s) => s);
    const q = url.searchParams;

    if (['/readyz', '/livez', '/healthz'].includes(path)) {
      if (method !== 'GET') throw methodNotAllowed();
      if (q.has('verbose')) {
        const checks = ['ping', 'log', 'etcd', 'informer-sync', 'poststarthook/start-apiserver-admission-initializer'];
        this.sendText(req, res, 200, checks.map((c) => `[+]${c} ok`).join('\n') + `\n${path.slice(1)} check passed\n`, at);
      } else {
        this.sendText(req, res, 200, 'ok', at);
      }
      return;
    }
    if (segs[0] === 'version' && segs.length === 1) {
      if (method !== 'GET') throw methodNotAllowed();
      return this.send(req, res, 200, versionInfo, at);
    }
    if (segs[0] === 'openapi') {
      if (method !== 'GET') throw methodNotAllowed();
      if (segs[1] === 'v3') {
        const doc = segs.length === 2 ? openapiRoot(this.kinds) : openapiGroupVersion(segs.slice(2).join('/'), this.kinds);
        if (doc) return this.send(req, res, 200, doc, at);
      }
      throw pathNotFound();
    }

    let group: string;
    let version: string | undefined;
    let rest: string[];
    if (segs[0] === 'api') {
      if (segs.length === 1) {
        if (method !== 'GET') throw methodNotAllowed();
        return this.send(req, res, 200, apiVersions(`127.0.0.1:${this.port}`), at);
      }
      group = '';
      version = segs[1];
      rest = segs.slice(2);
    } else if (segs[0] === 'apis') {
      if (segs.length === 1) {
        if (method !== 'GET') throw methodNotAllowed();
        return this.send(req, res, 200, apiGroupList(this.kinds), at);
      }
      group = segs[1]!;
      if (segs.length === 2) {
        const g = apiGroup(group, this.kinds);
        if (!g) throw pathNotFound();
        return this.send(req, res, 200, g, at);
      }
      version = segs[2];
      rest = segs.slice(3);
    } else {
      throw pathNotFound();
    }
    if (rest.length === 0) {
      const list = apiResourceList(group, version!, this.kinds);
      if (!list) throw pathNotFound();
      if (method !== 'GET') throw methodNotAllowed();
      return this.send(req, res, 200, list, at);
    }
    const r = parseResource(group, version!, rest, this.kinds);
    if (!r) throw pathNotFound();
    if (r.sub && !(r.sub in r.def.subresources)) throw pathNotFound();
    this.resource(req, res, method, r, q, body, at);
  }

  private resource(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    r: Route,
    q: URLSearchParams,
    body: Buffer,
    at: number,
  ): void {
    const { def, ns, name, sub } = r;
    const api = this.api;
    const fv = q.get('fieldValidation');
    if (fv && !fieldValidations.has(fv))
      throw new ApiError(failure(400, 'BadRequest', `fieldValidation ${fv} is invalid: must be one of "Ignore", "Warn", or "Strict"`));
    const opts = { dryRun: q.getAll('dryRun').includes('All'), fieldValidation: (fv ?? undefined) as FieldValidation | undefined };
    const table = wantsTable(req.headers.accept);
    const reply = (w: WriteResult) =>
      this.send(req, res, w.code, w.body, at, w.warnings.length ? { Warning: w.warnings.map(warningHeader) } : {});

    if (!name) {
      if (method === 'GET') {
        const query = { labelSelector: q.get('labelSelector'), fieldSelector: q.get('fieldSelector') };
        if (q.get('watch') === 'true' || q.get('watch') === '1') {
          const t = Number(q.get('timeoutSeconds') ?? 0);
          this.watches.serve(req, res, def, ns, {
            ...query,
            resourceVersion: q.get('resourceVersion'),
            timeoutSeconds: Number.isFinite(t) ? t : 0,
          });
          this.record(req, 200, at);
          return;
        }
        const list = api.list(def, ns, { ...query, limit: Number(q.get('limit') ?? 0) || undefined, continue: q.get('continue') });
        if (table) {
          const objs = list.items.map((i: any) => ({ ...i, kind: def.kind }));
          return this.send(req, res, 200, toTable(def, objs, list.metadata), at);
        }
        return this.send(req, res, 200, list, at);
      }
      if (method === 'POST') {
        return reply(api.create(def, ns, parseJson(body), opts));
      }
      throw methodNotAllowed();
    }

    switch (method) {
      case 'GET': {
        // only encoded (and read by toTable): the stored object itself, not a copy
        const obj = api.mustPeek(def, ns, name);
        if (table && !sub) return this.send(req, res, 200, toTable(def, [obj], { resourceVersion: obj.metadata.resourceVersion }), at);
        return this.send(req, res, 200, obj, at);
      }
      case 'POST': {
        if (def === R.pods && sub === 'eviction') {
          const out = api.evict(ns, name, parseJson(body), q.getAll('dryRun'));
          return this.send(req, res, out.code, out.body, at, out.headers);
        }
        throw methodNotAllowed();
      }
      case 'PUT':
        if (sub && sub !== 'status') throw methodNotAllowed();
        return reply(api.update(def, ns, name, sub, parseJson(body), opts));
      case 'PATCH': {
        if (sub && sub !== 'status') throw methodNotAllowed();
        const type = patchTypeOf(req.headers['content-type']);
        if (!type) {
          throw new ApiError(
            failure(
              415,
              'UnsupportedMediaType',
              `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`,
            ),
          );
        }
        return reply(api.patch(def, ns, name, sub, type, body.toString('utf8'), opts));
      }
      case 'DELETE': {
        if (sub) throw methodNotAllowed();
        // drain's fallback sends a protobuf DeleteOptions: only JSON bodies are read, anything else is ignored.
        let options: any = {};
        if (/json/.test(String(req.headers['content-type'] ?? '')) && body.length > 0) {
          try {
            const parsed = JSON.parse(body.toString('utf8'));
            if (isObject(parsed)) options = parsed;
          } catch {
            /* tolerated, like an unreadable protobuf body */
          }
        }
        const gq = q.get('gracePeriodSeconds');
        if (gq !== null && gq !== '') options.gracePeriodSeconds = Number(gq);
        const out = api.delete(def, ns, name, options, opts.dryRun);
        return this.send(req, res, out.code, out.body, at);
      }
      default:
        throw methodNotAllowed();
    }
  }
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (e) {
    throw new ApiError(failure(400, 'BadRequest', `the request body could not be decoded: ${(e as Error).message}`));
  }
}
