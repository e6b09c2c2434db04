// End to end: the pre-flight check through the bundle, against the registry twin (sim/registry/):
// HTTPS on a loopback address with its own CA, the token flow, one accepted credential. A refusal,
// an unreachable registry and every bad input stop the run before anything is mutated, which the
// twin's own state shows: no Lease, no request that writes to the apiserver, no Talos mutation.
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NEW_CREDENTIAL, OLD_CREDENTIAL, type SimCluster } from '../../sim/cluster.js';
import { RegistrySim, type RegistrySimOptions } from '../../sim/registry/server.js';
import { clusterCerts } from '../../sim/talos/api/certs.js';
import { startConnectProxy } from '../fakes/connectProxy.js';
import type { ActionRun } from '../../runner/runAction.js';
import { A, act, ann, assertNoSecret, byName, requireKubectl, startCluster, TEST_KNOBS } from './helpers.js';
import { scratchDir } from '../scratch.js';

let c: SimCluster | undefined;
let reg: RegistrySim | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  await reg?.stop();
  c = reg = undefined;
});

const dir = scratchDir('preflight-e2e-');

async function setup(over: Partial<RegistrySimOptions> = {}) {
  const cluster = (c = await startCluster());
  const registry = (reg = await RegistrySim.start({
    username: NEW_CREDENTIAL.username,
    password: NEW_CREDENTIAL.password,
    repositories: { 'acme/app': ['1.4.2'] },
    ...over,
  }));
  const caFile = join(dir, `ca-${registry.host.replace(':', '-')}.pem`);
  writeFileSync(caFile, registry.caPem);
  return { cluster, registry, caFile };
}

