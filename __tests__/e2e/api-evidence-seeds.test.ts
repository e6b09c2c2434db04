// End to end over the Talos API on timings the twin draws from a seed: whatever the draw, fresh
// nodes are skipped, 1.14 restarts skipped, stale 1.13 nodes rebooted and proven.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type SimCluster } from '../../sim/cluster.js';
import { expectApiGap, expectReleasedVerified } from './apiEvidence.js';
import { act, byName, drainRequests, requireKubectl, startCluster } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

describe('e2e over the Talos API on realistic timings', () => {
  // The twin's drawn timings (1.13 boot gaps 0.3–3 s, 1.14 restarts 50–800 ms, 1.14 boots ms after
  // the status), several seeds: every provably current node is skipped, every reboot proven.
  it.each([11, 23, 37])('seed %i: fresh nodes skipped, 1.14 restarts skipped, stale 1.13 rebooted and proven', async (seed) => {
    c = await startCluster({ defaultNodes: false, seed });
    c.addNode({ name: 'fresh-113', role: 'worker', current: true, bootedAgoMs: 120_000 });
    c.addNode({ name: 'stale-113', role: 'worker' });
    c.addNode({ name: 'stale-114', role: 'worker', version: '1.14' });
    c.addNode({ name: 'fresh-114', role: 'worker', version: '1.14', current: true, bootedAgoMs: 120_000 });
    const run = await act(c, { 'cri-restart-wait': '10s' });
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run);
    for (const n of ['fresh-113', 'stale-114', 'fresh-114']) {
      expect(d[n].outcome, `${n}: ${d[n].reason}`).toBe('reboot-skipped');
      expect(drainRequests(c, n)).toEqual([]);
    }
    expectApiGap(d['fresh-113'].evidence, c, 'fresh-113');
    expectApiGap(d['fresh-114'].evidence, c, 'fresh-114');
    expectApiGap(d['stale-114'].proof, c, 'stale-114');
    expect(d['stale-113'].outcome, d['stale-113'].reason).toBe('rebooted');
    expect(d['stale-113'].proof?.verdict).toBe('skip');
    expectApiGap(d['stale-113'].proof, c, 'stale-113');
    for (const n of ['fresh-113', 'stale-113', 'stale-114', 'fresh-114']) {
      expectReleasedVerified(c, n);
      expect(c.talos.imagePull.pull(n, 'ghcr.io/acme/private:1').ok).toBe(true);
    }
  });
});
