// The registry adapter against the registry twin (sim/registry/): the token flow as a puller runs it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRegistry } from '../../../src/adapters/registry/tokenFlow.js';
import { parseImageRef } from '../../../src/core/imageRef.js';
import { judgePreflight } from '../../../src/rules/preflight.js';
import { RegistrySim } from '../../../sim/registry/server.js';

let reg: RegistrySim;
beforeAll(async () => {
  reg = await RegistrySim.start({
    username: 'acme-bot',
    password: 'new-pass',
    identityToken: 'refresh-me',
    repositories: { 'org/app': ['v1'], 'org/secret': ['v1'] },
    forbidden: ['org/secret'],
  });
});
afterAll(() => reg.stop());

const cred = (password: string, identitytoken = '') => ({ username: 'acme-bot', password, auth: '', identitytoken });
const target = (image: string | undefined, credential = cred('new-pass')) => ({
  host: reg.host,
  apiHost: reg.host,
  credential,
  image: image ? parseImageRef('preflight-image', `${reg.host}/${image}`) : undefined,
});
const run = (t: ReturnType<typeof target>, opts: { ca?: string } = { ca: reg.caPem }) => checkRegistry(t, { ca: opts.ca, timeoutMs: 5000 });

describe('checkRegistry against the twin', () => {
  it('ok: /v2/ challenge → token with the pull scope → manifest HEAD', async () => {
    const c = await run(target('org/app:v1'));
    expect(c.auth).toBe('bearer');
    expect(c.exchanges.map((x) => [x.step, x.status])).toEqual([
      ['ping', 401],
      ['token', 200],
      ['manifest', 200],
    ]);
    expect(c.exchanges[1].asked).toBe(
      `GET https://${reg.host}/token?service=registry-sim&scope=repository%3Aorg%2Fapp%3Apull with the new credential`,
    );
    expect(judgePreflight(c)).toMatchObject({ verdict: 'ok', proves: 'pull' });
  });
  it('the same with an identity token (the OAuth2 refresh-token POST)', async () => {
    const c = await run(target('org/app:v1', cred('', 'refresh-me')));
    expect(judgePreflight(c)).toMatchObject({ verdict: 'ok', proves: 'pull' });
    expect(JSON.stringify(c)).not.toContain('refresh-me');
  });
  it('a wrong password: the token endpoint refuses, and nothing recorded carries it', async () => {
    const c = await run(target('org/app:v1', cred('old-pass')));
    expect(judgePreflight(c)).toMatchObject({ verdict: 'refused', answered: '401 Unauthorized: UNAUTHORIZED authentication required' });
    expect(JSON.stringify(c)).not.toMatch(/old-pass|b2xkLXBhc3M|YWNtZS1ib3Q6b2xkLXBhc3M/);
  });
  it('an unknown tag: 404; a repository outside the scope: 403', async () => {
    expect(judgePreflight(await run(target('org/app:v9')))).toMatchObject({ verdict: 'refused', answered: '404 Not Found' });
    expect(judgePreflight(await run(target('org/secret:v1')))).toMatchObject({ verdict: 'refused', answered: '403 Forbidden' });
  });
  it('the login alone', async () => {
    expect(judgePreflight(await run(target(undefined)))).toMatchObject({ verdict: 'ok', proves: 'login' });
  });
  it("without the twin's CA: unreachable, saying how to trust it", async () => {
    const v = judgePreflight(await run(target('org/app:v1'), {}));
    expect(v).toMatchObject({ verdict: 'unreachable' });
    expect(v.verdict !== 'ok' && v.answered).toMatch(/TLS: .*registry-ca-file/);
  });
});
