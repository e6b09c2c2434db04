// The registry adapter against the registry twin (sim/registry/): the token flow as a puller runs it,
// an identity token's fallback from the POST to the GET as containerd's, the way through an HTTPS_PROXY
// (a loopback CONNECT proxy that counts its tunnels), and the CAs kept together.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpOptions } from '../../../src/adapters/registry/https.js';
import { checkRegistry } from '../../../src/adapters/registry/tokenFlow.js';
import { parseImageRef } from '../../../src/core/imageRef.js';
import { judgePreflight } from '../../../src/rules/preflight.js';
import { RegistrySim } from '../../../sim/registry/server.js';
import { clusterCerts } from '../../../sim/talos/api/certs.js';
import { startConnectProxy } from '../../fakes/connectProxy.js';

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
/** an identity token alone, as containerd's CRI reads it only without a username */
const token = (identitytoken: string) => ({ username: '', password: '', auth: '', identitytoken });
const target = (image: string | undefined, credential = cred('new-pass')) => ({
  host: reg.host,
  apiHost: reg.host,
  credential,
  image: image ? parseImageRef('preflight-image', `${reg.host}/${image}`) : undefined,
});
const run = (t: ReturnType<typeof target>, opts: Omit<HttpOptions, 'timeoutMs'> = { ca: reg.caPem }) =>
  checkRegistry(t, { ...opts, timeoutMs: 5000 });
const steps = (c: { exchanges: Array<{ step: string; status?: number }> }) => c.exchanges.map((x) => `${x.step} ${x.status}`);

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
    const c = await run(target('org/app:v1', token('refresh-me')));
    expect(c.exchanges[1].asked).toMatch(
      /^POST https:\/\/\S+\/token \(grant_type=refresh_token, service=registry-sim, scope=repository:org\/app:pull\) with the new identity token$/,
    );
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

describe('an identity token at a token endpoint without the OAuth2 POST (containerd falls back to the GET)', () => {
  const withPost = async (oauthPost: 400 | 401 | 404 | 405, identityToken = 'refresh-me') => {
    const r = await RegistrySim.start({
      username: 'acme-bot',
      password: 'new-pass',
      identityToken: 'refresh-me',
      repositories: { 'org/app': ['v1'] },
      oauthPost,
    });
    try {
      const t = {
        host: r.host,
        apiHost: r.host,
        credential: token(identityToken),
        image: parseImageRef('preflight-image', `${r.host}/org/app:v1`),
      };
      return { c: await checkRegistry(t, { ca: r.caPem, timeoutMs: 5000 }), requests: r.requests.map((q) => `${q.method} ${q.path}`) };
    } finally {
      await r.stop();
    }
  };

  it.each([400, 401, 404] as const)('POST answered %i: the GET with the token as basic auth, and the pull is proven', async (status) => {
    const { c, requests } = await withPost(status);
    expect(steps(c)).toEqual(['ping 401', `token ${status}`, 'token 200', 'manifest 200']);
    expect(requests).toEqual(['GET /v2/', 'POST /token', 'GET /token', 'HEAD /v2/org/app/manifests/v1']);
    expect(c.exchanges[2].asked).toMatch(
      new RegExp(`with the new identity token as basic auth \\(the POST was answered ${status}; containerd falls back to this GET\\)$`),
    );
    expect(judgePreflight(c)).toMatchObject({ verdict: 'ok', proves: 'pull' });
    expect(JSON.stringify(c)).not.toMatch(/refresh-me|OnJlZnJlc2gtbWU/);
  });

  it('POST answered 405: no fallback without a username (as containerd), and the verdict is unsupported, not refused', async () => {
    const { c, requests } = await withPost(405);
    expect(requests).toEqual(['GET /v2/', 'POST /token']);
    expect(judgePreflight(c)).toMatchObject({
      verdict: 'unsupported',
      answered: '405 Method Not Allowed: UNSUPPORTED The operation is unsupported.',
    });
  });

  it('a wrong identity token: the POST and the GET both 401, refused', async () => {
    const { c } = await withPost(401, 'stale-token');
    expect(steps(c)).toEqual(['ping 401', 'token 401', 'token 401']);
    expect(judgePreflight(c)).toMatchObject({ verdict: 'refused' });
  });

  it('a username with the identity token: the username/password is what containerd sends (CRI ParseAuth takes the username first)', async () => {
    const c = await run(target('org/app:v1', { username: 'acme-bot', password: 'new-pass', auth: '', identitytoken: 'stale-token' }));
    expect(c.exchanges[1].asked).toMatch(/^GET .* with the new credential$/);
    expect(judgePreflight(c)).toMatchObject({ verdict: 'ok', proves: 'pull' });
  });
});

