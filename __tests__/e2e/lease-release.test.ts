// End to end: a release of the run Lease that meets a passing server failure is tried again (src/rules/lostWrite.ts)
// rather than left held for good: in the main step (etcd's 500 "etcdserver: request timed out", then it
// goes through) and in the post step (a 503 "apiserver is shutting down", then it goes through). The
// bundle (dist/index.js, dist/cleanup.js) through the real kubectl on the twin, whose faults answer with
// the Status bodies the real apiserver sends (sim/kube/faults.ts).
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { APISERVER_SHUTTING_DOWN, ETCD_REQUEST_TIMEOUT } from '../../sim/kube/faults.js';
import { A, act, ann, postStep, REVISION, requireKubectl, startCluster, verifiedRev } from './helpers.js';

const LEASE_NS = 'kube-system';
const LEASE_NAME = 'registry-auth-rollout';
const LEASE_PATH = new RegExp(`^/apis/coordination\\.k8s\\.io/v1/namespaces/${LEASE_NS}/leases/${LEASE_NAME}$`);

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

const leaseHolder = (cluster: SimCluster): string => cluster.kube.lease(LEASE_NS, LEASE_NAME)?.spec?.holderIdentity ?? '';
const leasePatches = (cluster: SimCluster, since: number) =>
  cluster.kube.requests.slice(since).filter((r) => r.method === 'PATCH' && LEASE_PATH.test(r.path));

/** When `name`'s own release is about to be applied (its phase is `mutating`), the next Lease write gets `fault`. */
function faultTheLeaseReleaseAfter(cluster: SimCluster, name: string, fault: Parameters<SimCluster['kube']['failNext']>[1]) {
  let armed = false;
  cluster.kube.beforeWrite({ method: 'PATCH', path: new RegExp(`^/api/v1/nodes/${name}$`) }, () => {
    if (armed || ann(cluster, name)[A.phase] !== 'mutating') return;
    armed = true;
    cluster.kube.failNext({ method: 'PATCH', path: LEASE_PATH }, fault);
  });
}

describe('e2e: the run Lease released through passing server failures', () => {
  it('main step: its release answered 500 (etcd timed out), tried again, released; post step: a 503, tried again, released', async () => {
    c = await startCluster({ defaultNodes: false });
    c.addNode({ name: 'worker-1', role: 'worker', version: '1.14' });
    c.addNode({ name: 'worker-2', role: 'worker', version: '1.14' });

    // 1. the main step's release meets etcd's timeout once
    faultTheLeaseReleaseAfter(c, 'worker-1', ETCD_REQUEST_TIMEOUT);
    let since = c.kube.requests.length;
    const first = await act(c, { nodes: 'worker-1' });
    expect(first.exitCode, first.stdout).toBe(0);
    expect(first.outputs.result).toBe('processed');
    expect(verifiedRev(ann(c, 'worker-1'))).toBe(REVISION);
    expect(leaseHolder(c)).toBe('');
    expect(first.stdout).toMatch(/etcdserver: request timed out\); still ours, trying again in/);
    const tries = leasePatches(c, since).slice(-2);
    expect(tries.map((r) => r.status)).toEqual([500, 200]);
    expect(first.state.lease ?? '').toBe('');

    // 2. the main step's release refused outright (403): the post step releases it, through a 503
    faultTheLeaseReleaseAfter(c, 'worker-2', { status: 403, message: `leases.coordination.k8s.io "${LEASE_NAME}" is forbidden` });
    const second = await act(c, { nodes: 'worker-2' });
    expect(second.exitCode).toBe(1);
    expect(leaseHolder(c)).not.toBe('');
    expect(JSON.parse(second.state.lease)).toMatchObject({ namespace: LEASE_NS, name: LEASE_NAME });
    // a 503 whose Retry-After client-go has already spent its own retries on
    const { retryAfterSeconds: _spent, ...unavailable } = APISERVER_SHUTTING_DOWN as typeof APISERVER_SHUTTING_DOWN & {
      retryAfterSeconds?: number;
    };
    c.kube.failNext({ method: 'PATCH', path: LEASE_PATH }, unavailable);
    since = c.kube.requests.length;
    const post = await postStep(c, second);
    expect(post.exitCode, post.stdout).toBe(0);
    expect(post.stdout).toMatch(/apiserver is shutting down\); still ours, trying again in/);
    expect(post.stdout).toMatch(/released the run Lease kube-system\/registry-auth-rollout/);
    expect(leasePatches(c, since).map((r) => r.status)).toEqual([503, 200]);
    expect(leaseHolder(c)).toBe('');
  });
});
