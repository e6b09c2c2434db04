// End to end: several workers in flight, checked from the TWIN's own node writes (sim/kube's
// nodeWrites, replayed by outOverTime), never from what the action says about itself.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { outOverTime } from '../../sim/kube/index.js';
import { timelineOf } from '../../demo/summaryText.js';
import { A, act, byName, REVISION, requireKubectl, startCluster, verifiedRev } from './helpers.js';
import { addWorkers, isCp } from './parallelWorkers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

/** Every moment of the roll as the twin saw it: no control plane with anything else, and the workers out. */
function checkMoments(cluster: SimCluster, maxWorkers: number): number {
  const { moments } = outOverTime(cluster.kube.nodeWrites, A.owner);
  let peakWorkers = 0;
  for (const m of moments) {
    const cps = m.out.filter(isCp);
    const workers = m.out.filter((n) => !isCp(n));
    expect(cps.length, `at rv ${m.rv}: ${m.out.join(', ')}`).toBeLessThanOrEqual(1);
    if (cps.length) expect(workers, `a control plane out with workers at rv ${m.rv}`).toEqual([]);
    expect(workers.length, `at rv ${m.rv}: ${m.out.join(', ')}`).toBeLessThanOrEqual(maxWorkers);
    peakWorkers = Math.max(peakWorkers, workers.length);
  }
  return peakWorkers;
}

describe('e2e: several workers at once', () => {
  it('max-unavailable 3: never more than 3 workers out, control planes alone and last behind the quorum gate', async () => {
    // three control planes: the quorum gate lets one reboot only while two healthy peers remain
    c = await startCluster({ defaultNodes: false });
    for (const cp of ['cp-1', 'cp-2', 'cp-3']) c.addNode({ name: cp, role: 'control-plane' });
    addWorkers(c, ['worker-1', 'worker-2', 'worker-3', 'worker-4', 'worker-5']);
    // two of the three control planes are rolled (each takes seconds); the gate still counts all three
    const run = await act(c, { 'max-unavailable': '3', nodes: 'worker-1,worker-2,worker-3,worker-4,worker-5,cp-1,cp-2' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('processed');
    expect(checkMoments(c, 3)).toBe(3);
    expect(run.outputs['in-flight-max']).toBe('3');
    expect(run.outputs.left).toBe('0');
    const d = byName(run);
    for (const cp of ['cp-1', 'cp-2']) {
      const steps = d[cp].steps.map((s) => s.name);
      const gate = (label: string) => steps.findIndex((s) => s.startsWith('quorum gate') && s.includes(label));
      expect(steps.indexOf('drain')).toBeGreaterThan(gate('drain'));
      expect(gate('drain')).toBeGreaterThanOrEqual(0);
      const lastGate = steps.map((s) => s.startsWith('quorum gate')).lastIndexOf(true);
      expect(steps.indexOf('reboot')).toBeGreaterThan(lastGate);
      expect(lastGate).toBeGreaterThan(steps.indexOf('drain'));
      expect(steps.filter((s) => s.startsWith('quorum gate')).length).toBeGreaterThanOrEqual(2);
    }
    for (const n of c.kube.nodes()) expect(verifiedRev(n.metadata.annotations) === REVISION).toBe(n.metadata.name !== 'cp-3');
    // each node's log group is one contiguous block: its lines never interleave with another's
    const groups = run.stdout.split('\n').filter((l) => l.startsWith('::group::') || l.startsWith('::endgroup::'));
    for (let i = 0; i < groups.length; i += 2) {
      expect(groups[i]).toMatch(/^::group::/);
      expect(groups[i + 1]).toBe('::endgroup::');
    }
    expect(run.summary).toMatch(/At most 3 in flight/);
    // the timeline: a bar for every node rolled, in roll order, and the same most in flight
    const timeline = timelineOf(run.summary)!;
    const bars = timeline.split('\n').filter((l) => /^\S+ +\|.*\| /.test(l));
    expect(bars.map((l) => l.split(' ')[0])).toEqual(JSON.parse(run.outputs.decisions).map((d: { name: string }) => d.name));
    for (const bar of bars) expect(bar).toMatch(/\|[^|]*C[^|]*D[^|]*R[^|]*P[^|]*\^[^|]*U[^|]*\| rebooted$/);
    expect(timeline).toMatch(/^most nodes in flight at once: 3$/m);
  });
});
