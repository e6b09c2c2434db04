// End to end: the settle gate through the bundle, the real kubectl and the twin's apps controllers.
// What the next drain waited for is checked from the twin's own pod event log, not from the action's word.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { A, act, byName, node, requireKubectl } from './helpers.js';
import { evictions, readyOnceGateWaits, settleCluster } from './settleCluster.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

describe('e2e: the settle gate', () => {
  it("worker-2's first eviction waits until the pod evicted from worker-1 is Ready again elsewhere", async () => {
    // web-a's replacement stays not Ready until worker-2's settle gate is seen waiting, then passes its
    // probe: the gate must wait however long worker-1's reboot took on a loaded runner
    const cl = (c = await settleCluster('never'));
    let ended = false;
    const gate = readyOnceGateWaits(cl, 'worker-2', 'shop', 'web', () => ended);
    const run = await act(cl, { nodes: 'worker-1,worker-2' }).finally(() => (ended = true));
    const gateRead = await gate;
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run);
    expect(d['worker-1'].outcome).toBe('rebooted');
    expect(d['worker-2'].outcome).toBe('rebooted');
    // from the twin's event log: web-a evicted from worker-1, its replacement Ready, then worker-2's first eviction
    const [first] = evictions(cl, 'worker-1');
    expect(first.pod).toBe('web-a');
    const replacementReady = cl.kube.podEvents.find((e) => e.type === 'ready' && e.at > first.at && e.owner?.startsWith('ReplicaSet/web-'));
    expect(replacementReady, JSON.stringify(cl.kube.podEvents)).toBeDefined();
    expect(gateRead).toBeDefined();
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
    // web-a's replacement stays not Ready until worker-2's drain has evicted its first pod, however long
    // worker-1's roll takes: a gate that waited would wait for ever (and the run would fail)
    const cl = (c = await settleCluster('never'));
    let held = true;
    cl.kube.beforeWrite({ method: 'POST', path: /\/pods\/[^/]+\/eviction$/ }, () =>
      // after the eviction is applied (and logged in podEvents)
      setImmediate(() => {
        if (held && evictions(cl, 'worker-2').length > 0) {
          held = false;
          cl.kube.readyNow('shop', 'web');
        }
      }),
    );
    const run = await act(cl, { nodes: 'worker-1,worker-2', 'settle-timeout': '0' });
    expect(run.exitCode, run.stdout).toBe(0);
    const [first] = evictions(cl, 'worker-1');
    const [second] = evictions(cl, 'worker-2');
    expect(first?.pod).toBe('web-a');
    expect(second).toBeDefined();
    // worker-2 was drained while the replacement was not Ready yet: in the twin's own event order,
    // worker-2's first eviction comes before any replacement of web became Ready
    const events = cl.kube.podEvents;
    const from = events.indexOf(first);
    const readyAt = events.findIndex((e, i) => i > from && e.type === 'ready' && e.owner?.startsWith('ReplicaSet/web-'));
    expect(events.indexOf(second)).toBeGreaterThan(from);
    expect(readyAt === -1 || readyAt > events.indexOf(second), JSON.stringify(events)).toBe(true);
    expect(cl.kube.requests.filter((r) => r.path.startsWith('/apis/apps/v1/deployments'))).toEqual([]);
    expect(run.stdout).not.toMatch(/settle gate/);
  });
});
