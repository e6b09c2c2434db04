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
    // a gap the second-rounded readings can order when the `talosctl service cri` call they rest on is
    // quick: its "(D ago)" places the launch no earlier than the call's start minus the age, so a call
    // that a loaded machine stretches over seconds widens the bounds past the gap, and then the action
    // (rightly) cannot order it and reboots. What holds on any machine: nothing is released on the old
    // containerd, the bounds hold the truth, and an undecided proof means a reboot; the skip itself is
    // required whenever that call was quick enough for the bounds to decide.
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
    const proof = d.proof as any;
    expect(proof.values.readPath).toBe('cli');
    // the service call the launch's bounds rest on: the runner's window, which the twin saw the call inside
    const before = Date.parse(proof.values.runnerWindow.before);
    const after = Date.parse(proof.values.runnerWindow.after);
    expect(c.talos.commands.some((r) => r.path === 'service' && r.at >= before && r.at <= after)).toBe(true);
    // "Running pre state" comes at most 10 ms before the launch, 5 s after the write (timing.ts); its age
    // is rounded to the second and printed somewhere in the window, the write's time is to the second:
    // the low end is at least 4990 − window − 1000 − 999 ms, past the margin for a window under this
    const decidableUnderMs = 2991 - proof.values.marginMs;
    if (after - before < decidableUnderMs)
      expect(d.outcome, `${d.reason}; service cri read in ${after - before} ms`).toBe('reboot-skipped');
    if (d.outcome === 'reboot-skipped') {
      expect(proof.verdict).toBe('skip');
      expect(d.reason).toMatch(/Talos restarted cri/);
      expect(reboots(c, 'worker-1')).toHaveLength(0);
      // the restarted containerd still runs: the bounds hold its true gap
      expect(proof.values.gap.lowMs).toBeLessThanOrEqual(trueGap(c, 'worker-1'));
      expect(proof.values.gap.highMs).toBeGreaterThanOrEqual(trueGap(c, 'worker-1'));
    } else {
      // undecided (never a contradiction: the restart came after the write), so rebooted
      expect(d.outcome, d.reason).toBe('rebooted');
      expect(proof.ordering).toBe('undecidable');
      expect(proof.values.gap.lowMs).toBeLessThanOrEqual(proof.values.marginMs);
      expect(proof.values.gap.highMs).toBeGreaterThanOrEqual(4990);
      expect(reboots(c, 'worker-1')).toHaveLength(1);
    }
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