describe('through the runner proxy (HTTPS_PROXY, NO_PROXY)', () => {
  const none = { httpProxy: '', httpsProxy: '', noProxy: '' };

  it('HTTPS_PROXY: the registry is reached through CONNECT tunnels to it, and the flow proves the pull', async () => {
    const proxy = await startConnectProxy();
    try {
      const c = await run(target('org/app:v1'), { ca: reg.caPem, proxy: { ...none, httpsProxy: proxy.url } });
      expect(judgePreflight(c)).toMatchObject({ verdict: 'ok', proves: 'pull' });
      expect(proxy.connects.length).toBeGreaterThan(0);
      expect(new Set(proxy.connects)).toEqual(new Set([reg.host]));
    } finally {
      await proxy.stop();
    }
  });

  it('NO_PROXY naming the host (with or without its port): no tunnel, straight to the registry', async () => {
    const proxy = await startConnectProxy();
    try {
      for (const noProxy of ['127.0.0.1', `example.com, ${reg.host}`]) {
        const c = await run(target('org/app:v1'), { ca: reg.caPem, proxy: { ...none, httpsProxy: proxy.url, noProxy } });
        expect(judgePreflight(c)).toMatchObject({ verdict: 'ok', proves: 'pull' });
      }
      expect(proxy.connects).toEqual([]);
    } finally {
      await proxy.stop();
    }
  });

  it("the proxy's credentials go to the proxy alone; a proxy refusing the tunnel: unreachable, saying so", async () => {
    const refusing = await startConnectProxy({ refuse: 407 });
    try {
      const url = refusing.url.replace('http://', 'http://proxy-user:proxy-pass@');
      const c = await run(target('org/app:v1'), { ca: reg.caPem, proxy: { ...none, httpsProxy: url } });
      const v = judgePreflight(c);
      expect(v).toMatchObject({ verdict: 'unreachable' });
      expect(v.verdict !== 'ok' && v.answered).toMatch(/the proxy refused the tunnel: Proxy response \(407\)/);
      expect(refusing.proxyAuthorizations[0]).toBe(`Basic ${Buffer.from('proxy-user:proxy-pass').toString('base64')}`);
      expect(JSON.stringify(c)).not.toMatch(/proxy-pass|cHJveHktcGFzc/);
    } finally {
      await refusing.stop();
    }
  });
});

describe('registry-ca-file is added to the CAs the runner trusts, NODE_EXTRA_CA_CERTS included', () => {
  it("the registry's CA given as NODE_EXTRA_CA_CERTS still counts when registry-ca-file names another CA", async () => {
    const other = clusterCerts('talos-sim').ca.crt;
    expect(other).not.toBe(reg.caPem);
    expect(judgePreflight(await run(target('org/app:v1'), { ca: other, nodeExtraCa: reg.caPem }))).toMatchObject({ verdict: 'ok' });
    // and the file's CA with another NODE_EXTRA_CA_CERTS bundle
    expect(judgePreflight(await run(target('org/app:v1'), { ca: reg.caPem, nodeExtraCa: other }))).toMatchObject({ verdict: 'ok' });
  });
});

