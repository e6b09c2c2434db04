// The Kubectl adapter's one-command fence read (`kubectl get node/N lease/L -n NS -o json`) through the
// real kubectl against KubeSim: kubectl GETs each object on its own, prints those it got as one List,
// and reports each failure on a stderr line of its own with exit code 1. The node half must throw as
// getNode does; the Lease half must never throw (src/pipeline/lease.ts decides what an unproven read means).
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Kubectl } from '../../src/adapters/kube/kubectl.js';
import { Runner } from '../../src/adapters/exec.js';
import { ToolError } from '../../src/core/errors.js';
import type { JsonPatchOp } from '../../src/core/model/patch.js';
import { APISERVER_SHUTTING_DOWN, ETCD_REQUEST_TIMEOUT } from '../../sim/kube/faults.js';
import { KubeSim } from '../../sim/kube/index.js';
import { findKubectl, kubectl } from './helpers.js';

const NS = 'kube-system';
const LEASE = 'registry-auth-rollout';
let sim: KubeSim;
let kube: Kubectl;

beforeAll(() => {
  findKubectl();
});

beforeEach(async () => {
  sim = await KubeSim.start({ heartbeatMs: 60_000 });
  sim.addNode({ name: 'w-1', ip: '10.0.0.11', role: 'worker' });
  kube = new Kubectl({ runner: new Runner(), kubeconfig: sim.kubeconfigPath });
});

afterEach(async () => {
  await sim.stop();
});

async function createLease(holder: string): Promise<void> {
  const spec = { holderIdentity: holder, leaseDurationSeconds: 120, renewTime: '2026-12-01T10:00:00.000000Z' };
  await kube.createLease(NS, LEASE, spec);
}

describe('Kubectl.getNodeAndLease', () => {
  it('reads both objects in one process: the node as getNode parses it, the Lease as getLease does', async () => {
    await createLease('run-42');
    const runner = new Runner();
    const one = new Kubectl({ runner, kubeconfig: sim.kubeconfigPath });
    const { node, lease } = await one.getNodeAndLease('w-1', NS, LEASE);
    expect(runner.processCount).toBe(1);
    expect(node).toEqual(await kube.getNode('w-1'));
    expect(lease).toEqual({ ok: true, lease: await kube.getLease(NS, LEASE) });
    expect(lease.ok && lease.lease?.holderIdentity).toBe('run-42');
    const objects = [`/api/v1/nodes/w-1`, `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/${LEASE}`];
    const gets = sim.requests.filter((q) => q.method === 'GET' && objects.includes(q.path)).map((q) => q.path);
    expect(gets).toEqual([...objects, ...objects]); // the combined read, then getNode and getLease
  });

  it('a Lease that does not exist is read as absent, the node still answers (kubectl exits 1)', async () => {
    const raw = await kubectl(sim, ['get', 'node/w-1', `lease/${LEASE}`, '-n', NS, '-o', 'json']);
    expect(raw.code).toBe(1);
    expect(raw.stderr.trim()).toBe(`Error from server (NotFound): leases.coordination.k8s.io "${LEASE}" not found`);
    const { node, lease } = await kube.getNodeAndLease('w-1', NS, LEASE);
    expect(node.name).toBe('w-1');
    expect(lease).toEqual({ ok: true, lease: undefined });
  });

  it('a Lease that cannot be read is reported, not thrown; the node still answers', async () => {
    await createLease('run-42');
    sim.failNext({ path: new RegExp(`/leases/${LEASE}$`) }, { status: 500, message: 'boom' });
    const { node, lease } = await kube.getNodeAndLease('w-1', NS, LEASE);
    expect(node.name).toBe('w-1');
    expect(lease).toEqual({ ok: false, error: 'Error from server (InternalError): Internal error occurred: boom' });
  });

  it('a node that does not exist throws not-found, classified from the node line alone', async () => {
    await createLease('run-42');
    const e = await kube.getNodeAndLease('nope', NS, LEASE).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ToolError);
    expect((e as ToolError).kind).toBe('not-found');
    expect((e as ToolError).stderr).toContain('nodes "nope" not found');
  });

  it('a node read that fails on the server throws with its own class even when the Lease is missing too', async () => {
    sim.failNext({ path: /^\/api\/v1\/nodes\/w-1$/ }, { status: 500, message: 'boom' });
    const e = await kube.getNodeAndLease('w-1', NS, LEASE).catch((x: unknown) => x);
    expect((e as ToolError).kind).toBe('server');
    expect((e as ToolError).stderr).not.toContain('leases');
  });

  it('a connection dropped on the node read throws transport', async () => {
    await createLease('run-42');
    // client-go retries a GET whose connection broke; one that keeps breaking surfaces
    sim.failNext({ path: /^\/api\/v1\/nodes\/w-1$/, count: 20 }, { drop: true });
    const e = await kube.getNodeAndLease('w-1', NS, LEASE).catch((x: unknown) => x);
    expect((e as ToolError).kind).toBe('transport');
  });
});

