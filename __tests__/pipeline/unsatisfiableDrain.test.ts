// The unsatisfiable-drain start check on the fakes (src/pipeline/startChecks/unsatisfiableDrain.ts):
// a node whose drain can never finish is refused before its claim and the roll goes on; the pods are
// listed only when a budget may hold a drain for good; a read that fails, or a roll that may skip its
// drain (Talos 1.14), goes ahead as before; plan's forecast names the same finding.
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/errors.js';
import type { PdbState } from '../../src/core/model/cluster.js';
import type { PodOwnerReading } from '../../src/core/workloads.js';
import { makeCluster, roll, type NodeOpts } from './harness.js';

const db = (name: string, nodeName: string): PodOwnerReading =>
  ({
    namespace: 'shop',
    name,
    nodeName,
    phase: 'Running',
    mirror: false,
    terminating: false,
    ready: true,
    controller: { kind: 'StatefulSet', name: 'db' },
    labels: { app: 'db' },
  }) as PodOwnerReading;

const FULL_HEALTH: PdbState = {
  namespace: 'shop',
  name: 'db',
  selector: { matchLabels: { app: 'db' } },
  maxUnavailable: 0,
  generation: 2,
  observedGeneration: 2,
  expectedPods: 2,
  status: { disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2 },
};

/** w1 runs db-0, w3 (not selected) db-1; the budget lets none go */
function cluster(w1: Partial<NodeOpts> = {}, pdbs: PdbState[] = [FULL_HEALTH]) {
  const c = makeCluster([{ name: 'w1', ...w1 }, { name: 'w2' }]);
  c.kube.podOwners = [db('db-0', 'w1'), db('db-1', 'w3')];
  c.kube.allPdbs = pdbs;
  return c;
}

describe('the unsatisfiable-drain start check (apply, fakes)', () => {
  it('refuses w1 before its claim (nothing written to it), names the budget, the pod and the fix, and rolls w2', async () => {
    const c = cluster();
    const res = await roll(c);
    const w1 = res.records.find((r) => r.node === 'w1')!;
    expect(w1.outcome).toBe('refused');
    expect(w1.reason).toBe(
      'refused before its claim: the drain of w1 can never finish: PDB shop/db (maxUnavailable: 0; 2 of 2 pods healthy, allows 0 disruptions) holds 1 pod shop/db-0',
    );
    expect(w1.nextStep).toMatch(
      /^let shop\/db allow one eviction \(maxUnavailable: 1\), or scale its workload above 2 replicas, or move shop\/db-0 off w1 yourself; then rerun/,
    );
    expect(w1.steps.map((s) => [s.name, s.ok])).toEqual([['start check (unsatisfiable-drain)', false]]);
    expect(res.records.find((r) => r.node === 'w2')?.outcome).toBe('rebooted');
    expect(c.kube.mutatingCalls().filter((x) => x.endsWith(' w1'))).toEqual([]);
    // w1 is 10.0.0.10 (harness order): no patch, no reboot; w2 (10.0.0.11) was patched and rebooted
    expect(c.talos.mutatingCalls().filter((x) => x.endsWith(' 10.0.0.10'))).toEqual([]);
    expect(c.talos.mutatingCalls()).toContain('reboot 10.0.0.11');
  });

  it('lists the pods only when a budget may hold a drain for good: otherwise one list of the budgets per start', async () => {
    const allows: PdbState = { ...FULL_HEALTH, maxUnavailable: 1, status: { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1 } };
    const c = cluster({}, [allows]);
    const res = await roll(c);
    expect(res.records.map((r) => r.outcome)).toEqual(['rebooted', 'rebooted']);
    expect(c.kube.calls.filter((x) => x.method === 'listPdbs')).toHaveLength(2);
    expect(c.kube.calls.filter((x) => x.method === 'listDrainInputs')).toEqual([]);
  });

  it('a budget list that fails: the node goes ahead as before the check', async () => {
    const c = cluster();
    c.kube.listPdbs = () =>
      Promise.reject(
        new ToolError({ tool: 'kubectl', command: 'GET poddisruptionbudgets', kind: 'timeout', exitCode: 1, stderr: 'timed out' }),
      );
    const res = await roll(c, { drainTimeoutMs: 60_000 });
    expect(res.records.find((r) => r.node === 'w1')?.outcome).not.toBe('refused');
    expect(c.kube.calls.some((x) => x.method === 'patchNode' && x.name === 'w1')).toBe(true);
  });

  it('Talos 1.14 may restart cri itself and skip the drain: not refused (reboot: evidence); reboot: always refuses it', async () => {
    const c = cluster({ version: 'v1.14.1' });
    const res = await roll(c);
    expect(res.records.find((r) => r.node === 'w1')?.outcome).not.toBe('refused');
    const always = cluster({ version: 'v1.14.1' });
    const res2 = await roll(always, { reboot: 'always' });
    expect(res2.records.find((r) => r.node === 'w1')?.outcome).toBe('refused');
  });

  it("plan's forecast names the same finding for w1", async () => {
    const c = cluster();
    const res = await roll(c, { mode: 'plan' });
    expect(res.records.find((r) => r.node === 'w1')?.drainForecast?.unsatisfiable).toEqual({
      node: 'w1',
      blocking: [
        {
          case: 'max-unavailable-zero',
          budgets: ['shop/db'],
          spec: 'maxUnavailable: 0',
          status: { disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2, expectedPods: 2 },
          pods: ['shop/db-0'],
        },
      ],
    });
    expect(res.records.find((r) => r.node === 'w2')?.drainForecast?.unsatisfiable).toBeUndefined();
  });

  it('plan reads the budgets and the pods once, with its drain forecast (listDrainInputs): the start check is not asked again for what that forecast has', async () => {
    const c = cluster();
    await roll(c, { mode: 'plan' });
    const reads = (m: string) => c.kube.calls.filter((x) => x.method === m).length;
    expect({ listPdbs: reads('listPdbs'), listDrainInputs: reads('listDrainInputs') }).toEqual({ listPdbs: 0, listDrainInputs: 1 });
  });
});