describe('where the credential may go (core/credentialRoute.ts): a plain-http realm, a plain-http registry, a proxy', () => {
  let split: RegistrySim;
  beforeAll(async () => {
    // behind a TLS-terminating proxy that builds the realm without X-Forwarded-Proto: the HTTPS
    // challenge names the plain-http port's token endpoint
    split = await RegistrySim.start({
      username: 'acme-bot',
      password: 'new-pass',
      identityToken: 'refresh-me',
      repositories: { 'org/app': ['v1'] },
      plainHttp: { realmOverHttp: true },
    });
  });
  afterAll(() => split.stop());
  const on = (sim: RegistrySim, host: string, credential = cred('new-pass'), plainHttp = false) => ({
    host,
    apiHost: host,
    credential,
    image: parseImageRef('preflight-image', `${host}/org/app:v1`),
    ...(plainHttp ? { plainHttp } : {}),
  });

  it.each([
    ['a username and password (GET with Basic auth)', cred('new-pass')],
    ['an identity token (the refresh-token POST)', token('refresh-me')],
  ])('an https registry whose challenge names an http:// realm, %s: withheld, the realm asked nothing', async (_what, credential) => {
    split.requests.length = 0;
    const c = await checkRegistry(on(split, split.host, credential), { ca: split.caPem, timeoutMs: 5000 });
    const v = judgePreflight(c);
    expect(v).toMatchObject({ verdict: 'withheld' });
    expect(v.verdict !== 'ok' && v.answered).toBe(
      `not sent: the token realm http://${split.httpHost}/token is plain http: the credential would travel in clear text`,
    );
    expect(v.verdict !== 'ok' && v.fix).toContain('X-Forwarded-Proto: https');
    expect(split.requests.map((r) => `${r.scheme} ${r.method} ${r.path}`)).toEqual(['https GET /v2/']);
    expect(JSON.stringify(c)).not.toMatch(/new-pass|refresh-me/);
  });

  it('the same host configured as plain http (registry-plain-http): asked over http, its own http realm gets the credential', async () => {
    split.requests.length = 0;
    const c = await checkRegistry(on(split, split.httpHost!, cred('new-pass'), true), { timeoutMs: 5000 });
    expect(judgePreflight(c)).toMatchObject({ verdict: 'ok', proves: 'pull' });
    expect(split.requests.map((r) => `${r.scheme} ${r.method} ${r.path} ${r.authorized}`)).toEqual([
      'http GET /v2/ false',
      'http GET /token true',
      'http HEAD /v2/org/app/manifests/v1 true',
    ]);
  });

  it('a plain-http registry behind HTTP_PROXY: withheld (the proxy would read it); named in NO_PROXY: asked directly', async () => {
    const proxy = await startConnectProxy();
    try {
      split.requests.length = 0;
      const via = { httpProxy: proxy.url.replace('http://', 'http://proxy-user:proxy-pass@'), httpsProxy: '', noProxy: '' };
      const c = await checkRegistry(on(split, split.httpHost!, cred('new-pass'), true), { proxy: via, timeoutMs: 5000 });
      const v = judgePreflight(c);
      expect(v).toMatchObject({ verdict: 'withheld' });
      expect(v.verdict !== 'ok' && v.answered).toBe(
        `not sent: the token realm http://${split.httpHost}/token is plain http and would go through the proxy ${proxy.url}, which reads such a request as it is`,
      );
      expect(v.verdict !== 'ok' && v.fix).toBe(`name ${split.httpHost} in NO_PROXY: a plain-http registry is asked directly or not at all`);
      // the ping (no credential) went through the proxy; nothing carrying the credential did
      expect(split.requests.filter((r) => r.authorized)).toEqual([]);
      const direct = await checkRegistry(on(split, split.httpHost!, cred('new-pass'), true), {
        proxy: { ...via, noProxy: split.httpHost! },
        timeoutMs: 5000,
      });
      expect(judgePreflight(direct)).toMatchObject({ verdict: 'ok', proves: 'pull' });
      expect(JSON.stringify([c, direct])).not.toMatch(/proxy-pass|new-pass/);
    } finally {
      await proxy.stop();
    }
  });
});
