// The settle gate in the pipeline, on the in-memory fakes and virtual time (the e2e test checks the
// same through the bundle, the real kubectl and the twin's own event log).
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/errors.js';
import type { WorkloadStatus } from '../../src/core/workloads.js';
import { SettleTimeoutError } from '../../src/pipeline/errors.js';
import { keys, makeCluster, roll } from './harness.js';

const MIN = 60_000;
const workers = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `w${i + 1}` }));

/** A Deployment `web` (its ReplicaSet web-5f6 has a pod on w1) whose evicted pod is available again `delayMs` after w1's drain. */
function webOnW1(c: ReturnType<typeof makeCluster>, delayMs: number | 'never') {
  c.kube.podOwners = [
    {
      namespace: 'shop',
      name: 'web-5f6-a',
      nodeName: 'w1',
      phase: 'Running',
      mirror: false,
      terminating: false,
      ready: true,
      controller: { kind: 'ReplicaSet', name: 'web-5f6' },
    },
    {
      namespace: 'kube-system',
      name: 'agent-x',
      nodeName: 'w1',
      phase: 'Running',
      mirror: false,
      terminating: false,
      ready: true,
      controller: { kind: 'DaemonSet', name: 'agent' },
    },
  ];
  const drainedAt = new Map<string, number>();
  c.kube.drainBody = async (name) => {
    drainedAt.set(name, c.clock.now());
    // w2's drain takes a while: with several in flight, w1 (whose evictions are waited for) finishes first
    if (name === 'w2') await c.clock.sleep(MIN);
  };
  const availableAt = () => (delayMs === 'never' || !drainedAt.has('w1') ? Infinity : drainedAt.get('w1')! + delayMs);
  c.kube.workloads = () => {
    const down = drainedAt.has('w1') && c.clock.now() < availableAt() ? 1 : 0;
    const common = { namespace: 'shop', generation: 1, observedGeneration: 1, specReplicas: 2, replicas: 2, unavailableReplicas: down };
    const st: WorkloadStatus[] = [
      { ...common, kind: 'Deployment', name: 'web', readyReplicas: 2 - down, availableReplicas: 2 - down, updatedReplicas: 2 },
      {
        ...common,
        kind: 'ReplicaSet',
        name: 'web-5f6',
        readyReplicas: 2 - down,
        availableReplicas: 2 - down,
        updatedReplicas: 0,
        ownerDeployment: 'web',
      },
    ];
    return st;
  };
  return { drainedAt, availableAt };
}

