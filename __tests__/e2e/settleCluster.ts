// The cluster the settle-gate tests roll, and the evictions the twin logged on a node.
import type { SimCluster } from '../../sim/cluster.js';
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
