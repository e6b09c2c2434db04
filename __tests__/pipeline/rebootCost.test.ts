// What a rebooted node costs in kubectl processes, and the order after the reboot that makes it so:
// the proof (Talos reads only) is judged before the wait for Ready ends, and the last Ready read,
// which carries the run Lease beside the node, is the fence read of the release (no read between).
import { describe, expect, it } from 'vitest';
import type { KubeClient, TalosClient } from '../../src/adapters/types.js';
import { STEP } from '../../src/core/steps.js';
import { makeCluster, roll, verifiedRev } from './harness.js';

type Cluster = ReturnType<typeof makeCluster>;

/**
 * Every port call in one log, in order. A kube method is one kubectl process (the fake splits
 * `get node/N lease/L` into its two GETs internally; calls the fake makes on itself are not counted).
 */
function recording(c: Cluster) {
  const log: Array<{ port: 'kube' | 'talos'; method: string; node?: string }> = [];
  const wrap = <T extends object>(target: T, port: 'kube' | 'talos'): T =>
    new Proxy(target, {
      get(t, prop, receiver) {
        const v = Reflect.get(t, prop, receiver) as unknown;
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          log.push({ port, method: String(prop), node: typeof args[0] === 'string' ? args[0] : undefined });
          return (v as (...a: unknown[]) => unknown).apply(t, args);
        };
      },
    });
  return { log, kube: wrap<KubeClient>(c.kube, 'kube'), talos: wrap<TalosClient>(c.talos, 'talos') };
}

/** kubectl processes started for node `name` (the Lease's own renewals are not the node's). */
function kubeProcesses(log: ReturnType<typeof recording>['log'], name: string): string[] {
  return log.filter((e) => e.port === 'kube' && e.node === name).map((e) => e.method);
}

describe('a rebooted node, after the reboot', () => {
  it('costs 10 kubectl processes: the Ready read is the release fence read', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const r = recording(c);
    const res = await roll(c, { reboot: 'always' }, { kube: r.kube, talos: r.talos });
    expect(res.records[0].outcome).toBe('rebooted');
    expect(kubeProcesses(r.log, 'w1')).toEqual([
      'getNode', // read node
      'patchNode', // claim
      'patchNode', // phase=mutating
      'getNodeAndLease', // re-read (before the credential patch)
      'getNodeAndLease', // guard (before drain)
      'watchNode', // the drain's watch, started first
      'drain',
      'getNodeAndLease', // guard (after drain)
      'getNodeAndLease', // wait for Ready: one poll, node and Lease in one command
      'patchNode', // release
    ]);
    expect(res.records[0].steps.map((s) => s.name)).not.toContain('re-read node (before the release)');
  });

  it('reads the proof before the wait for Ready ends, and releases right after the Ready read', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const r = recording(c);
    const res = await roll(c, { reboot: 'always' }, { kube: r.kube, talos: r.talos });
    const steps = res.records[0].steps.map((s) => s.name);
    const at = (name: string) => steps.indexOf(name);
    expect(at('reboot')).toBeGreaterThanOrEqual(0);
    expect(at('prove the new credential is loaded')).toBe(at('reboot') + 1);
    expect(at('wait for Ready')).toBe(at('prove the new credential is loaded') + 1);
    expect(at('release')).toBe(at('wait for Ready') + 1);

    const reboot = r.log.findIndex((e) => e.port === 'talos' && e.method === 'reboot');
    const after = r.log.slice(reboot + 1);
    const readyRead = after.findIndex((e) => e.port === 'kube' && e.node === 'w1');
    expect(after[readyRead].method).toBe('getNodeAndLease');
    // the proof's Talos reads all come before the Ready read
    expect(after.slice(0, readyRead).filter((e) => e.port === 'talos').length).toBeGreaterThan(0);
    expect(after.slice(readyRead + 1).filter((e) => e.port === 'talos')).toEqual([]);
    // and nothing is read of the node between the Ready read and the release
    const release = after.findIndex((e, i) => i > readyRead && e.method === 'patchNode');
    expect(after.slice(readyRead + 1, release).filter((e) => e.node === 'w1')).toEqual([]);
  });

  it('a proof that contradicts stops the node before the wait for Ready (left fenced)', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.talos.rebootGapMs = -5000;
    const res = await roll(c, { reboot: 'always' });
    const steps = res.records[0].steps.map((s) => s.name);
    expect(res.records[0].outcome).toBe('failed');
    expect(res.records[0].reason).toMatch(/after the reboot \(a new boot\) the evidence contradicts/);
    expect(steps).not.toContain('wait for Ready');
  });

  it('with verify-image, a fresh fence read still precedes the release (the pull ran in between)', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const res = await roll(c, { reboot: 'always', verifyImage: 'ghcr.io/acme/private:1' });
    const steps = res.records[0].steps.map((s) => s.name);
    expect(res.records[0].outcome).toBe('rebooted');
    expect(steps.indexOf('release')).toBe(steps.indexOf('re-read node (before the release)') + 1);
  });
});

describe('the proof read right after the reboot', () => {
  it('Talos answers before it lists cri (apid starts long before cri is loaded): the proof is read again, not failed', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.talos.criUnlistedMs = 4000;
    const res = await roll(c, { reboot: 'always' });
    const r = res.records[0];
    expect(r.outcome, r.reason).toBe('rebooted');
    expect(r.proof?.values.criState).toBe('Running');
    expect(verifiedRev(c.kube.state('w1'))).toBe('rev-2');
    // the wait for cri is a step of its own, right after the first reading: a wait on the boot, not the proof's work
    const names = r.steps.map((s) => s.name);
    expect(names.indexOf(STEP.waitProofFinal)).toBe(names.indexOf(STEP.prove) + 1);
    expect(r.steps.find((s) => s.name === STEP.waitProofFinal)!.durationMs).toBeGreaterThanOrEqual(3000);
  });

  it('a proof whose first reading finds cri up records no wait for it', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const r = (await roll(c, { reboot: 'always' })).records[0];
    expect(r.outcome, r.reason).toBe('rebooted');
    expect(r.steps.map((s) => s.name)).toContain(STEP.prove);
    expect(r.steps.map((s) => s.name)).not.toContain(STEP.waitProofFinal);
  });

  it('a cri that is never listed still fails the proof at the ready-timeout, left fenced', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.talos.criUnlistedMs = 3_600_000;
    const res = await roll(c, { reboot: 'always', readyTimeoutMs: 60_000 });
    const r = res.records[0];
    expect(r.outcome).toBe('failed');
    expect(r.reason).toMatch(/the cri service status could not be read: .*lists no service "cri"/);
    expect(c.kube.state('w1').unschedulable).toBe(true);
  });
});
