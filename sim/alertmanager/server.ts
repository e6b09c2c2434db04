// The Alertmanager twin: the API v2 silences endpoints over HTTP (or HTTPS with a CA of its own), with
// Alertmanager's formats and behaviours (docs/alert-silence.md "Sources"):
// - api/v2/openapi.yaml: POST /api/v2/silences (`postableSilence`: matchers, startsAt, endsAt,
//   createdBy, comment required; `id` to update) answers 200 `{"silenceID": …}`; GET
//   /api/v2/silence/{silenceID} a `gettableSilence` (id, status.state active|pending|expired,
//   updatedAt); DELETE /api/v2/silence/{silenceID} 200 with no body; the path's id is a uuid.
// - go-openapi's validation before the handler: 422 `{"code":602,"message":"matchers in body is
//   required"}` for a missing field, `{"code":601,"message":"silenceID in path must be of type uuid: \"x\""}`.
// - api/v2/api.go `postSilencesHandler`: 400 "Failed to create silence: start time must be before end
//   time", 400 "Failed to create silence: end time can't be in the past", 404 "silence not found"
//   for an unknown id, 400 "invalid silence: …" (silence.go `validateSilence`); the payload a JSON string.
//   `getSilenceHandler`, `deleteSilenceHandler`: 404 with no body for an unknown id.
// - silence/silence.go `Set`: an update whose `canUpdate` holds (same matchers; active: same startsAt
//   to the second and an endsAt not in the past; pending: a startsAt not in the past) changes the
//   silence in place, same id; any other update expires the old one (unless expired already) and
//   creates a new id; a startsAt in the past is moved to now. `expire`: an active silence ends now, a
//   pending one starts and ends now, an expired one is left (idempotent).
// - silence.go `getState`: pending before startsAt, expired from endsAt on, active between.
// Every request is recorded (never the token: whether the expected bearer came). `unreachable`: every
// connection is reset before an answer, as a down Alertmanager behind its address is met.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { clusterCerts } from '../talos/api/certs.js';

export interface AmMatcher {
  name: string;
  value: string;
  isRegex: boolean;
  isEqual?: boolean;
}

export interface AmSilence {
  id: string;
  matchers: AmMatcher[];
  startsAt: string;
  endsAt: string;
  createdBy: string;
  comment: string;
  updatedAt: string;
}

export interface AmRequest {
  /** the twin's clock when it came */
  at: number;
  method: string;
  path: string;
  /** an Authorization header came, and whether it was the expected bearer (never its value) */
  authorization: 'none' | 'expected' | 'other';
  /** the JSON body of a POST, as sent */
  body?: unknown;
  /** the answer's status; undefined: the connection was reset (`unreachable`) */
  status?: number;
  /** POST: the silenceID answered */
  silenceID?: string;
}

export interface AlertmanagerSimOptions {
  /** serve HTTPS under a CA of its own (`caPem`) instead of plain http */
  tls?: boolean;
  /** a bearer token every request must carry (else 401, as a proxy in front of Alertmanager answers) */
  token?: string;
  /** the twin's clock (default: the wall clock) */
  now?: () => number;
}