/** The auth patch for the registry twin's host (`127.0.0.1:PORT`: containerd keys may carry a port). */
function patchFor(host: string, password: string): string {
  const path = join(dir, `auth-${host.replace(':', '-')}-${password}.yaml`);
  writeFileSync(
    path,
    [
      'apiVersion: v1alpha1',
      'kind: RegistryAuthConfig',
      `name: "${host}"`,
      `username: ${NEW_CREDENTIAL.username}`,
      `password: ${password}`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  return path;
}

/** An auth patch carrying an identity token for the host (the OAuth2 refresh-token flow). */
function identityPatchFor(host: string, token: string): string {
  const path = join(dir, `auth-${host.replace(':', '-')}-identity.yaml`);
  writeFileSync(path, ['apiVersion: v1alpha1', 'kind: RegistryAuthConfig', `name: "${host}"`, `identityToken: ${token}`, ''].join('\n'), {
    mode: 0o600,
  });
  return path;
}

function preflightRun(
  cluster: SimCluster,
  registry: RegistrySim,
  caFile: string,
  inputs: Record<string, string> = {},
  env: Record<string, string> = {},
): Promise<ActionRun> {
  const extra = { env: { ...cluster.env(), ...TEST_KNOBS, ...env } };
  return act(
    cluster,
    {
      'auth-patch': patchFor(registry.host, NEW_CREDENTIAL.password),
      registry: registry.host,
      nodes: 'worker-1',
      preflight: 'true',
      'preflight-image': `${registry.host}/acme/app:1.4.2`,
      'registry-ca-file': caFile,
      ...inputs,
    },
    extra,
  );
}

/** Nothing was mutated: no Lease, no write to the apiserver, no call to the Talos API, no Talos mutation, no claim on the node. */
function assertUntouched(cluster: SimCluster): void {
  expect(cluster.kube.lease('kube-system', 'registry-auth-rollout')).toBeUndefined();
  // read only: the check runs once the first listing selected a node to roll, before the Lease and before Talos is opened
  expect(cluster.kube.mutatingRequests()).toEqual([]);
  expect(cluster.talos.apiCalls).toEqual([]);
  expect(cluster.talos.mutatingCommands()).toEqual([]);
  expect(ann(cluster, 'worker-1')[A.owner]).toBeUndefined();
}

describe('e2e: pre-flight credential check', () => {
  it('the registry takes the new credential: the roll proceeds, the summary shows the check', async () => {
    const { cluster, registry, caFile } = await setup();
    const run = await preflightRun(cluster, registry, caFile);
    expect(run.exitCode, run.stdout).toBe(0);
    const line = `pre-flight: ${registry.host} token flow + manifest HEAD of acme/app:1.4.2: ok`;
    expect(run.stdout).toContain(line);
    expect(run.summary).toContain(`${registry.host} token flow + manifest HEAD of acme/app:1.4.2: ok`);
    expect(byName(run)['worker-1'].outcome).toMatch(/rebooted|reboot-skipped/);
    assertNoSecret(run, NEW_CREDENTIAL.password);
    // the token flow, in its order, once
    expect(registry.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v2/', 'GET /token', 'HEAD /v2/acme/app/manifests/1.4.2']);
  });

  it('the old credential: the run stops before any Lease, claim or patch; the error names host and answer, never the secret', async () => {
    const { cluster, registry, caFile } = await setup();
    const run = await preflightRun(cluster, registry, caFile, { 'auth-patch': patchFor(registry.host, OLD_CREDENTIAL.password) });
    expect(run.exitCode).toBe(1);
    assertUntouched(cluster);
    const failure = run.annotations.find((a) => a.kind === 'error')?.message ?? '';
    expect(failure).toContain(`pre-flight: ${registry.host} refused the new credential`);
    expect(failure).toContain(
      `asked GET https://${registry.host}/token?service=registry-sim&scope=repository%3Aacme%2Fapp%3Apull with the new credential`,
    );
    expect(failure).toContain('the registry answered 401 Unauthorized: UNAUTHORIZED authentication required');
    expect(run.summary).toContain('stopped by the pre-flight check');
    expect(run.summary).toContain('No node was claimed');
    expect(run.outputs.result).toBe('failed');
    const secret = OLD_CREDENTIAL.password;
    const b64 = Buffer.from(`${NEW_CREDENTIAL.username}:${secret}`).toString('base64');
    for (const text of [run.stdout.replace(/^::add-mask::.*$/gm, ''), run.stderr, run.summary, JSON.stringify(run.outputs)]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(b64);
    }
  });

  it('an image the registry does not have: refused (404), nothing touched', async () => {
    const { cluster, registry, caFile } = await setup();
    const run = await preflightRun(cluster, registry, caFile, { 'preflight-image': `${registry.host}/acme/app:9.9.9` });
    expect(run.exitCode).toBe(1);
    assertUntouched(cluster);
    expect(run.stdout).toMatch(
      /refused the new credential: asked HEAD https:\/\/127\.0\.0\.1:\d+\/v2\/acme\/app\/manifests\/9\.9\.9 .*answered 404 Not Found/,
    );
  });

  it.each([
    [
      'an unknown reference format',
      { 'preflight-image': 'https://ghcr.io/Acme/App' },
      /input "preflight-image": "https:\/\/ghcr.io\/Acme\/App" is not an image reference/,
    ],
    [
      'an image on a host without a credential',
      { 'preflight-image': 'quay.io/acme/app:1' },
      /input "preflight-image": "quay.io\/acme\/app:1" is on quay.io, a host the auth patch carries no credential for/,
    ],
  ])('%s: an input error, before any request', async (_what, inputs, message) => {
    const { cluster, registry, caFile } = await setup();
    const run = await preflightRun(cluster, registry, caFile, inputs);
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toMatch(message);
    assertUntouched(cluster);
    // the inputs are read before the cluster is
    expect(cluster.kube.requests).toEqual([]);
    expect(registry.requests).toEqual([]);
  });

  // What only a registry request needs is read when one is about to be made (a converged run never
  // reads it: __tests__/e2e/noop.test.ts): still before anything is mutated, after the node listing.
  it.each([
    [
      'a socks5h:// proxy in HTTPS_PROXY',
      {},
      { HTTPS_PROXY: 'socks5h://user:proxy-pass@proxy.corp:1080' },
      /input "HTTPS_PROXY": the proxy's scheme socks5h: is not http, https or socks5/,
    ],
    [
      'an unreadable registry-ca-file',
      { 'registry-ca-file': '/nonexistent/ca.pem' },
      {},
      /input "registry-ca-file": cannot read "\/nonexistent\/ca.pem" \(ENOENT\)/,
    ],
  ])(
    '%s on a run with a node to roll: an input error naming it, no registry asked, nothing mutated',
    async (_what, inputs, env, message) => {
      const { cluster, registry, caFile } = await setup();
      const run = await preflightRun(cluster, registry, caFile, inputs, env);
      expect(run.exitCode, run.stdout).toBe(1);
      expect(run.outputs.result).toBe('failed');
      expect(run.annotations.find((a) => a.kind === 'error')?.message ?? '').toMatch(message);
      expect(registry.requests).toEqual([]);
      assertUntouched(cluster);
      // never the proxy URL (it may carry a password)
      for (const text of [run.stdout, run.stderr, run.summary, JSON.stringify(run.outputs)]) expect(text).not.toContain('proxy-pass');
    },
  );

  it('an unreachable registry (a closed port): a clear error naming the input that turns the check off', async () => {
    const { cluster, caFile } = await setup();
    const port = await closedPort();
    const host = `127.0.0.1:${port}`;
    const run = await act(cluster, {
      'auth-patch': patchFor(host, NEW_CREDENTIAL.password),
      registry: host,
      nodes: 'worker-1',
      preflight: 'true',
      'registry-ca-file': caFile,
    });
    expect(run.exitCode).toBe(1);
    assertUntouched(cluster);
    expect(run.stdout).toContain(`pre-flight: ${host} could not be reached: asked GET https://${host}/v2/; got connect ECONNREFUSED`);
    expect(run.stdout).toContain('set preflight: false to skip the check');
  });

  it("behind the runner's egress proxy: every request reaches the registry through HTTPS_PROXY's CONNECT tunnels, NODE_EXTRA_CA_CERTS kept beside registry-ca-file", async () => {
    const { cluster, registry } = await setup();
    const proxy = await startConnectProxy();
    try {
      // the registry's CA only in the runner's NODE_EXTRA_CA_CERTS; registry-ca-file names another CA
      const extraCa = join(dir, `extra-${registry.host.replace(':', '-')}.pem`);
      writeFileSync(extraCa, registry.caPem);
      const otherCa = join(dir, 'other-ca.pem');
      writeFileSync(otherCa, clusterCerts('talos-sim').ca.crt);
      const run = await preflightRun(
        cluster,
        registry,
        otherCa,
        { mode: 'plan' },
        { HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: extraCa },
      );
      expect(run.exitCode, run.stdout).toBe(0);
      expect(run.stdout).toContain(`pre-flight: ${registry.host} token flow + manifest HEAD of acme/app:1.4.2: ok`);
      expect(registry.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        'GET /v2/',
        'GET /token',
        'HEAD /v2/acme/app/manifests/1.4.2',
      ]);
      expect(proxy.connects.filter((c) => c === registry.host).length).toBeGreaterThan(0);
      // undici 6's EnvHttpProxyAgent printed an experimental warning into the job's log; 7's is stable
      expect(run.stderr).not.toMatch(/UNDICI-|ExperimentalWarning/);
      // each request came from one of the proxy's tunnels, none straight from the bundle
      expect(registry.requests.filter((r) => !proxy.tunnelPorts.has(r.peerPort))).toEqual([]);
    } finally {
      await proxy.stop();
    }
  });

  it('a token endpoint that redirects to plain http on another port: withheld with the credential attached, nothing reaches it, nothing touched', async () => {
    // a listener that only counts: the redirect's target, which must never see the Basic credential
    const seen: Array<{ authorization: boolean }> = [];
    const sink = http.createServer((req, res) => {
      seen.push({ authorization: req.headers.authorization !== undefined });
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    try {
      const port = (sink.address() as AddressInfo).port;
      const { cluster, registry, caFile } = await setup({ tokenRedirect: `http://127.0.0.1:${port}/token` });
      const run = await preflightRun(cluster, registry, caFile);
      expect(run.exitCode, run.stdout).toBe(1);
      expect(run.stdout).toContain(
        `refused to send the new credential: asked GET https://${registry.host}/token?service=registry-sim&scope=repository%3Aacme%2Fapp%3Apull with the new credential; not sent: the 302 redirect from https://${registry.host} to http://127.0.0.1:${port}/token is plain http: the credential would travel in clear text`,
      );
      expect(seen).toEqual([]);
      expect(registry.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v2/', 'GET /token']);
      assertNoSecret(run, NEW_CREDENTIAL.password);
      assertUntouched(cluster);
    } finally {
      await new Promise<void>((resolve) => sink.close(() => resolve()));
    }
  });

  describe('a challenge naming a plain-http token realm (a TLS-terminating proxy in front of the registry, no X-Forwarded-Proto)', () => {
    it.each([
      ['a username and password (the GET with Basic auth)', {}],
      ['an identity token (the OAuth2 refresh-token POST)', { identityToken: 'new-identity-token-0f9e' }],
    ])('%s: refused, the realm asked nothing, nothing touched', async (_what, cred: { identityToken?: string }) => {
      const { cluster, registry, caFile } = await setup({ plainHttp: { realmOverHttp: true }, ...cred });
      const realm = `http://${registry.httpHost}/token`;
      const patch = cred.identityToken
        ? identityPatchFor(registry.host, cred.identityToken)
        : patchFor(registry.host, NEW_CREDENTIAL.password);
      const run = await preflightRun(cluster, registry, caFile, { 'auth-patch': patch });
      expect(run.exitCode, run.stdout).toBe(1);
      expect(run.outputs.result).toBe('failed');
      const failure = run.annotations.find((a) => a.kind === 'error')?.message ?? '';
      expect(failure).toContain(`pre-flight: ${registry.host} refused to send the new credential`);
      expect(failure).toContain(`the token realm ${realm} is plain http`);
      // the fix: the proxy's X-Forwarded-Proto (or an https realm), and why preflight: false would not help
      expect(failure).toContain('X-Forwarded-Proto: https');
      expect(run.summary).toContain('stopped by the pre-flight check');
      // nothing reached the plain-http port: not the credential, not any request at all
      expect(registry.requests.filter((r) => r.scheme === 'http')).toEqual([]);
      expect(registry.requests.filter((r) => r.authorized || r.refreshToken)).toEqual([]);
      expect(registry.requests.map((r) => `${r.scheme} ${r.method} ${r.path}`)).toEqual(['https GET /v2/']);
      assertNoSecret(run, cred.identityToken ?? NEW_CREDENTIAL.password);
      assertUntouched(cluster);
    });

    it('a registry the user configured as plain http (registry-plain-http): its own http realm is asked, the check passes', async () => {
      const { cluster, registry } = await setup({ plainHttp: {} });
      const host = registry.httpHost!;
      const run = await act(cluster, {
        'auth-patch': patchFor(host, NEW_CREDENTIAL.password),
        registry: host,
        nodes: 'worker-1',
        mode: 'plan',
        preflight: 'true',
        'preflight-image': `${host}/acme/app:1.4.2`,
        'registry-plain-http': host,
      });
      expect(run.exitCode, run.stdout).toBe(0);
      expect(run.stdout).toContain(`pre-flight: ${host} token flow + manifest HEAD of acme/app:1.4.2: ok`);
      expect(registry.requests.map((r) => `${r.scheme} ${r.method} ${r.path}`)).toEqual([
        'http GET /v2/',
        'http GET /token',
        'http HEAD /v2/acme/app/manifests/1.4.2',
      ]);
    });
  });

  it('preflight: false asks the registry nothing', async () => {
    const { cluster, registry, caFile } = await setup();
    const run = await preflightRun(cluster, registry, caFile, { preflight: 'false', mode: 'plan' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(registry.requests).toEqual([]);
    expect(run.summary).toContain('off (preflight: false)');
  });

  it('without preflight-image or verify-image: the login alone, and the summary says it proves less than a pull', async () => {
    const { cluster, registry, caFile } = await setup();
    const run = await preflightRun(cluster, registry, caFile, { 'preflight-image': '', mode: 'plan' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.summary).toContain('a login proves less than a pull');
    expect(registry.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v2/', 'GET /token']);
  });
});

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
