// The boot id read before the reboot has its own bound (BOOT_ID_READ_MS, src/pipeline/bootIdBefore.ts):
// reads that fail for a while do not spend the reboot's ready-timeout, which counts from the Reboot's
// answer; reads that fail past the bound send no reboot at all (RebootNotSentError), and the drained
// node is given back as after a failed drain, never rebooted blind and left fenced.
import { describe, expect, it } from 'vitest';
import { BOOT_ID_READ_MS } from '../../src/pipeline/bootIdBefore.js';
import { keys, makeCluster, roll, verifiedRev } from './harness.js';

const SEC = 1000;

describe('the boot id read before the reboot', () => {
  it('reads that fail for most of ready-timeout do not spend it: the reboot gets its whole ready-timeout from its answer', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    // the reboot takes 30 s (FakeTalos); reads fail for 45 of the 60 s of ready-timeout, within the pre-read's own bound
    c.talos.bootIdFailsForMs = 45 * SEC;
    expect(45 * SEC).toBeLessThan(BOOT_ID_READ_MS);
    const res = await roll(c, { reboot: 'always', readyTimeoutMs: 60 * SEC });
    const r = res.records[0];
    expect(r.reason).not.toMatch(/did not answer|did not come back/);
    expect(r.outcome).toBe('rebooted');
    expect(res.result).toBe('processed');
    // sent with the boot id read before it, so the wait for a new one starts at the Reboot's answer
    expect(c.talos.rebootsSentWith).toEqual(['talos-boot-10.0.0.10-0']);
    const s = c.kube.state('w1');
    expect(s.unschedulable).toBe(false);
    expect(s.annotations[keys.owner]).toBeUndefined();
    expect(verifiedRev(s)).toBe('rev-2');
  });

  it('reads that still fail past their bound send no reboot: the node is released, not left fenced, and the run fails', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2' }]);
    c.talos.bootIdFailsForMs = BOOT_ID_READ_MS + 5 * SEC;
    const started = c.clock.now();
    const res = await roll(c, { reboot: 'always' });
    const r = res.records.find((x) => x.node === 'w1')!;
    expect(c.talos.calls.filter((x) => x.method === 'reboot')).toEqual([]);
    expect(r.outcome).toBe('failed');
    expect(r.reason).toMatch(/^the reboot was not sent, so its containerd still holds the old credential: .*boot id.*could not be read/);
    expect(r.reason).toMatch(/Unavailable/);
    expect(r.nextStep).toMatch(/drained but not rebooted, and released again/);
    const s = c.kube.state('w1');
    expect(s.unschedulable).toBe(false);
    expect(s.annotations[keys.owner]).toBeUndefined();
    expect(s.annotations[keys.phase]).toBeUndefined();
    expect(s.annotations[keys.verifiedRevision]).toBeUndefined();
    expect(res.result).toBe('failed');
    expect(res.records.find((x) => x.node === 'w2')).toBeUndefined();
    // the reads stopped at their bound, not at ready-timeout (10 min)
    expect(c.clock.now() - started).toBeLessThan(BOOT_ID_READ_MS + 60 * SEC);
  });

  it('a role that may not read the boot id sends the reboot without it (talosctl follows it by its events)', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.talos.bootIdFailsForMs = 3_600 * SEC;
    c.talos.bootIdFailsWith = 'forbidden';
    const res = await roll(c, { reboot: 'always' });
    expect(res.records[0].outcome).toBe('rebooted');
    expect(c.talos.rebootsSentWith).toEqual([undefined]);
    expect(c.talos.calls.filter((x) => x.method === 'bootId')).toHaveLength(1);
  });
});

describe('a reboot that was never sent releases the drained node', () => {
  it('released, schedulable, no verified marker; the reason says the old credential is still loaded; the run fails', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2' }]);
    c.talos.rebootNotSent = 'the boot id to compare with after the reboot could not be read (read 12 times): rpc error: code = Unavailable';
    const res = await roll(c, { reboot: 'always' });
    const r = res.records.find((x) => x.node === 'w1')!;
    expect(r.outcome).toBe('failed');
    expect(r.reason).toMatch(/^the reboot was not sent, so its containerd still holds the old credential: .*not sent: the boot id/);
    expect(r.nextStep).toMatch(
      /drained but not rebooted, and released again .*without the verified marker.*running containerd still holds the old one/,
    );
    const s = c.kube.state('w1');
    expect(s.unschedulable).toBe(false);
    expect(s.annotations[keys.owner]).toBeUndefined();
    expect(s.annotations[keys.phase]).toBeUndefined();
    expect(verifiedRev(s)).toBeUndefined();
    // a failure stops the roll: w2 was not started
    expect(res.result).toBe('failed');
    expect(res.records.find((x) => x.node === 'w2')).toBeUndefined();
  });

  it('a node cordoned before the run stays cordoned', async () => {
    const c = makeCluster([{ name: 'w1', unschedulable: true }]);
    c.talos.rebootNotSent = 'unavailable';
    const res = await roll(c, { reboot: 'always' });
    expect(res.records[0].outcome).toBe('failed');
    const s = c.kube.state('w1');
    expect(s.unschedulable).toBe(true);
    expect(s.annotations[keys.owner]).toBeUndefined();
    expect(res.records[0].cordonKept).toMatch(/cordoned before this run claimed it: kept as found/);
  });
});
