// End to end: a healthy node must pass its post-reboot proof after a real boot.
// Talos answers with the new boot id before machined has written the CRI files of the rebuilt /etc
// (a tmpfs; its controllers render them from the machine config on their own schedule): on 1.14
// cri.toml is not there yet, on ≤ 1.13 cri.toml holds only the image's parts and 01-registries.part
// is missing (docs/talos-evidence-timing.md). An absence seen before the reboot or earlier in the
// boot is no fact about the next reading: the proof reads again whatever its reading needs, and
// judges only a complete reading. Every run here polls at the run's default interval (2 s), as a
// user's does: a poll shorter than the boot hid the failure.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { act, byName, requireKubectl, startCluster } from './helpers.js';
import { expectRolled, PART } from './bootFiles.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

const CRI = '/etc/cri/conf.d/cri.toml';

// Through talosctl `reboot --wait` returns once the machine is ready, so the files are there by the
// first proof reading; what bit there was an absence seen BEFORE the reboot.

describe('e2e: the proof after a boot that answers before the CRI files are written (the Talos API)', () => {
  // The write 0.9 s after the answer, as in acceptance testing, is a window of wall time the action's
  // first reading (after its 1 s boot id poll) must land in: a run beside two CPU burners read after cri
  // was listed. So the boot is held at its answer, before the write (TalosSim.holdNextBootWindow), until
  // the action has listed the booted node's services; from then the boot runs its window: the write
  // 0.3 to 1.5 s later, cri 0.3 s after it.
  it('1.13, a boot seen in acceptance testing: cri.toml and the registry part written after Talos answers (held until the first reading), cri 0.3 s later', async () => {
    c = await startCluster({ defaultNodes: false, bootGapMs: 300 });
    c.addNode({ name: 'worker-1', role: 'worker', version: '1.13' });
    const cl = c;
    const ip = cl.talos.node('worker-1').ip;
    cl.talos.holdNextBootWindow('worker-1');
    const down = cl.kube.nodeDown.bind(cl.kube);
    let downAt = -1;
    let listedAt = -1;
    cl.kube.nodeDown = (name: string) => {
      down(name);
      if (name === 'worker-1' && downAt < 0) downAt = cl.talos.apiCalls.length;
    };
    const release = setInterval(() => {
      if (downAt < 0 || listedAt >= 0) return;
      const i = cl.talos.apiCalls.findIndex((x, j) => j >= downAt && x.node === ip && x.code === 0 && x.method.endsWith('/ServiceList'));
      if (i < 0) return;
      listedAt = i;
      cl.talos.releaseBootWindow('worker-1');
    }, 20);
    const run = await act(c, { reboot: 'always' }).finally(() => clearInterval(release));
    expect(listedAt, run.stdout).toBeGreaterThanOrEqual(0);
    expectRolled(c, run, 'worker-1');
    // the first reading found cri not there yet, and the next one read the files the boot had written since
    expect(run.stdout).toMatch(/worker-1: after the reboot cri is not readable \(Talos answers before it loads cri\); reading it again/);
    const d = byName(run)['worker-1'] as any;
    expect(d.proof.verdict).toBe('skip');
    expect(d.proof.values.files.map((f: any) => [f.path, f.exists, f.credential])).toEqual([
      [CRI, true, 'desired'],
      [PART, true, 'desired'],
    ]);
  });

  it('1.14: cri.toml written 0.9 s after Talos answers, cri a few ms later', async () => {
    c = await startCluster({ defaultNodes: false, configAfterAnswerMs: 900 });
    c.addNode({ name: 'worker-1', role: 'worker', version: '1.14' });
    const run = await act(c, { reboot: 'always' });
    expectRolled(c, run, 'worker-1');
    expect((byName(run)['worker-1'] as any).proof.verdict).toBe('skip');
  });

  it('the twin drawing its boots (one node per version, two seeds): every node rolled', async () => {
    for (const seed of [1, 2]) {
      c = await startCluster({ defaultNodes: false, seed });
      c.addNode({ name: 'worker-1', role: 'worker', version: '1.13' });
      c.addNode({ name: 'worker-2', role: 'worker', version: '1.14' });
      const run = await act(c, { reboot: 'always' });
      expectRolled(c, run, 'worker-1');
      expectRolled(c, run, 'worker-2');
      await c.stop();
      c = undefined;
    }
  });
});
