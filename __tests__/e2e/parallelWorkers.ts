// The workers the several-at-once tests add, in zones when they ask for it.
import type { SimCluster } from '../../sim/cluster.js';

export const ZONE = 'topology.kubernetes.io/zone';
export const isCp = (n: string) => n.startsWith('cp-');

export function addWorkers(cluster: SimCluster, names: string[], zone?: (i: number) => string): void {
  names.forEach((name, i) => cluster.addNode({ name, role: 'worker', labels: zone ? { [ZONE]: zone(i) } : undefined }));
}
