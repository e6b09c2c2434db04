// End to end: the settle gate through the bundle, the real kubectl and the twin's apps controllers.
// What the next drain waited for is checked from the twin's own pod event log, not from the action's word.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import type { RequestRecord } from '../../sim/kube/http.js';
import { sleep, until } from '../sim-kube/helpers.js';
import { A, act, byName, node, requireKubectl } from './helpers.js';
import { evictions, settleCluster } from './settleCluster.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

describe('e2e: the settle gate', () => {
  it("worker-2's first eviction waits until the pod evicted from worker-1 is Ready again elsewhere", async () => {
    // web-a's replacement stays not Ready until worker-2's settle gate has read the workloads, then passes
    // its probe: the gate must wait however long worker-1's reboot took on a loaded runner
    const cl = (c = await settleCluster('never'));
    let gateRead: RequestRecord | undefined;
    let ended = false;
    const after = (t: number, method: string, path: string) =>
      cl.kube.requests.find((r) => r.method === method && r.path === path && r.at > t);
    // bounded by the run: a run that ends without reaching worker-2's gate leaves nothing to release
    const released = (async () => {
      const claim = await until(() => ended || after(0, 'PATCH', '/api/v1/nodes/worker-2'), 120_000, 50);
      if (claim === true) return;
      const read = await until(() => ended || after(claim.at, 'GET', '/apis/apps/v1/deployments'), 120_000, 50);
      if (read === true) return;
      gateRead = read;
      await sleep(1000); // the gate has seen web short of its desired count and said so
      cl.kube.readyNow('shop', 'web');
    })();
    const run = await act(cl, { nodes: 'worker-1,worker-2' }).finally(() => (ended = true));
    await released;
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run);
    expect(d['worker-1'].outcome).toBe('rebooted');
    expect(d['worker-2'].outcome).toBe('rebooted');
    // from the twin's event log: web-a evicted from worker-1, its replacement Ready, then worker-2's first eviction
    const [first] = evictions(cl, 'worker-1');
    expect(first.pod).toBe('web-a');
    const replacementReady = cl.kube.podEvents.find((e) => e.type === 'ready' && e.at > first.at && e.owner?.startsWith('ReplicaSet/web-'));
    expect(replacementReady, JSON.stringify(cl.kube.podEvents)).toBeDefined();
    expect(replacementReady!.at).toBeGreaterThan(gateRead!.at);
    const [secondDrainFirst] = evictions(cl, 'worker-2');
    expect(secondDrainFirst.at).toBeGreaterThanOrEqual(replacementReady!.at);
    // and the action said what it waited for, and recorded the wait
    expect(run.stdout).toMatch(/settle gate: worker-2's drain waits for Deployment shop\/web: .*of 2 desired/);
    expect(d['worker-2'].steps.map((s) => s.name)).toContain('settle gate (before drain)');
  });

  it('a workload that never becomes available: the roll stops after settle-timeout naming it; the held node is released undrained', async () => {
    c = await settleCluster('never');
    const bootBefore = c.talos.node('worker-2').bootID;
    const run = await act(c, { nodes: 'worker-1,worker-2,worker-3', 'settle-timeout': '6s' });
    expect(run.exitCode, run.stdout).toBe(1);
    expect(run.outputs.result).toBe('failed');
    const d = byName(run);
    expect(d['worker-1'].outcome).toBe('rebooted');
    expect(d['worker-2'].outcome).toBe('failed');
    expect(d['worker-2'].reason).toMatch(
      /^settle gate: Deployment shop\/web \(.*of 2 desired\) did not become available again \(as before its drain\) within settle-timeout 6\.0 s; the drain was not started/,
    );
    expect(run.stdout).toMatch(/Deployment shop\/web/);
    expect(d['worker-3']).toBeUndefined();
    expect(evictions(c, 'worker-2')).toEqual([]);
    const n = node(c, 'worker-2');
    expect(n.spec.unschedulable).toBeFalsy();
    expect(n.metadata.annotations?.[A.owner]).toBeUndefined();
    expect(n.metadata.annotations?.[A.verified]).toBeUndefined();
    expect(c.talos.node('worker-2').bootID).toBe(bootBefore);
  });

  it('settle-timeout 0: no wait, no pod or workload list', async () => {
    c = await settleCluster(15_000);
    const run = await act(c, { nodes: 'worker-1,worker-2', 'settle-timeout': '0' });
    expect(run.exitCode, run.stdout).toBe(0);
    const [first] = evictions(c, 'worker-1');
    const [second] = evictions(c, 'worker-2');
    const replacementReady = c.kube.podEvents.find((e) => e.type === 'ready' && e.at > first.at && e.owner?.startsWith('ReplicaSet/web-'));
    // worker-2 was drained while the replacement was not Ready yet
    expect(replacementReady === undefined || second.at < replacementReady.at).toBe(true);
    expect(c.kube.requests.filter((r) => r.path.startsWith('/apis/apps/v1/deployments'))).toEqual([]);
    expect(run.stdout).not.toMatch(/settle gate/);
  });
});