export type SilenceState = 'active' | 'pending' | 'expired';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const REQUIRED = ['matchers', 'startsAt', 'endsAt', 'createdBy', 'comment'] as const;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export class AlertmanagerSim {
  readonly requests: AmRequest[] = [];
  readonly silences = new Map<string, AmSilence>();
  /** true: every connection is reset before an answer */
  unreachable = false;
  private readonly now: () => number;

  private constructor(
    private readonly server: http.Server | https.Server,
    /** the base URL (`http://127.0.0.1:PORT`) */
    readonly url: string,
    /** the CA of the HTTPS certificate (`tls`): what `alertmanager-ca-file` is given */
    readonly caPem: string | undefined,
    private readonly opts: AlertmanagerSimOptions,
  ) {
    this.now = opts.now ?? Date.now;
  }

  static async start(opts: AlertmanagerSimOptions = {}): Promise<AlertmanagerSim> {
    const started: { sim?: AlertmanagerSim } = {};
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => void started.sim!.handle(req, res);
    const certs = opts.tls ? clusterCerts('alertmanager-sim') : undefined;
    const server = certs ? https.createServer({ cert: certs.server.crt, key: certs.server.key }, handler) : http.createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    return (started.sim = new AlertmanagerSim(server, `${certs ? 'https' : 'http'}://127.0.0.1:${port}`, certs?.ca.crt, opts));
  }

  /** silence.go `getState` on the twin's clock */
  state(s: Pick<AmSilence, 'startsAt' | 'endsAt'>): SilenceState {
    const now = this.now();
    if (now < Date.parse(s.startsAt)) return 'pending';
    if (now >= Date.parse(s.endsAt)) return 'expired';
    return 'active';
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const auth = req.headers.authorization;
    const path = new URL(req.url ?? '/', this.url).pathname;
    const record: AmRequest = {
      at: this.now(),
      method: req.method ?? '',
      path,
      authorization: !auth ? 'none' : this.opts.token && auth === `Bearer ${this.opts.token}` ? 'expected' : 'other',
    };
    this.requests.push(record);
    if (this.unreachable) {
      req.socket.destroy();
      return;
    }
    const send = (status: number, body?: unknown) => {
      record.status = status;
      if (body === undefined) {
        res.writeHead(status, { 'Content-Length': 0 });
        res.end();
        return;
      }
      const json = `${JSON.stringify(body)}\n`;
      res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json) });
      res.end(json);
    };
    if (this.opts.token && record.authorization !== 'expected') {
      record.status = 401;
      res.writeHead(401, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('Unauthorized\n');
      return;
    }
    if (path === '/api/v2/silences' && req.method === 'POST') {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return send(400, { code: 400, message: 'parsing silence body from "" failed, because invalid character in JSON' });
      }
      record.body = body;
      return this.post(body as Record<string, unknown>, record, send);
    }
    const m = /^\/api\/v2\/silence\/([^/]+)$/.exec(path);
    if (m && (req.method === 'GET' || req.method === 'DELETE')) {
      const id = decodeURIComponent(m[1]);
      if (!UUID.test(id)) return send(422, { code: 601, message: `silenceID in path must be of type uuid: ${JSON.stringify(id)}` });
      const s = this.silences.get(id);
      if (!s) return send(404);
      if (req.method === 'GET') return send(200, { ...s, status: { state: this.state(s) } });
      this.expire(s);
      return send(200);
    }
    send(404, { code: 404, message: `path ${path} was not found` });
  }

  private post(b: Record<string, unknown>, record: AmRequest, send: (status: number, body?: unknown) => void): void {
    for (const k of REQUIRED) if (b?.[k] === undefined) return send(422, { code: 602, message: `${k} in body is required` });
    const startsAt = Date.parse(b.startsAt as string);
    const endsAt = Date.parse(b.endsAt as string);
    if (Number.isNaN(startsAt) || Number.isNaN(endsAt)) {
      return send(422, { code: 601, message: `${Number.isNaN(startsAt) ? 'startsAt' : 'endsAt'} in body must be of type date-time` });
    }
    const matchers = b.matchers as AmMatcher[];
    // api.go postSilencesHandler, before Set
    if (startsAt >= endsAt) return send(400, 'Failed to create silence: start time must be before end time');
    const now = this.now();
    if (endsAt < now) return send(400, "Failed to create silence: end time can't be in the past");
    const invalid = validateMatchers(matchers);
    if (invalid) return send(400, `invalid silence: ${invalid}`);
    const id = typeof b.id === 'string' && b.id ? b.id : undefined;
    const prev = id ? this.silences.get(id) : undefined;
    if (id && !prev) return send(404, 'silence not found');
    const next = {
      matchers: matchers.map((x) => ({ name: x.name, value: x.value, isRegex: x.isRegex, isEqual: x.isEqual ?? true })),
      startsAt: new Date(startsAt).toISOString(),
      endsAt: new Date(endsAt).toISOString(),
      createdBy: String(b.createdBy),
      comment: String(b.comment),
      updatedAt: new Date(now).toISOString(),
    };
    if (prev && this.canUpdate(prev, next)) {
      this.silences.set(prev.id, { ...next, id: prev.id });
      record.silenceID = prev.id;
      return send(200, { silenceID: prev.id });
    }
    if (startsAt < now) next.startsAt = new Date(now).toISOString();
    if (prev && this.state(prev) !== 'expired') this.expire(prev);
    const created = { ...next, id: randomUUID() };
    this.silences.set(created.id, created);
    record.silenceID = created.id;
    send(200, { silenceID: created.id });
  }

  /** silence.go `canUpdate` */
  private canUpdate(a: AmSilence, b: Omit<AmSilence, 'id'>): boolean {
    if (JSON.stringify(a.matchers) !== JSON.stringify(b.matchers)) return false;
    const now = this.now();
    switch (this.state(a)) {
      case 'active':
        return Math.floor(Date.parse(a.startsAt) / 1000) === Math.floor(Date.parse(b.startsAt) / 1000) && Date.parse(b.endsAt) >= now;
      case 'pending':
        return Date.parse(b.startsAt) >= now;
      case 'expired':
        return false;
    }
  }

  /** silence.go `expire` */
  private expire(s: AmSilence): void {
    const now = new Date(this.now()).toISOString();
    const state = this.state(s);
    if (state === 'expired') return;
    this.silences.set(s.id, { ...s, ...(state === 'pending' ? { startsAt: now } : {}), endsAt: now, updatedAt: now });
  }
}

/** silence.go `validateSilence` / `validateMatcher` (v0.28 texts: one list of matchers). */
function validateMatchers(matchers: AmMatcher[]): string | undefined {
  if (!Array.isArray(matchers) || matchers.length === 0) return 'at least one matcher required';
  let allMatchEmpty = true;
  for (const [i, m] of matchers.entries()) {
    if (!LABEL_NAME.test(m.name)) return `invalid label matcher ${i}: invalid label name ${JSON.stringify(m.name)}`;
    const isEqual = m.isEqual ?? true;
    if (m.isRegex) {
      try {
        const re = new RegExp(`^(?:${m.value})$`);
        allMatchEmpty &&= isEqual && re.test('');
      } catch {
        return `invalid label matcher ${i}: invalid regular expression ${JSON.stringify(m.value)}`;
      }
    } else {
      allMatchEmpty &&= isEqual && m.value === '';
    }
  }
  return allMatchEmpty ? 'at least one matcher must not match the empty string' : undefined;
}