describe('settle gate (fakes)', () => {
  it("one at a time: w2's drain waits until the Deployment whose pod w1's drain evicted is available again", async () => {
    const c = makeCluster(workers(2));
    const { drainedAt, availableAt } = webOnW1(c, 5 * MIN);
    const res = await roll(c, { settleTimeoutMs: 10 * MIN });
    expect(res.result).toBe('processed');
    expect(drainedAt.get('w2')!).toBeGreaterThanOrEqual(availableAt());
    expect(res.holds).toEqual([
      expect.objectContaining({ kind: 'settle', node: 'w2', detail: 'Deployment shop/web: ready 1, available 1 of 2 desired' }),
    ]);
    const hold = res.holds![0];
    expect(Date.parse(hold.endedAt!)).toBeGreaterThanOrEqual(availableAt());
    const w2 = res.records.find((r) => r.node === 'w2')!;
    expect(w2.steps.map((s) => s.name)).toContain('settle gate (before drain)');
    // one pod list per drained node, no more; one status list for the baseline of w1 (w2 runs no pod of a controller)
    expect(c.kube.calls.filter((x) => x.method === 'listPodOwners').map((x) => x.name)).toEqual(['w1', 'w2']);
    expect(w2.steps.map((s) => s.name)).not.toContain("read their controllers' counts before the drain (settle gate)");
    const w1 = res.records.find((r) => r.node === 'w1')!;
    expect(w1.steps.find((s) => s.name === "read their controllers' counts before the drain (settle gate)")).toMatchObject({
      ok: true,
      detail: '1 baseline(s)',
    });
  });

  it('a workload that never becomes available: w2 is released undrained, w3 never starts, the error names the workload', async () => {
    const c = makeCluster(workers(3));
    const { drainedAt } = webOnW1(c, 'never');
    const res = await roll(c, { settleTimeoutMs: 3 * MIN });
    expect(res.result).toBe('failed');
    expect(res.error?.message).toMatch(
      /w2: settle gate: Deployment shop\/web \(ready 1, available 1 of 2 desired\) did not become available again \(as before its drain\) within settle-timeout 3m/,
    );
    expect(res.error?.cause).toBeDefined();
    const w2 = res.records.find((r) => r.node === 'w2')!;
    expect(w2.outcome).toBe('failed');
    expect([...drainedAt.keys()]).toEqual(['w1']);
    const w2Address = c.kube.state('w2').internalIPs[0];
    expect(c.talos.calls.filter((x) => x.method === 'reboot' && x.addresses?.includes(w2Address))).toEqual([]);
    expect(c.kube.state('w2').unschedulable).toBe(false);
    expect(c.kube.state('w2').annotations[keys.owner]).toBeUndefined();
    expect(res.notReached).toEqual(['w3']);
  });

  it('settle-timeout 0: no pod list, no status list, no wait', async () => {
    const c = makeCluster(workers(2));
    const { drainedAt } = webOnW1(c, 5 * MIN);
    const res = await roll(c, { settleTimeoutMs: 0 });
    expect(res.result).toBe('processed');
    expect(drainedAt.get('w2')!).toBeLessThan(drainedAt.get('w1')! + 5 * MIN);
    expect(c.kube.calls.filter((x) => x.method === 'listPodOwners' || x.method === 'listWorkloads')).toEqual([]);
    expect(res.holds).toEqual([]);
  });

  it('several workers: a new start is held while a finished node evicted pods are not available again', async () => {
    const c = makeCluster(workers(3));
    const { availableAt } = webOnW1(c, 20 * MIN);
    const res = await roll(c, { settleTimeoutMs: 30 * MIN, maxUnavailable: { count: 2 } });
    expect(res.result).toBe('processed');
    const w3 = res.records.find((r) => r.node === 'w3')!;
    expect(Date.parse(w3.startedAt!)).toBeGreaterThanOrEqual(availableAt());
    expect(res.holds?.some((h) => h.kind === 'settle' && h.node === 'w3')).toBe(true);
  });

  it('several workers, never available: starts stop after settle-timeout with the typed error', async () => {
    const c = makeCluster(workers(3));
    webOnW1(c, 'never');
    const res = await roll(c, { settleTimeoutMs: 3 * MIN, maxUnavailable: { count: 2 } });
    expect(res.result).toBe('failed');
    expect(res.error).toBeInstanceOf(SettleTimeoutError);
    expect((res.error as SettleTimeoutError).unsettled.map((u) => u.workload.name)).toEqual(['web']);
    expect(res.notReached).toEqual(['w3']);
  });

  it('plan predicts the workloads the roll would wait for from one cluster-wide pod list, whatever the node count', async () => {
    const c = makeCluster(workers(3));
    webOnW1(c, 5 * MIN);
    c.kube.podOwners.push({
      namespace: 'shop',
      name: 'db-0',
      nodeName: 'w3',
      phase: 'Running',
      mirror: false,
      terminating: false,
      ready: true,
      controller: { kind: 'StatefulSet', name: 'db' },
    });
    const web = c.kube.workloads;
    const db = { namespace: 'shop', generation: 1, observedGeneration: 1, specReplicas: 1, replicas: 1, unavailableReplicas: 0 };
    c.kube.workloads = () => [
      ...web(),
      { ...db, kind: 'StatefulSet', name: 'db', readyReplicas: 1, availableReplicas: 1, updatedReplicas: 1 },
    ];
    const res = await roll(c, { mode: 'plan', settleTimeoutMs: 10 * MIN });
    expect(res.result).toBe('planned');
    expect(res.settleWaits).toEqual(['Deployment shop/web', 'StatefulSet shop/db']);
    // the pod list is the drain forecast's (one cluster-wide list of pods, DaemonSets and PDBs), not read again
    expect(c.kube.calls.filter((x) => x.method === 'listDrainInputs')).toEqual([{ method: 'listDrainInputs' }]);
    expect(c.kube.calls.filter((x) => x.method === 'listPodOwners')).toEqual([]);
    expect(c.kube.calls.filter((x) => x.method === 'listWorkloads')).toHaveLength(1);
    const off = makeCluster(workers(1));
    expect((await roll(off, { mode: 'plan', settleTimeoutMs: 0 })).settleWaits).toBeUndefined();
  });

  it("plan predicts with the gate's own rule: a ReplicaSet scaled to 0 whose only pod is terminating is not named, as apply does not wait for it", async () => {
    const c = makeCluster(workers(2));
    webOnW1(c, 5 * MIN);
    // batch-7c1 was scaled to 0: its last pod terminates on w2, so the controller counts no replica of it
    c.kube.podOwners.push({
      namespace: 'shop',
      name: 'batch-7c1-x',
      nodeName: 'w2',
      phase: 'Running',
      mirror: false,
      terminating: true,
      ready: false,
      controller: { kind: 'ReplicaSet', name: 'batch-7c1' },
    });
    const web = c.kube.workloads;
    const gone = { namespace: 'shop', generation: 2, observedGeneration: 2, specReplicas: 0, replicas: 0, unavailableReplicas: 0 };
    c.kube.workloads = () => [
      ...web(),
      { ...gone, kind: 'ReplicaSet', name: 'batch-7c1', readyReplicas: 0, availableReplicas: 0, updatedReplicas: 0 },
    ];
    const plan = await roll(c, { mode: 'plan', settleTimeoutMs: 10 * MIN });
    expect(plan.settleWaits).toEqual(['Deployment shop/web']);

    // the apply run over the same cluster waits for web only: the prediction named what the gate waited for
    const applied = await roll(c, { settleTimeoutMs: 10 * MIN });
    expect(applied.result).toBe('processed');
    expect(applied.holds?.map((h) => h.detail)).toEqual([expect.stringContaining('Deployment shop/web')]);
    expect(applied.holds?.[0].detail).not.toContain('batch-7c1');
  });

  it('a status list that fails: the node whose baseline it is is released undrained, the run fails saying the gate could not read', async () => {
    const c = makeCluster(workers(2));
    const { drainedAt } = webOnW1(c, 5 * MIN);
    c.kube.workloads = () => {
      throw new ToolError({
        tool: 'kubectl',
        command: 'kubectl get deployments.apps,replicasets.apps,statefulsets.apps -A',
        kind: 'forbidden',
        exitCode: 1,
        stderr: 'Error from server (Forbidden): deployments.apps is forbidden',
      });
    };
    const res = await roll(c, { settleTimeoutMs: 10 * MIN });
    expect(res.result).toBe('failed');
    const w1 = res.records.find((r) => r.node === 'w1')!;
    expect(w1.outcome).toBe('failed');
    expect(w1.reason).toMatch(/^settle gate: .*forbidden/i);
    expect([...drainedAt.keys()]).toEqual([]);
    expect(c.kube.state('w1').unschedulable).toBe(false);
    expect(c.kube.state('w1').annotations[keys.owner]).toBeUndefined();
    expect(res.notReached).toEqual(['w2']);
  });
});

