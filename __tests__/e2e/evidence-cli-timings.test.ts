// End to end: realistic timings read through talosctl, whose readings are rounded to the second.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NEW_CREDENTIAL, type SimCluster } from '../../sim/cluster.js';
import { trueGap } from './apiEvidence.js';
import { act, byName, containerdAtNodeWrites, reboots, requireKubectl, startCluster } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

describe('e2e: realistic timings read through talosctl', () => {
  // Through talosctl an instant is known only to about a second, so whether a sub-2 s gap can be
  // ordered depends on where in their seconds the two instants fall. Whichever way the bounds go, they
  // must hold the truth, and the action must act on them: skip only when the low end clears the margin.
  it('a 1.14 restart 300 ms after the write, read through talosctl: skipped only when the second-rounded bounds order it, rebooted otherwise', async () => {
    c = await startCluster({ defaultNodes: false, cliPath: true, criRestartMs: 300 });
    c.addNode({ name: 'worker-1', role: 'worker', version: '1.14' });
    const run = await act(c, { 'cri-restart-wait': '3s' });
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run)['worker-1'];
    const proof = d.proof as any;
    if (d.outcome === 'reboot-skipped') {
      // proven by the restart Talos made itself (a reboot's proof would be of another start)
      expect(proof.verdict).toBe('skip');
      expect(proof.values.readPath).toBe('cli');
      expect(proof.values.gap.lowMs).toBeGreaterThan(proof.values.marginMs);
      // the bounds hold the gap the twin laid out: 300 ms on a quiet machine, more on a loaded one (the
      // restart's events are stamped when its timers fire), so the truth is the twin's record, not 300
      const gap = trueGap(c, 'worker-1');
      expect(gap).toBeGreaterThanOrEqual(290);
      expect(proof.values.gap.lowMs).toBeLessThanOrEqual(gap);
      expect(proof.values.gap.highMs).toBeGreaterThanOrEqual(gap);
      expect(reboots(c, 'worker-1')).toHaveLength(0);
    } else {
      expect(d.outcome).toBe('rebooted');
      expect(reboots(c, 'worker-1')).toHaveLength(1);
    }
  });

  it('a cri.toml write landing between the talosctl reads after the patch never releases the containerd that still holds the old credential', async () => {
    // As over the API (api-evidence.test.ts): the patch's write lands right before the first
    // `talosctl read` of cri.toml after the patch is answered. The restart follows 5 s after the write,
    // a gap the second-rounded readings can order.
    c = await startCluster({ defaultNodes: false, cliPath: true });
    c.addNode({ name: 'worker-1', role: 'worker', version: '1.14' });
    const pidBefore = c.talos.node('worker-1').containerd.pid;
    c.talos.holdNextWrite('worker-1', { command: 'read', target: '/etc/cri/conf.d/cri.toml' });
    const atWrites = containerdAtNodeWrites(c, 'worker-1');
    const run = await act(c);
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run)['worker-1'];
    expect(c.talos.node('worker-1').files.get('/etc/cri/conf.d/cri.toml')!.content).toContain(NEW_CREDENTIAL.password);
    expect(atWrites.at(-1)!.pid).not.toBe(pidBefore);
    expect(atWrites.at(-1)!.loaded).toMatchObject({ username: NEW_CREDENTIAL.username, password: NEW_CREDENTIAL.password });
    expect(d.outcome, d.reason).toBe('reboot-skipped');
    expect(d.reason).toMatch(/Talos restarted cri/);
  });

  it('a fresh 1.13 node whose cri started 1.2 s after cri.toml, read through talosctl: the bounds hold the true gap; undecidable means rebooted, never contradicted', async () => {
    // Over the Talos API this node is always skipped; through talosctl its second-rounded readings
    // order it only when the two instants fall favourably in their seconds. A reboot then uses the
    // pinned, CLI-decidable boot gap, so the proof holds.
    c = await startCluster({ defaultNodes: false, cliPath: true });
    c.addNode({ name: 'worker-1', role: 'worker', current: true, bootedAgoMs: 120_000, bootGapMs: 1250 });
    const n = c.talos.node('worker-1');
    const gap = n.containerd.startedAtMs - n.files.get('/etc/cri/conf.d/cri.toml')!.mtimeMs;
    expect(gap).toBeGreaterThan(1200);
    expect(gap).toBeLessThan(1300);
    const run = await act(c);
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run)['worker-1'];
    const ev = d.evidence as any;
    expect(ev.contradicts).toBe(false);
    expect(ev.values.readPath).toBe('cli');
    // the bounds hold the true gap (on the node clock, the launch's lower bound is a pre-launch event)
    expect(ev.values.gap.lowMs).toBeLessThanOrEqual(gap);
    expect(ev.values.gap.highMs).toBeGreaterThanOrEqual(gap);
    if (ev.verdict === 'skip') {
      expect(ev.values.gap.lowMs).toBeGreaterThan(ev.values.marginMs);
      expect(d.outcome).toBe('reboot-skipped');
    } else {
      expect(ev.ordering).toBe('undecidable');
      expect(d.outcome).toBe('rebooted');
    }
  });

  it('a node whose containerd started before cri.toml was written (≤1.13 fault) is rebooted', async () => {
    c = await startCluster({ defaultNodes: false, cliPath: true });
    c.addNode({ name: 'worker-1', role: 'worker', current: true, bootedAgoMs: 120_000, criFirst: true });
    const run = await act(c);
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run)['worker-1'];
    expect(d.evidence?.verdict).toBe('reboot');
    expect(['before', 'undecidable']).toContain((d.evidence as any).ordering);
    expect(d.outcome).toBe('rebooted');
    expect(reboots(c, 'worker-1')).toHaveLength(1);
    expect(c.talos.imagePull.pull('worker-1', 'ghcr.io/acme/private:1').ok).toBe(true);
  });
});
