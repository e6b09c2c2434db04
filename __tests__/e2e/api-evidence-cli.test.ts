// End to end: a talosconfig without a client certificate falls back to talosctl, says so, and its
// second-rounded readings cannot order the sub-second gaps the Talos API orders (api-evidence.test.ts).
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type SimCluster } from '../../sim/cluster.js';
import { expectReleasedVerified, values } from './apiEvidence.js';
import { act, byName, requireKubectl, startCluster } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

describe('e2e: a talosconfig without a client certificate falls back to talosctl', () => {
  it('says so in the log and the summary, and the evidence names the CLI path', async () => {
    c = await startCluster({ defaultNodes: false, cliPath: true });
    c.addNode({ name: 'worker-1', role: 'worker' });
    const run = await act(c);
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.stdout).toMatch(/reading Talos through talosctl: .*talosconfig, context "sim": the context has no client certificate/);
    expect(run.stdout).toMatch(/talosctl prints instants to the second/);
    expect(run.summary).toMatch(/<b>Talos readings:<\/b> reading Talos through talosctl: .*no client certificate/);
    const d = byName(run)['worker-1'];
    expect(d.outcome).toBe('rebooted');
    expect(values(d.evidence).readPath).toBe('cli');
    expect(values(d.proof).readPath).toBe('cli');
  });

  it('a reboot whose 0.6 s boot gap talosctl cannot order is released with a warning naming the residual risk', async () => {
    // the write at .100 s of its second: the 0.6 s gap stays inside that second, where talosctl's
    // second-rounded instants cannot order it (across a second boundary they can, and then they do)
    c = await startCluster({ defaultNodes: false, cliPath: true, realisticTimings: true, bootGapMs: 600, bootWriteMsOfSecond: 100 });
    c.addNode({ name: 'worker-1', role: 'worker' });
    const run = await act(c);
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run)['worker-1'] as any;
    expect(d.outcome).toBe('rebooted');
    expect(d.proof.ordering).toBe('undecidable');
    expect(d.proofUndecided).toMatchObject({ settledBy: 'warning' });
    expectReleasedVerified(c, 'worker-1');
    const warning = run.annotations.find((a) => a.kind === 'warning' && a.title.startsWith('worker-1'));
    expect(warning?.title).toBe('worker-1: rebooted and released, but the proof is undecided');
    expect(warning?.message).toMatch(/Residual risk: containerd may have read its CRI config before the credential for ghcr\.io/);
    expect(run.summary).toMatch(/rebooted \(proof undecided; ⚠️ released with a warning\)/);
  });

  it('the same with verify-image: containerd pulls the image and proves it', async () => {
    // the write at .100 s of its second: the 0.6 s gap stays inside that second, where talosctl's
    // second-rounded instants cannot order it (across a second boundary they can, and then they do)
    c = await startCluster({ defaultNodes: false, cliPath: true, realisticTimings: true, bootGapMs: 600, bootWriteMsOfSecond: 100 });
    c.addNode({ name: 'worker-1', role: 'worker' });
    const run = await act(c, { 'verify-image': 'ghcr.io/acme/private:1', 'verify-namespace': 'default' });
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run)['worker-1'] as any;
    expect(d.outcome).toBe('rebooted');
    expect(d.proofUndecided, JSON.stringify(d.proof)).toMatchObject({ settledBy: 'verify-image' });
    expect(d.reason).toMatch(/proven instead by pulling ghcr\.io\/acme\/private:1 through containerd/);
    expect(run.annotations.filter((a) => a.kind === 'warning')).toEqual([]);
    expectReleasedVerified(c, 'worker-1');
  });
});
