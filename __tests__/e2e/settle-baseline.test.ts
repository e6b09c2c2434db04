// End to end: the settle gate waits for how a workload was before the drain, not for its spec.
// What the next drain waited for is checked from the twin's own pod event log, not from the action's word.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { A, act, ann, byName, node, postFindsNothingHeld, postStep, requireKubectl, startCluster } from './helpers.js';
import { evictions, readyOnceGateWaits, settleCluster } from './settleCluster.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

describe('e2e: the settle gate waits for how a workload was before the drain, not for its spec', () => {
  /**
   * A Deployment shop/api that wants 3 replicas of 3 CPUs each on nodes of pool=api: worker-1 and
   * worker-2 (3950m allocatable each) run one each, the third has been Pending for ever (Insufficient
   * cpu). worker-3 is of another pool. A replica started from now on is not Ready until the test says.
   */
  async function degraded(): Promise<SimCluster> {
    const cl = await startCluster({ defaultNodes: false });
    cl.addNode({ name: 'cp-1', role: 'control-plane' });
    cl.addNode({ name: 'worker-1', role: 'worker', labels: { pool: 'api' } });
    cl.addNode({ name: 'worker-2', role: 'worker', labels: { pool: 'api' } });
    cl.addNode({ name: 'worker-3', role: 'worker' });
    const api = { namespace: 'shop', owner: { kind: 'Deployment' as const, name: 'api' }, cpu: '3', nodeSelector: { pool: 'api' } };
    cl.kube.addPod({ name: 'api-a', nodeName: 'worker-1', ...api });
    cl.kube.addPod({ name: 'api-b', nodeName: 'worker-2', ...api });
    cl.kube.addPod({ name: 'api-c', ...api });
    // a replica started from now on stays not Ready until the test lets it (readyOnceGateWaits): the next
    // drain has something to wait for, however long the roll before it took
    cl.kube.setReadiness('shop', 'api', 'never');
    return cl;
  }
  const available = (cl: SimCluster) => cl.kube.workload('Deployment', 'shop', 'api')?.status?.availableReplicas ?? 0;

  it('a Deployment with a replica Pending for ever: worker-2 is drained once the replica worker-1 lost runs again, and the roll succeeds', async () => {
    const cl = (c = await degraded());
    await expect.poll(() => available(cl), { timeout: 30_000 }).toBe(2);
    let most = 0;
    const t = setInterval(() => (most = Math.max(most, available(cl))), 50);
    // the replica worker-1 lost passes its probe once worker-2's gate is seen waiting for it
    let ended = false;
    const gate = readyOnceGateWaits(cl, 'worker-2', 'shop', 'api', () => ended);
    const run = await act(cl, { nodes: 'worker-1,worker-2', 'settle-timeout': '60s' }).finally(() => {
      ended = true;
      clearInterval(t);
    });
    const gateRead = await gate;
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run);
    expect([d['worker-1'].outcome, d['worker-2'].outcome]).toEqual(['rebooted', 'rebooted']);
    // From the twin: worker-1's drain evicted api-a; a replica became Ready on worker-1 once it was
    // schedulable again, after worker-2's gate had read it not Ready; only then did worker-2's first
    // eviction come. The Deployment never had 3.
    const [first] = evictions(cl, 'worker-1');
    expect(first.pod).toBe('api-a');
    const back = cl.kube.podEvents.find((e) => e.type === 'ready' && e.at > first.at && e.node === 'worker-1');
    expect(back, JSON.stringify(cl.kube.podEvents)).toBeDefined();
    expect(gateRead).toBeDefined();
    expect(back!.at).toBeGreaterThan(gateRead!.at);
    const [second] = evictions(cl, 'worker-2');
    expect(second.at).toBeGreaterThanOrEqual(back!.at);
    expect(most).toBe(2);
    expect(run.stdout).toMatch(
      /settle gate: worker-2's drain waits for Deployment shop\/api: .*of 2 \(as many as before the drain; 3 desired\)/,
    );
    expect(d['worker-2'].steps.map((s) => s.name)).toContain("read their controllers' counts before the drain (settle gate)");
  });

  it('the job is cancelled while a drain waits for the gate: the main step gives the node back itself, and the post step has nothing left to do', async () => {
    c = await settleCluster('never');
    const main = await act(
      c,
      { nodes: 'worker-1,worker-2', 'settle-timeout': '60s' },
      { killWhen: (out) => out.includes('worker-2: ▶ settle gate (before drain)') },
    );
    expect(main.exitCode).toBe(1);
    expect(main.stdout).toMatch(/received SIGINT/);
    // The channel to the API server outlives the cancellation (docs/kube-channel.md): the release is
    // sent after the signal over the same proxy, and answered, so nothing is left for the post step.
    expect(main.state.held ?? '', main.stdout).toBe('');
    const d = byName(main)['worker-2'];
    expect(d.outcome, main.stdout).toBe('failed');
    expect(d.reason).toMatch(/settle gate: the run was cancelled while it waited/);
    expect(d.reason).not.toMatch(/releasing the claim failed too/);
    expect(d.nextStep).toMatch(/the node was released \(its cordon state restored\) and was neither drained nor rebooted/);
    expect(main.outputs['old-credential-revocable']).toBe('false');
    expect(evictions(c, 'worker-2')).toEqual([]);
    expect(node(c, 'worker-2').spec.unschedulable).toBeFalsy();
    for (const k of [A.owner, A.phase, A.wasCordoned, A.verified]) expect(ann(c, 'worker-2')[k]).toBeUndefined();
    await postFindsNothingHeld(c, main);
    expect(c.talos.mutatingCommands().filter((x) => x.command === 'reboot' && x.nodes.includes(c!.talos.node('worker-2').ip))).toEqual([]);
  });

  it('the step is killed while a drain waits for the gate (no handler runs): the node was handed over as settling, and the post step gives it back', async () => {
    c = await settleCluster('never');
    const main = await act(
      c,
      { nodes: 'worker-1,worker-2', 'settle-timeout': '60s' },
      { killWhen: (out) => out.includes('worker-2: ▶ settle gate (before drain)'), killSignal: 'SIGKILL' },
    );
    expect(main.exitCode).toBeNull();
    const held = JSON.parse(main.state.held) as Array<{ node: string; phase: string }>;
    expect(held.map((h) => [h.node, h.phase])).toEqual([['worker-2', 'settling']]);
    expect(evictions(c, 'worker-2')).toEqual([]);
    const post = await postStep(c, main);
    expect(post.exitCode, post.stdout).toBe(0);
    expect(post.annotations.some((a) => a.kind === 'notice' && a.title === 'worker-2: released by the post step')).toBe(true);
    expect(post.stdout).toMatch(/the settle gate was waiting before its drain/);
    expect(node(c, 'worker-2').spec.unschedulable).toBeFalsy();
    for (const k of [A.owner, A.phase, A.wasCordoned, A.verified]) expect(ann(c, 'worker-2')[k]).toBeUndefined();
    expect(c.talos.mutatingCommands().filter((x) => x.command === 'reboot' && x.nodes.includes(c!.talos.node('worker-2').ip))).toEqual([]);
  });
});
