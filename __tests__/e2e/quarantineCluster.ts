// The cluster the `undrainable: quarantine` tests roll: a PDB that never allows an eviction holds worker-2.
import type { SimCluster } from '../../sim/cluster.js';
import { PREFIX, startCluster } from './helpers.js';

export const QUARANTINED = `${PREFIX}/quarantined`;
export const WORKERS = ['worker-1', 'worker-2', 'worker-3'];

/**
 * A pod of the blocked workload that stays Pending (no node matches it): the budget counts it and waits
 * for it, so a drain it blocks is not provably stuck, and the roll drains (and times out) as it did
 * before the unsatisfiable-drain start check.
 */
export const PENDING_POD = { namespace: 'shop', nodeSelector: { 'kubernetes.io/hostname': 'worker-gone' } } as const;

/** Three workers; worker-2 runs a database pod whose PDB never allows an eviction. */
export async function blockedCluster(opts: { worker2Cordoned?: boolean } = {}): Promise<SimCluster> {
  const cluster = await startCluster({ defaultNodes: false });
  for (const w of WORKERS) cluster.addNode({ name: w, role: 'worker', cordoned: w === 'worker-2' && opts.worker2Cordoned });
  cluster.kube.addPod({
    namespace: 'shop',
    name: 'db-0',
    nodeName: 'worker-2',
    owner: { kind: 'StatefulSet', name: 'db' },
    labels: { app: 'db' },
  });
  // db-1 Pending (its node is gone): the budget waits for it, so the drain may yet finish and is not
  // refused before its claim (docs/refused-drains.md); it times out instead
  cluster.kube.addPod({ ...PENDING_POD, name: 'db-1', owner: { kind: 'StatefulSet', name: 'db' }, labels: { app: 'db' } });
  cluster.kube.addPdb({ namespace: 'shop', name: 'db', selector: { app: 'db' }, disruptionsAllowed: 0 });
  return cluster;
}

// max-unavailable 2: the quarantined worker holds one of the two, so the roll goes on with the other
export const QUARANTINE_INPUTS = { 'max-unavailable': '2', undrainable: 'quarantine', 'drain-timeout': '4s' };
