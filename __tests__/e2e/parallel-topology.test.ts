// End to end: topology-key, checked from the TWIN's own node writes (sim/kube's nodeWrites, replayed by
// outOverTime), never from what the action says about itself.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { outOverTime } from '../../sim/kube/index.js';
import { A, act, requireKubectl, startCluster } from './helpers.js';
import { addWorkers, isCp, ZONE } from './parallelWorkers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

describe('e2e: several workers at once', () => {
  it('topology-key: never two zones out at once, yet a zone fills up to max-unavailable', async () => {
    c = await startCluster({ defaultNodes: false });
    addWorkers(c, ['w-1', 'w-2', 'w-3', 'w-4', 'w-5', 'w-6'], (i) => ['a', 'b'][i % 2]);
    const run = await act(c, { 'max-unavailable': '3', 'topology-key': ZONE });
    expect(run.exitCode, run.stdout).toBe(0);
    const zoneOf = (n: string) => c!.kube.node(n).metadata.labels[ZONE];
    let peak = 0;
    for (const m of outOverTime(c.kube.nodeWrites, A.owner).moments) {
      const zones = new Set(m.out.filter((n) => !isCp(n)).map(zoneOf));
      expect(zones.size, `at rv ${m.rv}: ${m.out.join(', ')}`).toBeLessThanOrEqual(1);
      peak = Math.max(peak, m.out.length);
    }
    expect(peak).toBe(3);
  });
});
