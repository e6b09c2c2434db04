// End to end through the bundle: a node whose drain can never finish (a PodDisruptionBudget with
// maxUnavailable: 0 over pods that are all healthy) is refused before its claim: never written to,
// never cordoned, its row naming the budget, the pods and the fix; the roll goes on with the next node,
// and plan over the same cluster says the same. A budget that blocks only until a pod is Ready is not
// refused: the drain waits as before (docs/refused-drains.md).
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { A, act, byName, fromAction, node, requireKubectl, startCluster } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

const BLOCKING = 'PDB shop/db (maxUnavailable: 0; 2 of 2 pods healthy, allows 0 disruptions) holds 1 pod shop/db-0';

/** worker-1 runs shop/db-0, worker-3 (not rolled) shop/db-1: both Ready, and a budget that lets none go. */
async function unsatisfiableCluster(): Promise<{ cluster: SimCluster; ip: Record<string, string> }> {
  const cluster = await startCluster({ defaultNodes: false });
  const ip: Record<string, string> = {};
  for (const n of ['worker-1', 'worker-2', 'worker-3']) ip[n] = cluster.addNode({ name: n, role: 'worker' }).ip;
  const owner = { kind: 'StatefulSet', name: 'db' } as const;
  cluster.kube.addPod({ namespace: 'shop', name: 'db-0', nodeName: 'worker-1', owner, labels: { app: 'db' } });
  cluster.kube.addPod({ namespace: 'shop', name: 'db-1', nodeName: 'worker-3', owner, labels: { app: 'db' } });
  // addPdb writes spec.maxUnavailable: 0 and the controller's status over the two Ready pods
  cluster.kube.addPdb({ namespace: 'shop', name: 'db', selector: { app: 'db' }, disruptionsAllowed: 0 });
  return { cluster, ip };
}

describe('e2e: a drain that can never finish is refused before the claim', () => {
  it('maxUnavailable 0 over healthy pods: worker-1 refused untouched, worker-2 rolled; plan says the same first', async () => {
    const made = await unsatisfiableCluster();
    c = made.cluster;
    const nodes = { nodes: 'worker-1,worker-2' };

    // plan first (it changes nothing): apply would refuse worker-1, and why
    const plan = await act(c, { ...nodes, mode: 'plan' });
    expect(plan.exitCode, plan.stdout + plan.stderr).toBe(0);
    const planned = byName(plan) as unknown as Record<string, { outcome: string; drainForecast?: { unsatisfiable?: unknown } }>;
    const finding = {
      node: 'worker-1',
      blocking: [
        {
          case: 'max-unavailable-zero',
          budgets: ['shop/db'],
          spec: 'maxUnavailable: 0',
          status: { disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2, expectedPods: 2 },
          pods: ['shop/db-0'],
        },
      ],
    };
    expect(planned['worker-1'].drainForecast?.unsatisfiable).toEqual(finding);
    expect(planned['worker-2'].drainForecast?.unsatisfiable).toBeUndefined();
    expect(plan.summary).toContain(`apply would refuse worker-1 before claiming it: its drain can never finish: ${BLOCKING}`);

    const run = await act(c, nodes);
    const d = byName(run);
    // the same finding, said by apply's start check
    expect(d['worker-1'].outcome).toBe('refused');
    expect(d['worker-1'].reason).toBe(`refused before its claim: the drain of worker-1 can never finish: ${BLOCKING}`);
    expect(d['worker-1'].nextStep).toContain('let shop/db allow one eviction (maxUnavailable: 1)');
    expect(d['worker-1'].nextStep).toContain('worker-1 was not claimed, cordoned or changed');
    // the roll went on: worker-2 rolled, the run counts worker-1 refused
    expect(d['worker-2'].outcome).toBe('rebooted');
    expect(run.outputs.refused).toBe('1');
    expect(run.outputs.rebooted).toBe('1');
    expect(run.outputs['old-credential-revocable']).toBe('false');
    // the row says the budget, the pod and the fix
    expect(run.summary).toContain('shop/db (maxUnavailable: 0; 2 of 2 pods healthy, allows 0 disruptions)');
    expect(run.summary).toContain('let shop/db allow one eviction');

    // worker-1 never written to: no PATCH of its Node, never cordoned, no claim, no Talos write, no eviction (plan's dry run aside)
    expect(c.kube.requests.filter((r) => r.method !== 'GET' && r.path === '/api/v1/nodes/worker-1')).toEqual([]);
    const w1 = node(c, 'worker-1');
    expect(w1.spec.unschedulable).toBeFalsy();
    expect(w1.metadata.annotations?.[A.owner]).toBeUndefined();
    expect(c.talos.mutatingCommands().filter((x) => x.nodes.includes(made.ip['worker-1']) || x.nodes.includes('worker-1'))).toEqual([]);
    expect(c.talos.mutatingCommands().filter((x) => x.nodes.includes(made.ip['worker-2'])).length).toBeGreaterThan(0);
    expect(
      c.kube.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pods/db-0/eviction') && !r.query?.includes('dryRun')),
    ).toEqual([]);
    expect(c.kube.pods().some((p: any) => p.metadata.name === 'db-0')).toBe(true);
    // worker-2 was claimed (its Node patched) by the same run
    expect(c.kube.requests.some((r) => r.method === 'PATCH' && r.path === '/api/v1/nodes/worker-2' && fromAction(r))).toBe(true);
  });

  it('a budget that blocks only until a pod is Ready is not refused: the drain waits, then the roll completes', async () => {
    c = await startCluster({ defaultNodes: false });
    for (const n of ['worker-1', 'worker-2']) c.addNode({ name: n, role: 'worker' });
    // cart-1 on worker-1 Ready; cart-2 on worker-2 (not rolled) held not Ready until the drain was refused once
    c.kube.setReadiness('shop', 'cart', 'never');
    const owner = { kind: 'Deployment', name: 'cart' } as const;
    c.kube.addPod({ namespace: 'shop', name: 'cart-1', nodeName: 'worker-1', owner, labels: { app: 'cart' } });
    c.kube.addPod({
      namespace: 'shop',
      name: 'cart-2',
      owner,
      labels: { app: 'cart' },
      nodeSelector: { 'kubernetes.io/hostname': 'worker-2' },
    });
    c.kube.addPdbMinAvailable({ namespace: 'shop', name: 'cart', selector: { app: 'cart' }, minAvailable: 1 });
    const cluster = c;
    const refused = () =>
      cluster.kube.requests.some((r) => r.method === 'POST' && r.path.endsWith('/pods/cart-1/eviction') && r.status === 429);
    // cart-2 becomes Ready once the twin has answered one eviction of cart-1 with 429: the drain's own pace, not a clock's
    const t = setInterval(() => {
      if (refused()) {
        clearInterval(t);
        cluster.kube.readyNow('shop', 'cart');
      }
    }, 50);
    const run = await act(c, { nodes: 'worker-1' });
    clearInterval(t);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(byName(run)['worker-1'].outcome).toBe('rebooted');
    expect(run.outputs.refused).toBe('0');
    // the drain met the budget (429) before cart-2 was Ready, then evicted cart-1
    expect(refused()).toBe(true);
    expect(c.kube.pods().some((p: any) => p.metadata.name === 'cart-1')).toBe(false);
  });
});
