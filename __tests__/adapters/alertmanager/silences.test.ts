// The Alertmanager client (src/adapters/alertmanager/silences.ts) against the twin over real HTTP:
// HTTPS under a private CA given as the CA input, the bearer token in the Authorization header only,
// Alertmanager's answers parsed (the silenceID, a gettableSilence, 404s), its error texts kept, and the
// token withheld where the credential rule does not let it go (a redirect to another origin, plain http).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AlertmanagerSim } from '../../../sim/alertmanager/server.js';
import { AlertmanagerError, openSilences, type SilencesClient } from '../../../src/adapters/alertmanager/silences.js';

const TOKEN = 'tok-5f1e2d';
let sim: AlertmanagerSim | undefined;
let client: SilencesClient | undefined;
let other: http.Server | undefined;
afterEach(async () => {
  await client?.close();
  await sim?.stop();
  other?.closeAllConnections();
  await new Promise<void>((r) => (other ? other.close(() => r()) : r()));
  sim = client = other = undefined;
});

const silence = () => ({
  matchers: [{ name: 'node', value: 'worker-1', isRegex: false, isEqual: true }],
  startsAt: new Date().toISOString(),
  endsAt: new Date(Date.now() + 60_000).toISOString(),
  createdBy: 'test',
  comment: 'roll',
});

describe('the Alertmanager client', () => {
  it('creates, reads, extends in place and expires over HTTPS with the CA input and the token', async () => {
    sim = await AlertmanagerSim.start({ tls: true, token: TOKEN });
    client = openSilences({ url: sim.url, token: TOKEN, http: { ca: sim.caPem, timeoutMs: 5000 } });
    const id = await client.post(silence());
    const got = await client.get(id);
    expect(got).toMatchObject({ id, status: { state: 'active' }, createdBy: 'test' });
    const same = await client.post({ ...got!, endsAt: new Date(Date.now() + 120_000).toISOString() });
    expect(same).toBe(id);
    expect(await client.expire(id)).toBe('expired');
    expect((await client.get(id))?.status.state).toBe('expired');
    expect(await client.get('00000000-0000-4000-8000-000000000000')).toBeUndefined();
    expect(await client.expire('00000000-0000-4000-8000-000000000000')).toBe('gone');
    expect(sim.requests.every((r) => r.authorization === 'expected')).toBe(true);
  });

  it("keeps Alertmanager's own text of a refusal, and never the token", async () => {
    sim = await AlertmanagerSim.start({ tls: true, token: TOKEN });
    client = openSilences({ url: sim.url, token: TOKEN, http: { ca: sim.caPem, timeoutMs: 5000 } });
    const e = await client
      .post({ ...silence(), endsAt: new Date(Date.now() - 60_000).toISOString(), startsAt: new Date(Date.now() - 90_000).toISOString() })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(AlertmanagerError);
    expect((e as AlertmanagerError).status).toBe(400);
    expect((e as Error).message).toBe(
      `POST ${sim.url}/api/v2/silences: 400 Bad Request: Failed to create silence: end time can't be in the past`,
    );
    const wrong = openSilences({ url: sim.url, token: 'other', http: { ca: sim.caPem, timeoutMs: 5000 } });
    const unauthorized = await wrong.post(silence()).catch((x: unknown) => x as Error);
    await wrong.close();
    expect((unauthorized as Error).message).toBe(`POST ${sim.url}/api/v2/silences: 401 Unauthorized: Unauthorized`);
    expect(`${(e as Error).message}${(unauthorized as Error).message}`).not.toContain(TOKEN);
  });

  it('an untrusted certificate names alertmanager-ca-file', async () => {
    sim = await AlertmanagerSim.start({ tls: true });
    client = openSilences({ url: sim.url, http: { timeoutMs: 5000 } });
    await expect(client.post(silence())).rejects.toThrow(/not trusted \(a private CA: give its PEM with alertmanager-ca-file\)/);
  });

  it('the token never goes over plain http (nothing sent); without a token a redirect is followed with no Authorization, and a plain-http Alertmanager takes a silence', async () => {
    other = http.createServer((req, res) => {
      res.writeHead(307, { Location: `${sim!.url}${req.url}` }).end();
    });
    await new Promise<void>((r) => other!.listen(0, '127.0.0.1', r));
    sim = await AlertmanagerSim.start();
    const redirector = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    // the token over plain http: withheld, nothing sent
    client = openSilences({ url: redirector, token: TOKEN, http: { timeoutMs: 5000 } });
    await expect(client.get('00000000-0000-4000-8000-000000000000')).rejects.toThrow(/clear text/);
    await client.close();
    // no token: the GET follows the redirect to the Alertmanager's origin, without any Authorization
    client = openSilences({ url: redirector, http: { timeoutMs: 5000 } });
    expect(await client.get('00000000-0000-4000-8000-000000000000')).toBeUndefined();
    expect(sim.requests.map((r) => [r.method, r.authorization])).toEqual([['GET', 'none']]);
    // a plain-http Alertmanager without a token takes a silence (the body is no credential)
    await client.close();
    client = openSilences({ url: sim.url, http: { timeoutMs: 5000 } });
    expect(await client.post(silence())).toMatch(/^[0-9a-f-]{36}$/);
  });
});
