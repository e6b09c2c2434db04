// The Alertmanager twin against what Alertmanager's API v2 does (docs/alert-silence.md "Sources"):
// the formats of api/v2/openapi.yaml, the texts of api/v2/api.go and silence.go, and the update rules
// of silence.go `Set` / `canUpdate`, on the twin's own clock.
import { afterEach, describe, expect, it } from 'vitest';
import { AlertmanagerSim } from '../../sim/alertmanager/server.js';

let sim: AlertmanagerSim | undefined;
let now = Date.parse('2026-12-06T10:00:00Z');
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
  now = Date.parse('2026-12-06T10:00:00Z');
});

const iso = (ms: number) => new Date(ms).toISOString();
const matchers = [{ name: 'node', value: 'worker-1|worker-2', isRegex: true, isEqual: true }];

async function start(opts: Parameters<typeof AlertmanagerSim.start>[0] = {}) {
  sim = await AlertmanagerSim.start({ now: () => now, ...opts });
  return sim;
}

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${sim!.url}${path}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const json = res.headers.get('content-type')?.startsWith('application/json') ? (JSON.parse(text) as unknown) : undefined;
  return { status: res.status, text, json };
}

const silence = (over: Record<string, unknown> = {}) => ({
  matchers,
  startsAt: iso(now),
  endsAt: iso(now + 60_000),
  createdBy: 'test',
  comment: 'roll',
  ...over,
});

