// The cluster the settle-gate tests roll, the evictions the twin logged on a node, and the hold that
// keeps a workload's replacement not Ready until the next node's gate is seen waiting for it.
import type { SimCluster } from '../../sim/cluster.js';
import type { RequestRecord } from '../../sim/kube/http.js';
import { until } from '../sim-kube/helpers.js';
import { startCluster } from './helpers.js';

/**
 * One control plane and three workers; a Deployment shop/web with a pod on worker-1 and one on
 * worker-2. Pods of it started from now on become Ready only `delay` after they started.
 */
export async function settleCluster(delay: number | 'never'): Promise<SimCluster> {
  const cl = await startCluster({ defaultNodes: false });
  cl.addNode({ name: 'cp-1', role: 'control-plane' });
  for (const n of ['worker-1', 'worker-2', 'worker-3']) cl.addNode({ name: n, role: 'worker' });
  cl.kube.addPod({ namespace: 'shop', name: 'web-a', nodeName: 'worker-1', owner: { kind: 'Deployment', name: 'web' } });
  cl.kube.addPod({ namespace: 'shop', name: 'web-b', nodeName: 'worker-2', owner: { kind: 'Deployment', name: 'web' } });
  cl.kube.setReadiness('shop', 'web', delay);
  return cl;
}

export const evictions = (cl: SimCluster, nodeName: string) => cl.kube.podEvents.filter((e) => e.type === 'evicted' && e.node === nodeName);

/**
 * The workload's pods (held not Ready by `setReadiness(…, 'never')`) pass their probe once `node`'s
 * settle gate is seen waiting: after `node`'s claim the gate has read the Deployments twice (its first
 * read found the workload short, and it polled again), then `readyNow`. However long the roll before
 * it took on a loaded runner, the gate had something to wait for. Resolves with the gate's first read,
 * or undefined when the run ended (`ended()`) before it got there; call it before the run starts.
 */
export async function readyOnceGateWaits(
  cl: SimCluster,
  node: string,
  namespace: string,
  workload: string,
  ended: () => boolean,
): Promise<RequestRecord | undefined> {
  const reads = (t: number) => cl.kube.requests.filter((r) => r.method === 'GET' && r.path === '/apis/apps/v1/deployments' && r.at >= t);
  // bounded by the run: a run that ends without reaching the gate leaves nothing to release
  const claim = await until(
    () => ended() || cl.kube.requests.find((r) => r.method === 'PATCH' && r.path === `/api/v1/nodes/${node}`),
    300_000,
    50,
  );
  if (claim === true) return undefined;
  const polled = await until(() => ended() || (reads(claim.at).length >= 2 && reads(claim.at)), 300_000, 50);
  if (polled === true) return undefined;
  cl.kube.readyNow(namespace, workload);
  return polled[0];
}
