// End to end: a merge-queue run with nothing to roll, and the selections that select nothing. Every
// node of the twin already carries the verified revision; the registry twin is down (every request
// answered 503, and counted). A run with nothing to roll needs only the node list: no registry request,
// no Lease read or write (another run may hold it), no node write, no Event, no Talos call, and a post
// step that does nothing. A selection that matches no node, or a kube-context the kubeconfig lacks, is
// an input error naming the input, with nothing written and no registry asked. One cluster for the
// file: no run here writes (the only write is a test's own: another run's Lease, removed after it).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEW_CREDENTIAL, type SimCluster } from '../../sim/cluster.js';
import { RegistrySim } from '../../sim/registry/server.js';
import type { ActionRun } from '../../runner/runAction.js';
import { verifiedMarker, act, postStep, REVISION, requireKubectl, startCluster, TEST_KNOBS } from './helpers.js';
import { scratchDir } from '../scratch.js';

const NODES = ['cp-1', 'worker-1', 'worker-2'];
const LEASE_NS = 'kube-system';
const LEASE_NAME = 'registry-auth-rollout';
const LEASE_PATH = `/apis/coordination.k8s.io/v1/namespaces/${LEASE_NS}/leases`;
/** kubectl's discovery of the API (cached per kubeconfig between runs, so present or not) */
const DISCOVERY = /^\/(version|api(\/v1)?|apis(\/[^/]+\/[^/]+)?)$/;
let c: SimCluster;
let reg: RegistrySim;
let authPatch: string;
let caFile: string;

