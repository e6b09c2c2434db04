// The bundle reaches the cluster through its one channel (a kubectl proxy on a Unix socket,
// docs/kube-channel.md) with each auth form the twin's API server serves (sim/kube/auth.ts): a bearer
// token, the same token from an exec credential plugin, a TLS client certificate. Each rolls one node
// (reads, the claim's JSON Patch, the Lease, Events, the release): every request the action sent was
// authenticated. A kubeconfig whose token the server refuses stops the run before anything is written.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import type { KubeAuth } from '../../sim/kube/auth.js';
import { act, fromAction, requireKubectl, startCluster } from './helpers.js';

let c: SimCluster | undefined;

beforeAll(() => {
  requireKubectl();
});

afterEach(async () => {
  await c?.stop();
  c = undefined;
});

const forms: Array<[string, KubeAuth]> = [
  ['a bearer token', { kind: 'token', token: 'sim-token-4d1f' }],
  ['an exec credential plugin', { kind: 'exec', token: 'sim-token-exec-77c2' }],
  ['a client certificate', { kind: 'client-cert' }],
];

describe('e2e: each kubeconfig auth form through the channel', () => {
  it.each(forms)('%s: the roll of a node is processed, every request of the action authenticated', async (_what, auth) => {
    c = await startCluster({ kubeAuth: auth });
    const run = await act(c, { nodes: 'worker-3' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('processed');
    const ours = c.kube.requests.filter((r) => fromAction(r));
    expect(ours.filter((r) => r.method === 'PATCH' && r.path === '/api/v1/nodes/worker-3').length).toBe(3);
    expect(ours.filter((r) => r.status === 401)).toEqual([]);
    expect(c.kube.url).toMatch(/^https:/);
    if (auth.kind === 'exec') {
      // kubectl ran the plugin (and cached its credential for the proxy's life)
      const calls = readFileSync(join(c.kube.kubeconfigPath, '..', 'credential-plugin.calls'), 'utf8')
        .trim()
        .split('\n');
      expect(calls.length).toBeGreaterThanOrEqual(1);
    }
    // the token never reaches the log
    if (auth.kind !== 'client-cert') expect(run.stdout).not.toContain(auth.token);
  });

  it('a token the API server refuses: the run fails on its first read (forbidden), nothing written', async () => {
    c = await startCluster({ kubeAuth: { kind: 'token', token: 'the-right-one' } });
    const path = c.kube.kubeconfigPath;
    const text = readFileSync(path, 'utf8').replace('token: the-right-one', 'token: a-wrong-one');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path, text);
    const run = await act(c, { nodes: 'worker-3' });
    expect(run.exitCode).not.toBe(0);
    expect(run.stdout).toMatch(/forbidden, HTTP 401/);
    expect(c.kube.mutatingRequests()).toEqual([]);
  });
});