// What a Lease update meets while etcd or the apiserver is away, as the real kubectl prints it, and
// what the adapter makes of it: a `server` failure, which the one writer tries again (src/rules/lostWrite.ts).
describe('a Lease update answered by a passing server failure', () => {
  const LEASE_PATH = new RegExp(`^/apis/coordination\\.k8s\\.io/v1/namespaces/${NS}/leases/${LEASE}$`);
  const renew: JsonPatchOp[] = [{ op: 'add', path: '/spec/renewTime', value: '2026-12-01T10:01:00.000000Z' }];

  it("etcd's timeout: a 500 Status without a reason, printed as `Error from server: etcdserver: request timed out`, classified server", async () => {
    await createLease('run-42');
    sim.failNext({ method: 'PATCH', path: LEASE_PATH }, ETCD_REQUEST_TIMEOUT);
    const raw = await kubectl(sim, ['patch', 'lease', LEASE, '-n', NS, '--type=json', '-p', JSON.stringify(renew)]);
    expect(raw.code).toBe(1);
    expect(raw.stderr.trim()).toBe('Error from server: etcdserver: request timed out');
    sim.failNext({ method: 'PATCH', path: LEASE_PATH }, ETCD_REQUEST_TIMEOUT);
    const e = await kube.patchLease(NS, LEASE, renew).catch((x: unknown) => x);
    expect((e as ToolError).kind).toBe('server');
    expect((e as ToolError).message).toContain('etcdserver: request timed out');
  });

  it('an apiserver shutting down: its 503 carries Retry-After, so kubectl tries again by itself; without it (its retries spent) it surfaces as ServiceUnavailable, classified server', async () => {
    await createLease('run-42');
    sim.failNext({ method: 'PATCH', path: LEASE_PATH }, APISERVER_SHUTTING_DOWN);
    await expect(kube.patchLease(NS, LEASE, renew)).resolves.toMatchObject({ holderIdentity: 'run-42' });
    expect(sim.requests.filter((q) => q.method === 'PATCH').map((q) => q.status)).toEqual([503, 200]);

    const { retryAfterSeconds: _, ...spent } = APISERVER_SHUTTING_DOWN as { retryAfterSeconds?: number };
    sim.failNext({ method: 'PATCH', path: LEASE_PATH }, spent as typeof APISERVER_SHUTTING_DOWN);
    const raw = await kubectl(sim, ['patch', 'lease', LEASE, '-n', NS, '--type=json', '-p', JSON.stringify(renew)]);
    expect(raw.stderr.trim()).toBe('Error from server (ServiceUnavailable): apiserver is shutting down');
    sim.failNext({ method: 'PATCH', path: LEASE_PATH }, spent as typeof APISERVER_SHUTTING_DOWN);
    const e = await kube.patchLease(NS, LEASE, renew).catch((x: unknown) => x);
    expect((e as ToolError).kind).toBe('server');
  });
});