beforeAll(async () => {
  requireKubectl();
  // no kubelet heartbeat within a test: a node's resourceVersion moves only if someone writes it
  c = await startCluster({ defaultNodes: false, heartbeatMs: 3_600_000 });
  reg = await RegistrySim.start({
    username: NEW_CREDENTIAL.username,
    password: NEW_CREDENTIAL.password,
    repositories: { 'acme/app': ['1.4.2'] },
  });
  reg.outage = true;
  for (const name of NODES) {
    c.addNode({
      name,
      role: name.startsWith('cp-') ? 'control-plane' : 'worker',
      current: true,
      labels: { pool: name.startsWith('cp-') ? 'control' : 'general' },
      annotations: verifiedMarker(reg.host),
    });
  }
  const dir = scratchDir('noop-e2e-');
  caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, reg.caPem);
  authPatch = join(dir, 'auth.yaml');
  writeFileSync(
    authPatch,
    [
      'apiVersion: v1alpha1',
      'kind: RegistryAuthConfig',
      `name: "${reg.host}"`,
      `username: ${NEW_CREDENTIAL.username}`,
      `password: ${NEW_CREDENTIAL.password}`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
});
afterAll(async () => {
  await c?.stop();
  await reg?.stop();
});

/** A merge-queue run: apply, the pre-flight check on (against the registry twin, which is down). */
function queueRun(inputs: Record<string, string> = {}, env: Record<string, string> = {}): Promise<ActionRun> {
  return act(
    c,
    {
      'auth-patch': authPatch,
      registry: reg.host,
      preflight: 'true',
      'preflight-image': `${reg.host}/acme/app:1.4.2`,
      'registry-ca-file': caFile,
      ...inputs,
    },
    { env: { ...c.env(), ...TEST_KNOBS, ...env } },
  );
}

/** What the twins saw of the cluster and the registry, to compare before and after a run. */
function seen() {
  return {
    nodes: NODES.map((n) => {
      const o = c.kube.node(n);
      return {
        name: n,
        resourceVersion: o.metadata.resourceVersion,
        annotations: o.metadata.annotations,
        unschedulable: !!o.spec.unschedulable,
      };
    }),
    writes: c.kube.mutatingRequests().length,
    lease: c.kube.lease(LEASE_NS, LEASE_NAME) as unknown,
    registryRequests: reg.count(),
    talosApiCalls: c.talos.apiCalls.length,
    talosMutations: c.talos.mutatingCommands().length,
  };
}

/** Nothing was written to the cluster, no Talos call and no registry request was made since `before`. */
function assertNothingWritten(before: ReturnType<typeof seen>): void {
  expect(seen()).toEqual(before);
  // no write but the test's own (another run's Lease, placed through the API)
  expect(c.kube.mutatingRequests().filter((r) => !r.path.startsWith(LEASE_PATH))).toEqual([]);
  expect(c.kube.requests.filter((r) => r.path.includes('/events'))).toEqual([]);
  expect(reg.requests).toEqual([]);
  expect(c.talos.apiCalls).toEqual([]);
}

function failure(run: ActionRun): string {
  return run.annotations.find((a) => a.kind === 'error')?.message ?? '';
}

describe('e2e: a run with nothing to roll, and selections that select nothing', () => {
  it('every node verified, the registry down: clean, exit 0, only the cluster read, and a post step that does nothing', async () => {
    const before = seen();
    const readsBefore = c.kube.requests.length;
    // A merge-queue job configured as the first user's: the storage gate on (the default), a gate of its own over a
    // kind this cluster does not even serve, and a maintenance window that is closed now. With nothing to roll none
    // of them is consulted: no discovery, no gate listing, no window stop (the run is clean, not partial).
    const closedNow = new Date(Date.now() + 12 * 3600_000);
    const run = await queueRun({
      'health-gates': '- {name: db-ready, kind: DbCluster, group: example.com, expression: "self.status.ready"}',
      'maintenance-windows': `- {start: '0 ${closedNow.getUTCHours()} * * *', duration: 1h}`,
    });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('clean');
    expect(run.stdout).toContain(`every selected node already verified revision ${REVISION}: nothing to do`);
    expect(run.stdout).not.toContain('pre-flight:');
    assertNothingWritten(before);
    // only reads: beside kubectl's discovery, the node list, and not even the Lease (only a run with a
    // node to roll reads it)
    const requests = c.kube.requests.slice(readsBefore);
    expect(requests.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(requests.map((r) => r.path).filter((p) => !DISCOVERY.test(p))).toEqual(['/api/v1/nodes']);
    // nothing held, nothing for the post step to do: it sends no request at all
    const readsAfterMain = c.kube.requests.length;
    const post = await postStep(c, run);
    expect(post.exitCode, post.stdout).toBe(0);
    expect(c.kube.requests.length).toBe(readsAfterMain);
    assertNothingWritten(before);
  });

  it("the runner's proxy is a socks5h:// one and registry-ca-file is missing: a converged run reads neither, clean", async () => {
    // A self-hosted runner's egress settings serve only a registry request; a run with nothing to roll makes
    // none, so they cannot fail it (the same settings on a run with work: __tests__/e2e/preflight.test.ts).
    const before = seen();
    const run = await queueRun(
      { 'registry-ca-file': '/nonexistent/registry-ca.pem' },
      { HTTPS_PROXY: 'socks5h://proxy.corp:1080', HTTP_PROXY: 'socks5h://proxy.corp:1080' },
    );
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('clean');
    expect(run.annotations.filter((a) => a.kind === 'error' || a.kind === 'warning')).toEqual([]);
    assertNothingWritten(before);
  });

  it('another run holds the Lease (between its nodes, none claimed): a converged run does not depend on it, clean, exit 0, nothing written', async () => {
    // Why the listing may be trusted while that run is mid-roll: every node it holds carries its claim,
    // which fails this run instead (docs/preflight.md "Another run holding the Lease").
    const holder = 'acme/platform/runs/4242/attempts/1/0c0ffee0';
    const renewed = `${new Date().toISOString().slice(0, 23)}000Z`;
    const res = await fetch(`${c.kube.url}${LEASE_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: LEASE_NAME, namespace: LEASE_NS },
        spec: { holderIdentity: holder, leaseDurationSeconds: 120, acquireTime: renewed, renewTime: renewed, leaseTransitions: 1 },
      }),
    });
    expect(res.status).toBe(201);
    try {
      const before = seen();
      const run = await queueRun();
      expect(run.exitCode, run.stdout).toBe(0);
      expect(run.outputs.result).toBe('clean');
      expect(run.outputs['old-credential-revocable']).toBe('true');
      expect(run.annotations.filter((a) => a.kind === 'error')).toEqual([]);
      assertNothingWritten(before);
      expect(c.kube.lease(LEASE_NS, LEASE_NAME).spec.holderIdentity).toBe(holder);
    } finally {
      const gone = await fetch(`${c.kube.url}${LEASE_PATH}/${LEASE_NAME}`, { method: 'DELETE' });
      expect(gone.status).toBe(200);
    }
  });

  it('a node-selector that matches no node: an input error naming it, nothing written, no registry asked', async () => {
    const before = seen();
    const run = await queueRun({ 'node-selector': 'pool=genral' });
    expect(run.exitCode).toBe(1);
    expect(run.outputs.result).toBe('failed');
    expect(failure(run)).toContain('input "node-selector": pool=genral matches no node of the cluster');
    assertNothingWritten(before);
  });

  it('nodes and a node-selector that exclude each other: an input error naming the selector, nothing written', async () => {
    const before = seen();
    const run = await queueRun({ nodes: 'worker-1', 'node-selector': 'pool=control' });
    expect(run.exitCode).toBe(1);
    expect(failure(run)).toContain(
      'input "node-selector": pool=control matches none of the nodes named by nodes (worker-1): together they select no node',
    );
    assertNothingWritten(before);
  });

  it('nodes naming no node of the cluster: an input error naming it, nothing written, no registry asked', async () => {
    const before = seen();
    const run = await queueRun({ nodes: 'worker-9' });
    expect(run.exitCode).toBe(1);
    expect(failure(run)).toContain('input "nodes": no such node: worker-9');
    assertNothingWritten(before);
  });

  it("a kube-context the kubeconfig does not have: an input error naming it, not kubectl's words alone", async () => {
    const before = seen();
    const run = await queueRun({ 'kube-context': 'admin@prod' });
    expect(run.exitCode).toBe(1);
    expect(failure(run)).toContain('input "kube-context": the kubeconfig has no context "admin@prod"');
    assertNothingWritten(before);
  });
});