describe('the Alertmanager twin', () => {
  it('creates a silence with a uuid, reads it back as gettableSilence, active until endsAt, expired from then on', async () => {
    await start();
    const created = await call('POST', '/api/v2/silences', silence());
    expect(created.status).toBe(200);
    const id = (created.json as { silenceID: string }).silenceID;
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const got = await call('GET', `/api/v2/silence/${id}`);
    expect(got.json).toEqual({
      id,
      matchers,
      startsAt: iso(now),
      endsAt: iso(now + 60_000),
      createdBy: 'test',
      comment: 'roll',
      updatedAt: iso(now),
      status: { state: 'active' },
    });
    now += 60_000;
    expect(((await call('GET', `/api/v2/silence/${id}`)).json as { status: { state: string } }).status.state).toBe('expired');
  });

  it('a startsAt in the past is moved to now; one in the future is pending', async () => {
    await start();
    const past = (await call('POST', '/api/v2/silences', silence({ startsAt: iso(now - 5000) }))).json as { silenceID: string };
    expect(sim!.silences.get(past.silenceID)?.startsAt).toBe(iso(now));
    const future = (await call('POST', '/api/v2/silences', silence({ startsAt: iso(now + 1000) }))).json as { silenceID: string };
    expect(sim!.state(sim!.silences.get(future.silenceID)!)).toBe('pending');
  });

  it('an update with the same matchers and startsAt extends an active silence in place (same id); another startsAt or matchers expire it and answer a new id', async () => {
    await start();
    const id = ((await call('POST', '/api/v2/silences', silence())).json as { silenceID: string }).silenceID;
    now += 10_000;
    const same = await call('POST', '/api/v2/silences', silence({ id, startsAt: iso(now - 10_000), endsAt: iso(now + 60_000) }));
    expect(same.json).toEqual({ silenceID: id });
    expect(sim!.silences.get(id)?.endsAt).toBe(iso(now + 60_000));
    // a startsAt that differs (the client's clock, not the server's): replaced
    const moved = await call('POST', '/api/v2/silences', silence({ id, startsAt: iso(now), endsAt: iso(now + 90_000) }));
    const next = (moved.json as { silenceID: string }).silenceID;
    expect(next).not.toBe(id);
    expect(sim!.state(sim!.silences.get(id)!)).toBe('expired');
    expect(sim!.state(sim!.silences.get(next)!)).toBe('active');
    // other matchers: replaced too
    const other = await call(
      'POST',
      '/api/v2/silences',
      silence({ id: next, startsAt: sim!.silences.get(next)!.startsAt, matchers: [{ name: 'node', value: 'x', isRegex: false }] }),
    );
    expect((other.json as { silenceID: string }).silenceID).not.toBe(next);
    expect(sim!.state(sim!.silences.get(next)!)).toBe('expired');
  });

  it('an update of an expired silence creates a new one and leaves the old as it was', async () => {
    await start();
    const id = ((await call('POST', '/api/v2/silences', silence())).json as { silenceID: string }).silenceID;
    now += 61_000;
    const before = sim!.silences.get(id);
    const again = await call('POST', '/api/v2/silences', silence({ id, startsAt: before!.startsAt, endsAt: iso(now + 60_000) }));
    expect((again.json as { silenceID: string }).silenceID).not.toBe(id);
    expect(sim!.silences.get(id)).toEqual(before);
  });

  it('DELETE expires an active silence now and a pending one too; again is a no-op; an unknown id is 404 with no body', async () => {
    await start();
    const id = ((await call('POST', '/api/v2/silences', silence())).json as { silenceID: string }).silenceID;
    now += 1000;
    const del = await call('DELETE', `/api/v2/silence/${id}`);
    expect([del.status, del.text]).toEqual([200, '']);
    expect(sim!.silences.get(id)?.endsAt).toBe(iso(now));
    expect(sim!.state(sim!.silences.get(id)!)).toBe('expired');
    expect((await call('DELETE', `/api/v2/silence/${id}`)).status).toBe(200);
    const pending = ((await call('POST', '/api/v2/silences', silence({ startsAt: iso(now + 5000) }))).json as { silenceID: string })
      .silenceID;
    await call('DELETE', `/api/v2/silence/${pending}`);
    expect(sim!.silences.get(pending)).toMatchObject({ startsAt: iso(now), endsAt: iso(now) });
    const unknown = await call('DELETE', '/api/v2/silence/00000000-0000-4000-8000-000000000000');
    expect([unknown.status, unknown.text]).toEqual([404, '']);
    expect((await call('GET', '/api/v2/silence/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('refuses as Alertmanager does, with its texts', async () => {
    await start();
    const refuse = async (body: unknown) => {
      const r = await call('POST', '/api/v2/silences', body);
      return [r.status, r.json];
    };
    expect(await refuse(silence({ endsAt: iso(now - 1), startsAt: iso(now - 5000) }))).toEqual([
      400,
      "Failed to create silence: end time can't be in the past",
    ]);
    expect(await refuse(silence({ endsAt: iso(now) }))).toEqual([400, 'Failed to create silence: start time must be before end time']);
    expect(await refuse(silence({ id: '00000000-0000-4000-8000-000000000000' }))).toEqual([404, 'silence not found']);
    expect(await refuse(silence({ matchers: [{ name: 'node', value: '.*', isRegex: true }] }))).toEqual([
      400,
      'invalid silence: at least one matcher must not match the empty string',
    ]);
    expect(await refuse(silence({ matchers: [] }))).toEqual([400, 'invalid silence: at least one matcher required']);
    expect(await refuse(silence({ matchers: [{ name: '0x', value: 'a', isRegex: false }] }))).toEqual([
      400,
      'invalid silence: invalid label matcher 0: invalid label name "0x"',
    ]);
    const { comment: _c, ...noComment } = silence();
    expect(await refuse(noComment)).toEqual([422, { code: 602, message: 'comment in body is required' }]);
    const bad = await call('GET', '/api/v2/silence/not-a-uuid');
    expect([bad.status, bad.json]).toEqual([422, { code: 601, message: 'silenceID in path must be of type uuid: "not-a-uuid"' }]);
  });

  it('records every request, with whether the expected bearer came (never its value), and can be made unreachable', async () => {
    await start({ token: 's3cret-token' });
    expect((await call('POST', '/api/v2/silences', silence())).status).toBe(401);
    expect((await call('POST', '/api/v2/silences', silence(), { authorization: 'Bearer s3cret-token' })).status).toBe(200);
    expect(sim!.requests.map((r) => [r.method, r.path, r.authorization, r.status])).toEqual([
      ['POST', '/api/v2/silences', 'none', 401],
      ['POST', '/api/v2/silences', 'expected', 200],
    ]);
    expect(JSON.stringify(sim!.requests)).not.toContain('s3cret-token');
    sim!.unreachable = true;
    await expect(
      call('GET', '/api/v2/silence/00000000-0000-4000-8000-000000000000', undefined, { authorization: 'Bearer s3cret-token' }),
    ).rejects.toThrow();
    expect(sim!.requests.at(-1)?.status).toBeUndefined();
  });
});
