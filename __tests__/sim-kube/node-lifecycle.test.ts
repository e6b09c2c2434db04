// The twin's node lifecycle controller with its two loops at their own pace (sim/kube/nodes.ts), and a
// kubelet under memory pressure. Real pace: kubernetes:pkg/controller/nodelifecycle/node_lifecycle_controller.go
// (--node-monitor-period 5 s, --node-monitor-grace-period 40 s, 50 s since 1.32), scaled down here.
import { afterEach, describe, expect, it } from 'vitest';
import { KubeSim } from '../../sim/kube/index.js';
import { sleep, until } from './helpers.js';

let sim: KubeSim | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

const PERIOD = 400;
const GRACE = 600;
async function start(): Promise<KubeSim> {
  sim = await KubeSim.start({
    heartbeatMs: 100,
    taintDelayMs: 20,
    nodeMonitorPeriodMs: PERIOD,
    nodeMonitorGraceMs: GRACE,
    pressureTransitionMs: 150,
  });
  sim.addNode({ name: 'w-1', ip: '10.0.0.11', role: 'worker' });
  return sim;
}
const keysOf = (s: KubeSim) =>
  ((s.node('w-1').spec.taints ?? []) as Array<{ key: string; effect: string }>).map((t) => `${t.key}:${t.effect}`).sort();
const condition = (s: KubeSim, type: string) => s.node('w-1').status.conditions.find((c: any) => c.type === type);

describe('the node lifecycle controller: NoSchedule on every update, NoExecute and Unknown on its health pass', () => {
  it('a silent kubelet: Unknown only after the grace period, unreachable NoSchedule a moment later, NoExecute at the next pass; after the reconnect the NoExecute taint lingers until a pass', async () => {
    const s = await start();
    const cut = s.nodeWrites.length;
    s.kubeletDisconnect('w-1');
    const heard = s.kubeletLastHeardAt('w-1')!;
    await until(() => keysOf(s).includes('node.kubernetes.io/unreachable:NoExecute'), 10_000, 5);
    // from the twin's own node writes, whatever the pace of this process: Unknown only once the grace
    // period has passed since the kubelet was last heard; the taints are separate, later writes,
    // NoSchedule first and NoExecute at a later health pass
    const writes = s.nodeWrites.slice(cut).filter((w) => w.node === 'w-1');
    const unknown = writes.findIndex((w) => w.ready === 'Unknown');
    expect(unknown, JSON.stringify(writes)).toBeGreaterThanOrEqual(0);
    expect(writes.slice(0, unknown).every((w) => w.ready === 'True')).toBe(true); // still within the grace period
    expect(writes[unknown].at - heard).toBeGreaterThanOrEqual(GRACE - 2); // a timer may fire a millisecond early
    expect(writes[unknown].taints).toEqual([]); // the taint is a separate, later write
    const noSchedule = writes.findIndex((w) => w.taints.includes('node.kubernetes.io/unreachable:NoSchedule'));
    const noExecute = writes.findIndex((w) => w.taints.includes('node.kubernetes.io/unreachable:NoExecute'));
    expect(noSchedule).toBeGreaterThan(unknown);
    expect(writes[noSchedule].taints).not.toContain('node.kubernetes.io/unreachable:NoExecute');
    expect(noExecute).toBeGreaterThan(noSchedule);

    const from = s.nodeWrites.length;
    s.kubeletReconnect('w-1');
    await until(() => keysOf(s).length === 0, 10_000, 5);
    // from the twin's own writes: the NoSchedule taint went first, the NoExecute one at the next health pass
    const after = s.nodeWrites
      .slice(from)
      .filter((w) => w.node === 'w-1')
      .map((w) => w.taints.join(','));
    expect(after).toContain('node.kubernetes.io/unreachable:NoExecute');
    expect(after.at(-1)).toBe('');
  });

  it('memory pressure: MemoryPressure=True and its taint; the first eviction relieves it, False after the transition period, the taint lifted', async () => {
    const s = await start();
    s.addPod({ namespace: 'default', name: 'web-1', nodeName: 'w-1', owner: { kind: 'ReplicaSet', name: 'web-5f' } });
    s.kubeletMemoryPressure('w-1');
    expect(condition(s, 'MemoryPressure')).toMatchObject({ status: 'True', reason: 'KubeletHasInsufficientMemory' });
    await until(() => keysOf(s).includes('node.kubernetes.io/memory-pressure:NoSchedule'), 10_000, 5);
    await sleep(300);
    expect(condition(s, 'MemoryPressure').status).toBe('True'); // nothing relieved it yet
    const res = await fetch(`${s.url}/api/v1/namespaces/default/pods/web-1/eviction`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-1', namespace: 'default' } }),
    });
    expect(res.status).toBe(201);
    await until(() => condition(s, 'MemoryPressure').status === 'False', 10_000, 5);
    expect(condition(s, 'MemoryPressure')).toMatchObject({ reason: 'KubeletHasSufficientMemory' });
    await until(() => keysOf(s).length === 0, 10_000, 5);
  });

  it('memory pressure relieved after a delay, without an eviction', async () => {
    const s = await start();
    s.kubeletMemoryPressure('w-1', { reliefMs: 200 });
    await until(() => keysOf(s).includes('node.kubernetes.io/memory-pressure:NoSchedule'), 10_000, 5);
    await until(() => keysOf(s).length === 0, 10_000, 5);
    expect(condition(s, 'MemoryPressure').status).toBe('False');
  });
});
