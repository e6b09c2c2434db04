// End to end: the reboot decision (the second bug) and the proof through containerd.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type SimCluster } from '../../sim/cluster.js';
import { A, act, byName, drainRequests, node, REVISION, reboots, requireKubectl, startCluster, verifiedRev } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

describe('e2e: evidence decides the reboot', () => {
  it('a desired-revision marker stamped by `ksail cluster update` is not evidence: the node is rebooted', async () => {
    c = await startCluster({ defaultNodes: false });
    c.addNode({ name: 'worker-1', role: 'worker' });
    c.talos.stampConfigMarker('worker-1', REVISION);
    const run = await act(c);
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run)['worker-1'];
    expect(d.outcome).toBe('rebooted');
    expect(d.evidence?.verdict).toBe('reboot');
    expect(reboots(c, 'worker-1')).toHaveLength(1);
    expect(c.talos.imagePull.pull('worker-1', 'ghcr.io/acme/private:1').ok).toBe(true);
  });

  it('a node rebooted two minutes ago but holding the old credential is rebooted (start-after-write alone is not proof)', async () => {
    c = await startCluster({ defaultNodes: false });
    c.addNode({ name: 'worker-1', role: 'worker', bootedAgoMs: 120_000 });
    const run = await act(c);
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run)['worker-1'];
    expect(d.outcome).toBe('rebooted');
    expect(d.evidence?.reason).toMatch(/old credential/);
    expect(reboots(c, 'worker-1')).toHaveLength(1);
  });

  it('on Talos 1.14 the patch makes cri restart by itself: no drain, no reboot, proven by the new start', async () => {
    // The twin's restart is drawn from 50–800 ms after the write, as on real 1.14: the API's
    // nanosecond readings order it (talosctl's cannot: next describe).
    c = await startCluster({ defaultNodes: false });
    c.addNode({ name: 'worker-1', role: 'worker', version: '1.14' });
    const pidBefore = c.talos.node('worker-1').containerd.pid;
    const run = await act(c);
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run)['worker-1'];
    expect(d.outcome).toBe('reboot-skipped');
    expect(d.reason).toMatch(/Talos restarted cri/);
    expect(d.proof?.verdict).toBe('skip');
    expect(drainRequests(c, 'worker-1')).toEqual([]);
    expect(reboots(c, 'worker-1')).toEqual([]);
    expect(c.talos.node('worker-1').containerd.pid).not.toBe(pidBefore);
    expect(c.talos.imagePull.pull('worker-1', 'ghcr.io/acme/private:1').ok).toBe(true);
    expect(verifiedRev(node(c, 'worker-1').metadata.annotations)).toBe(REVISION);
  });
});

describe('e2e: verify-image proves the credential through containerd', () => {
  it('passes after a reboot, and the probe pod is gone', async () => {
    c = await startCluster({ defaultNodes: false });
    c.addNode({ name: 'worker-1', role: 'worker' });
    const run = await act(c, { 'verify-image': 'ghcr.io/acme/private:1', 'verify-namespace': 'default' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(byName(run)['worker-1'].outcome).toBe('rebooted');
    expect(c.kube.pods().filter((p: any) => p.metadata.name.startsWith('registry-auth-verify'))).toEqual([]);
    expect(c.kube.requests.some((r) => r.method === 'POST' && r.path === '/api/v1/namespaces/default/pods')).toBe(true);
  });

  it('catches a node whose containerd kept the old credential although the evidence looked fine, and leaves it fenced', async () => {
    c = await startCluster({ defaultNodes: false });
    // A twin-level lie: the files carry the new credential and predate containerd's start, but
    // containerd loaded the old one. The evidence rule is fooled (reboot: evidence skips); the probe is not.
    c.addNode({ name: 'worker-1', role: 'worker', staleContainerd: true });
    const run = await act(c, { 'verify-image': 'ghcr.io/acme/private:1', 'verify-namespace': 'default' });
    expect(run.exitCode).toBe(1);
    const d = byName(run)['worker-1'];
    expect(d.evidence?.verdict).toBe('skip');
    expect(d.outcome).toBe('failed');
    expect(d.reason).toMatch(/could not pull/);
    expect(d.nextStep).toMatch(/kubectl .*patch node worker-1 --type=json/);
    const n = node(c, 'worker-1');
    expect(n.spec.unschedulable).toBe(true);
    expect(n.metadata.annotations[A.owner]).toBeTruthy();
    expect(n.metadata.annotations[A.phase]).toBe('mutating');
    expect(n.metadata.annotations[A.verified]).toBeUndefined();
    expect(run.annotations.some((a) => a.kind === 'error' && a.title.startsWith('worker-1'))).toBe(true);
  });
});
