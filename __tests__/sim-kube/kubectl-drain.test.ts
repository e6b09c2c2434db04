// kubectl drain against KubeSim: eviction through pods/eviction, DaemonSet / mirror / emptyDir pods,
// ReplicaSet pods re-created elsewhere, and PodDisruptionBudgets that block for a while or for good.
// drain sleeps 5 s after every 429, so the PDB cases run concurrently, each on its own simulator.
import { beforeAll, describe, expect, it } from 'vitest';
import { KubeSim } from '../../sim/kube/index.js';
import { findKubectl, kubectl, kubectlJson, sleep, until } from './helpers.js';

beforeAll(() => {
  findKubectl();
});

async function cluster(): Promise<KubeSim> {
  const sim = await KubeSim.start({ heartbeatMs: 500, taintDelayMs: 50 });
  sim.addNode({ name: 'cp-1', ip: '10.0.0.1', role: 'control-plane' });
  sim.addNode({ name: 'w-1', ip: '10.0.0.11', role: 'worker' });
  sim.addNode({ name: 'w-2', ip: '10.0.0.12', role: 'worker' });
  sim.addPod({ namespace: 'kube-system', name: 'cilium-x7k2p', nodeName: 'w-1', owner: { kind: 'DaemonSet', name: 'cilium' } });
  sim.addPod({ namespace: 'kube-system', name: 'static-w-1', nodeName: 'w-1', mirror: true });
  sim.addPod({ name: 'cache-7d4-xk2p9', nodeName: 'w-1', owner: { kind: 'ReplicaSet', name: 'cache-7d4' }, emptyDir: true });
  return sim;
}

const drainArgs = (node: string, timeout: string) => [
  'drain',
  node,
  '--ignore-daemonsets',
  '--delete-emptydir-data',
  `--timeout=${timeout}`,
];

describe.concurrent('drain', () => {
  it('evicts ReplicaSet and emptyDir pods (re-created elsewhere), leaves DaemonSet and mirror pods', async () => {
    const sim = await cluster();
    try {
      sim.addPod({ name: 'web-5f6-abcde', nodeName: 'w-1', owner: { kind: 'ReplicaSet', name: 'web-5f6' }, labels: { app: 'web' } });
      const oldUid = sim.pods().find((p) => p.metadata.name === 'web-5f6-abcde').metadata.uid;
      const r = await kubectl(sim, drainArgs('w-1', '20s'));
      expect(r.code).toBe(0);
      const out = r.stdout.split('\n');
      expect(out[0]).toBe('node/w-1 cordoned');
      expect(out).toContain('evicting pod default/web-5f6-abcde');
      expect(out).toContain('evicting pod default/cache-7d4-xk2p9');
      expect(out).toContain('pod/web-5f6-abcde evicted');
      expect(out).toContain('pod/cache-7d4-xk2p9 evicted');
      expect(out).toContain('node/w-1 drained');
      expect(r.stderr).toContain('Warning: ignoring DaemonSet-managed Pods: kube-system/cilium-x7k2p');

      const drainReqs = sim.requests.filter((q) => q.command === 'kubectl drain');
      expect(
        drainReqs.some(
          (q) => q.method === 'GET' && q.path === '/apis/apps/v1/namespaces/kube-system/daemonsets/cilium' && q.status === 200,
        ),
      ).toBe(true);
      expect(
        drainReqs
          .filter((q) => q.method === 'POST')
          .map((q) => q.path)
          .sort(),
      ).toEqual(['/api/v1/namespaces/default/pods/cache-7d4-xk2p9/eviction', '/api/v1/namespaces/default/pods/web-5f6-abcde/eviction']);
      expect(drainReqs.some((q) => q.method === 'DELETE')).toBe(false);

      const pods = await kubectlJson(sim, ['get', 'pods', '-A']);
      const byNode = (n: string) =>
        pods.items
          .filter((p: any) => p.spec.nodeName === n)
          .map((p: any) => p.metadata.name)
          .sort();
      expect(byNode('w-1')).toEqual(['cilium-x7k2p', 'static-w-1']);
      const moved = pods.items.filter((p: any) => p.spec.nodeName === 'w-2');
      expect(moved.map((p: any) => p.metadata.name.replace(/-[a-z0-9]{5}$/, '')).sort()).toEqual(['cache-7d4', 'web-5f6']);
      expect(moved.every((p: any) => p.status.phase === 'Running' && p.metadata.uid !== oldUid)).toBe(true);
      const node = sim.node('w-1');
      expect(node.spec.unschedulable).toBe(true);
      await until(() => (sim.node('w-1').spec.taints ?? []).some((t: any) => t.key === 'node.kubernetes.io/unschedulable'));
    } finally {
      await sim.stop();
    }
  });

  it('waits while a PDB blocks, then succeeds once it allows', async () => {
    const sim = await cluster();
    try {
      sim.addPod({ name: 'web-5f6-abcde', nodeName: 'w-1', owner: { kind: 'ReplicaSet', name: 'web-5f6' }, labels: { app: 'web' } });
      sim.addPdb({ name: 'web-pdb', selector: { app: 'web' }, disruptionsAllowed: 0 });
      const draining = kubectl(sim, drainArgs('w-1', '30s'));
      await until(() => sim.requests.some((q) => q.path.endsWith('/web-5f6-abcde/eviction') && q.status === 429));
      await sleep(1000);
      sim.setPdbAllowed('default', 'web-pdb', 1);
      const r = await draining;
      expect(r.code).toBe(0);
      expect(r.stderr).toContain(
        `error when evicting pods/"web-5f6-abcde" -n "default" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.`,
      );
      expect(r.stdout).toContain('pod/web-5f6-abcde evicted');
      expect(r.stdout.trim().split('\n').pop()).toBe('node/w-1 drained');
      const evictions = sim.requests.filter((q) => q.path.endsWith('/web-5f6-abcde/eviction')).map((q) => q.status);
      expect(evictions).toEqual([429, 201]);
    } finally {
      await sim.stop();
    }
  });

  it('times out against a PDB that never allows: exit 1, node stays cordoned, pod stays', async () => {
    const sim = await cluster();
    try {
      sim.addPod({ name: 'web-5f6-abcde', nodeName: 'w-1', owner: { kind: 'ReplicaSet', name: 'web-5f6' }, labels: { app: 'web' } });
      sim.addPdb({ name: 'web-pdb', selector: { app: 'web' }, disruptionsAllowed: 0 });
      const r = await kubectl(sim, drainArgs('w-1', '2s'));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('global timeout reached: 2s');
      expect(r.stderr).toContain('There are pending nodes to be drained:\n w-1');
      expect(sim.node('w-1').spec.unschedulable).toBe(true);
      expect(sim.pods().find((p) => p.metadata.name === 'web-5f6-abcde')?.spec.nodeName).toBe('w-1');
      const body = sim.pdb('default', 'web-pdb');
      expect(body.status).toMatchObject({ disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 });
    } finally {
      await sim.stop();
    }
  });

  it('refuses local-storage and DaemonSet pods without the flags', async () => {
    const sim = await cluster();
    try {
      const r = await kubectl(sim, ['drain', 'w-1', '--timeout=5s']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('cannot delete Pods with local storage (use --delete-emptydir-data to override): default/cache-7d4-xk2p9');
      expect(r.stderr).toContain('cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): kube-system/cilium-x7k2p');
      expect(sim.node('w-1').spec.unschedulable).toBe(true);
      expect(sim.mutatingRequests().map((q) => q.method)).toEqual(['PATCH']);
    } finally {
      await sim.stop();
    }
  });
});
