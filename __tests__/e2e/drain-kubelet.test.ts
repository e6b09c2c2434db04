// End to end: the node lifecycle controller's taints during a drain are no other actor, in the watch
// beside the drain and in every guard around it (the condition taints: docs/kubernetes-facts.md#k15-condition-taints).
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { A, act, byName, node, requireKubectl, startCluster, isDrainRequest } from './helpers.js';

const taintKeys = (cluster: SimCluster, name: string): string[] =>
  ((node(cluster, name).spec.taints ?? []) as Array<{ key: string; effect: string }>).map((t) => `${t.key}:${t.effect}`);
const leaseHolder = (cluster: SimCluster): string => cluster.kube.lease('kube-system', 'registry-auth-rollout')?.spec?.holderIdentity ?? '';

/** One worker with one pod its drain evicts (and a DaemonSet pod it leaves): the smallest cluster these cases need. */
async function oneWorker(opts: Parameters<typeof startCluster>[0] = {}): Promise<SimCluster> {
  const cluster = await startCluster({ ...opts, defaultNodes: false });
  cluster.addNode({ name: 'worker-1', role: 'worker' });
  cluster.kube.addPod({ namespace: 'default', name: 'web-1', nodeName: 'worker-1', owner: { kind: 'ReplicaSet', name: 'web-7d4b9' } });
  cluster.kube.addPod({
    namespace: 'kube-system',
    name: 'cilium-worker-1',
    nodeName: 'worker-1',
    owner: { kind: 'DaemonSet', name: 'cilium' },
  });
  return cluster;
}

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
    const drains = cluster.kube.requests.filter(isDrainRequest);
    expect(seen.taintedAt).toBeGreaterThan(drains[0].at);
    expect(seen.clearedAt).toBeGreaterThan(seen.taintedAt);
    expect(drains.at(-1)!.at).toBeGreaterThan(seen.clearedAt);
    // the held pod was evicted once the PDB allowed it, and the node came back schedulable and verified
    expect(cluster.kube.requests.filter((r) => r.path.endsWith('/pods/web-1/eviction') && r.status === 201)).toHaveLength(1);
    expect(node(cluster, 'worker-1').spec.unschedulable).toBeFalsy();
    expect(node(cluster, 'worker-1').metadata.annotations?.[A.verified]).toBeDefined();
  });

  it('a worker claimed under memory pressure, relieved by its own drain: the taint lifted, it is rebooted, proven, released, the Lease too', async () => {
    const cluster = (c = await oneWorker());
    // the kubelet reports MemoryPressure; the first eviction of the drain relieves it, the condition
    // clears and the controller lifts the taint while the drain runs or just after it
    cluster.kube.kubeletMemoryPressure('worker-1');
    const pressure = 'node.kubernetes.io/memory-pressure:NoSchedule';
    await expect.poll(() => taintKeys(cluster, 'worker-1'), { timeout: 5000, interval: 20 }).toContain(pressure);
    const from = cluster.kube.nodeWrites.length;
    const run = await act(cluster, { nodes: 'worker-1' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('processed');
    // from the twin's own node writes (every one, not samples): the taint was on when the claim landed
    // and lifted while the node was claimed
    const claimed = cluster.kube.nodeWrites.slice(from).filter((w) => w.node === 'worker-1' && w.annotations[A.owner]);
    const seen = {
      claimedUnderPressure: claimed[0]?.taints.includes(pressure) ?? false,
      liftedWhileClaimed: claimed.some((w) => !w.taints.includes(pressure)),
    };
    expect(seen).toEqual({ claimedUnderPressure: true, liftedWhileClaimed: true });
    const d = byName(run)['worker-1'];
    expect(d.outcome, d.reason).toBe('rebooted');
    expect(d.proof?.verdict).toBe('skip');
    expect(d.steps.find((s) => s.name === 'guard (after drain)')?.ok).toBe(true);
    expect(taintKeys(cluster, 'worker-1')).not.toContain(pressure);
    expect(node(cluster, 'worker-1').metadata.annotations?.[A.verified]).toBeDefined();
    expect(node(cluster, 'worker-1').metadata.annotations?.[A.owner]).toBeUndefined();
    expect(node(cluster, 'worker-1').spec.unschedulable).toBeFalsy();
    expect(leaseHolder(cluster)).toBe('');
  });

  it('an unreachable blip still on when the drain ends (the NoExecute taint waits for the next health pass): Talos answers, the node is rolled', async () => {
    // health passes every 1.5 s: after the kubelet is back its NoExecute taint stays until the next one
    const cluster = (c = await oneWorker({ nodeMonitorPeriodMs: 1500, nodeMonitorGraceMs: 300 }));
    const unreachable = (effect: string) => taintKeys(cluster, 'worker-1').includes(`node.kubernetes.io/unreachable:${effect}`);
    let cut = false;
    cluster.kube.beforeWrite({ method: 'POST', path: /\/pods\/[^/]+\/eviction$/ }, () => {
      if (!cut) {
        cut = true;
        cluster.kube.kubeletDisconnect('worker-1'); // the evicted pods stay Terminating until it is back
      }
    });
    // The blip is still on when the drain ends however long the run takes to read the node after it:
    // the controller's pass that lifts the NoExecute taint is held from the reconnect until Talos was
    // asked to reboot the node (the guard after the drain is before that), instead of racing the 1.5 s
    // period against the action's pace on a loaded runner.
    let reconnected = false;
    let released = false;
    const rebootAsked = () => cluster.talos.mutatingCommands().some((x) => x.command === 'reboot');
    const t = setInterval(() => {
      if (
        !reconnected &&
        unreachable('NoExecute') &&
        node(cluster, 'worker-1').status.conditions.some((x: any) => x.type === 'Ready' && x.status === 'Unknown')
      ) {
        reconnected = true;
        cluster.kube.holdNoExecutePass('worker-1');
        cluster.kube.kubeletReconnect('worker-1');
      } else if (reconnected && !released && rebootAsked()) {
        released = true;
        cluster.kube.releaseNoExecutePass('worker-1');
      }
    }, 20);
    const run = await act(cluster, { nodes: 'worker-1' }).finally(() => clearInterval(t));
    expect(reconnected).toBe(true);
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run)['worker-1'];
    expect(d.outcome, d.reason).toBe('rebooted');
    // the guard after the drain saw the node unreachable and asked Talos, which answered
    const names = d.steps.map((s) => s.name);
    const asked = names.indexOf('ask the Talos API (Kubernetes cannot reach the node)');
    expect(asked, names.join(' | ')).toBeGreaterThan(names.indexOf('guard (after drain)'));
    expect(d.steps[asked]).toMatchObject({
      ok: true,
      detail: expect.stringMatching(/answers; going on \(Kubernetes marks it node\.kubernetes\.io\/unreachable/),
    });
    expect(node(cluster, 'worker-1').metadata.annotations?.[A.verified]).toBeDefined();
    expect(leaseHolder(cluster)).toBe('');
  });
});
