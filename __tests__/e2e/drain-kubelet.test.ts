// End to end: the node lifecycle controller's taints during a drain are no other actor.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { A, act, byName, node, requireKubectl, startCluster } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

describe('e2e: the node lifecycle controller during a drain is no other actor', () => {
  it('a network blip of the kubelet while a PDB holds the drain: unreachable comes and goes, the drain goes on, the node is rolled', async () => {
    const cluster = (c = await startCluster());
    cluster.kube.setPdbAllowed('default', 'web', 0);
    const unreachable = () => (node(cluster, 'worker-1').spec.taints ?? []).some((t: any) => t.key === 'node.kubernetes.io/unreachable');
    // On the first refused eviction (the drain is running and will retry in 5 s) the kubelet loses the
    // apiserver; once the lifecycle controller has tainted the node it comes back, the controller
    // removes the taints, and the PDB then allows the eviction.
    const seen = { taintedAt: 0, clearedAt: 0 };
    let attempts = 0;
    cluster.kube.beforeWrite({ method: 'POST', path: /\/pods\/web-1\/eviction$/ }, () => {
      if (++attempts === 1) cluster.kube.kubeletDisconnect('worker-1');
    });
    const t = setInterval(() => {
      if (!seen.taintedAt && unreachable()) {
        seen.taintedAt = Date.now();
        setTimeout(() => cluster.kube.kubeletReconnect('worker-1'), 1500);
      } else if (seen.taintedAt && !seen.clearedAt && !unreachable()) {
        seen.clearedAt = Date.now();
        setTimeout(() => cluster.kube.setPdbAllowed('default', 'web', 1), 500);
      }
    }, 50);
    const run = await act(cluster, { nodes: 'worker-1' }); // drain-timeout 30s
    clearInterval(t);
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run)['worker-1'];
    expect(d.outcome, d.reason).toBe('rebooted');
    // the taints came and went while the drain ran (from the twin's own request log)
    const drains = cluster.kube.requests.filter((r) => r.command === 'kubectl drain');
    expect(seen.taintedAt).toBeGreaterThan(drains[0].at);
    expect(seen.clearedAt).toBeGreaterThan(seen.taintedAt);
    expect(drains.at(-1)!.at).toBeGreaterThan(seen.clearedAt);
    // the held pod was evicted once the PDB allowed it, and the node came back schedulable and verified
    expect(cluster.kube.requests.filter((r) => r.path.endsWith('/pods/web-1/eviction') && r.status === 201)).toHaveLength(1);
    expect(node(cluster, 'worker-1').spec.unschedulable).toBeFalsy();
    expect(node(cluster, 'worker-1').metadata.annotations?.[A.verified]).toBeDefined();
  });
});