describe('settle gate: back to how it was before the drain, not to spec', () => {
  /**
   * Deployment shop/web wants 3 replicas; one has been Pending for days (never schedulable), so it
   * reports 2 ready and available. w1 runs one of the two; its drain takes it away until `delayMs` later.
   */
  function degradedWeb(c: ReturnType<typeof makeCluster>, delayMs: number | 'never', opts: { specAfterDrain?: number } = {}) {
    const t = webOnW1(c, delayMs);
    c.kube.workloads = () => {
      const down = t.drainedAt.has('w1') && c.clock.now() < t.availableAt() ? 1 : 0;
      const spec = t.drainedAt.has('w1') && opts.specAfterDrain !== undefined ? opts.specAfterDrain : 3;
      const common = {
        namespace: 'shop',
        generation: 1,
        observedGeneration: 1,
        specReplicas: spec,
        replicas: 3,
        unavailableReplicas: 1 + down,
      };
      return [
        { ...common, kind: 'Deployment', name: 'web', readyReplicas: 2 - down, availableReplicas: 2 - down, updatedReplicas: 3 },
        {
          ...common,
          kind: 'ReplicaSet',
          name: 'web-5f6',
          readyReplicas: 2 - down,
          availableReplicas: 2 - down,
          updatedReplicas: 0,
          ownerDeployment: 'web',
        },
      ] satisfies WorkloadStatus[];
    };
    return t;
  }

  it('a Deployment with a replica Pending for ever: the next drain waits until it is back to 2 available, not 3', async () => {
    const c = makeCluster(workers(3));
    const { drainedAt, availableAt } = degradedWeb(c, 2 * MIN);
    const res = await roll(c, { settleTimeoutMs: 10 * MIN });
    expect(res.result, res.error?.message).toBe('processed');
    expect(res.records.map((r) => r.outcome)).toEqual(['rebooted', 'rebooted', 'rebooted']);
    // it did wait for the evicted replica, until it was back (and not for the one that never runs)
    expect(drainedAt.get('w2')!).toBeGreaterThanOrEqual(availableAt());
    expect(drainedAt.get('w2')!).toBeLessThan(availableAt() + 10 * MIN);
    expect(res.holds).toEqual([
      expect.objectContaining({
        kind: 'settle',
        node: 'w2',
        detail: 'Deployment shop/web: ready 1, available 1 of 2 (as many as before the drain; 3 desired)',
      }),
    ]);
  });

  it('a scale-down below the baseline meanwhile lowers the bar: back to spec is back', async () => {
    const c = makeCluster(workers(2));
    // 2 available before the drain; scaled to 1 after it, with 1 available: settled at once
    const { drainedAt } = degradedWeb(c, 'never', { specAfterDrain: 1 });
    const res = await roll(c, { settleTimeoutMs: 10 * MIN });
    expect(res.result, res.error?.message).toBe('processed');
    expect(drainedAt.has('w2')).toBe(true);
    expect(res.holds).toEqual([]);
  });

  it('still never back: the roll stops after settle-timeout naming the counts it waits for', async () => {
    const c = makeCluster(workers(2));
    degradedWeb(c, 'never');
    const res = await roll(c, { settleTimeoutMs: 3 * MIN });
    expect(res.result).toBe('failed');
    expect(res.error?.message).toContain('Deployment shop/web (ready 1, available 1 of 2 (as many as before the drain; 3 desired))');
  });

  it('the wait runs in phase settling, which the post step releases; a cancellation during it gives the node back', async () => {
    const c = makeCluster(workers(2));
    degradedWeb(c, 'never');
    const published: string[] = [];
    let cancelled = false;
    const res = await roll(
      c,
      { settleTimeoutMs: 30 * MIN },
      {
        publishHeld: (h) => published.push(h.map((x) => `${x.node}:${x.phase}`).join(',')),
        // the runner cancels the job (its timeout) while w2's drain waits: after three polls of the gate
        cancelled: () => {
          const polls = c.kube.calls.filter((x) => x.method === 'listWorkloads').length;
          cancelled ||= published.at(-1) === 'w2:settling' && polls >= 4;
          return cancelled;
        },
      },
    );
    expect(published).toContain('w2:settling');
    expect(res.result).toBe('failed');
    const w2 = res.records.find((r) => r.node === 'w2')!;
    expect(w2.reason).toMatch(/^settle gate: the run was cancelled while it waited/);
    // given back, neither drained nor rebooted, nothing left for a person
    expect(c.kube.state('w2').unschedulable).toBe(false);
    expect(c.kube.state('w2').annotations[keys.owner]).toBeUndefined();
    expect(published.at(-1)).toBe('');
    expect(c.kube.calls.filter((x) => x.method === 'drain').map((x) => x.name)).toEqual(['w1']);
    // the wait ends at the cancellation: w2's pods are not listed for a drain that will not come (the
    // channel outlives a cancellation, so such reads would be answered and spend the cleanup's window)
    expect(c.kube.calls.filter((x) => x.method === 'listPodOwners' && x.name === 'w2')).toEqual([]);
  });
});
