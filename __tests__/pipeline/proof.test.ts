// The post-reboot proof: undecidable is not a failed roll (released with a warning, or proven by
// verify-image); contradicted stays a failure (left fenced).
import { describe, expect, it } from 'vitest';
import { buildAnnotations } from '../../src/report/annotations.js';
import { buildOutputs } from '../../src/report/outputs.js';
import { renderSummary } from '../../src/report/summary.js';
import { keys, makeCluster, NEW, OLD, OWNER, roll, verifiedRev } from './harness.js';

describe('the post-reboot proof', () => {
  it('undecidable (boot gap within the margin on second readings): rebooted, released with a warning naming the residual risk', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.talos.rebootGapMs = 500; // containerd 0.5 s after the boot-time write: seconds cannot order it
    const res = await roll(c);
    const r = res.records[0];
    expect(r.proof?.verdict).toBe('reboot');
    expect(r.proof?.ordering).toBe('undecidable');
    expect(r.outcome).toBe('rebooted');
    expect(res.result).toBe('processed');
    expect(r.proofUndecided).toMatchObject({ settledBy: 'warning', unproven: r.proof!.reason });
    expect(r.reason).toMatch(/the proof is undecided: .*cannot be proven.*released with a warning/);
    const s = c.kube.state('w1');
    expect(s.unschedulable).toBe(false);
    expect(s.annotations[keys.owner]).toBeUndefined();
    expect(verifiedRev(s)).toBe('rev-2');
    // the marker says the proof was undecided: every later run counts the node until one proves it
    expect(JSON.parse(s.annotations[keys.verified])['ghcr.io']).toMatchObject({ revision: 'rev-2', proof: 'undecided' });

    const warnings = buildAnnotations(res.records).filter((a) => a.kind === 'warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0].title).toMatch(/w1: rebooted and released, but the proof is undecided/);
    expect(warnings[0].message).toMatch(/Could not prove: containerd .*started .*after the last write/);
    expect(warnings[0].message).toMatch(/Residual risk: containerd may have read its CRI config before the credential for ghcr\.io/);
    expect(warnings[0].message).toMatch(/set verify-image and rerun .*proves w1 by a pull, with no drain and no reboot/);
    const decisions = JSON.parse(buildOutputs(res).decisions);
    expect(decisions[0].proofUndecided).toMatchObject({ settledBy: 'warning' });
    expect(buildOutputs(res).rebooted).toBe('1');
    expect(renderSummary({ mode: 'apply', registry: ['ghcr.io'], revision: 'rev-2', result: res.result, records: res.records })).toMatch(
      /rebooted \(proof undecided; ⚠️ released with a warning\)/,
    );
  });

  it('undecidable with verify-image: containerd pulling the image proves it, and no warning is raised', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.talos.rebootGapMs = 500;
    const res = await roll(c, { verifyImage: 'ghcr.io/acme/private:1' });
    const r = res.records[0];
    expect(r.outcome).toBe('rebooted');
    expect(r.proofUndecided).toMatchObject({ settledBy: 'verify-image' });
    expect(r.reason).toMatch(/proven instead by pulling ghcr\.io\/acme\/private:1 through containerd/);
    expect(r.steps.some((s) => s.name.startsWith('verify ghcr.io/acme/private:1') && s.ok)).toBe(true);
    expect(verifiedRev(c.kube.state('w1'))).toBe('rev-2');
    expect(JSON.parse(c.kube.state('w1').annotations[keys.verified])['ghcr.io']).toMatchObject({ proof: 'verify-image' });
    expect(buildAnnotations(res.records).filter((a) => a.kind === 'warning')).toEqual([]);
  });

  it('undecidable with verify-image that fails to pull: left fenced', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.talos.rebootGapMs = 500;
    c.kube.pull = () => ({ ok: false, reason: '401 Unauthorized' });
    const res = await roll(c, { verifyImage: 'ghcr.io/acme/private:1' });
    expect(res.records[0].outcome).toBe('failed');
    const s = c.kube.state('w1');
    expect(s.unschedulable).toBe(true);
    expect(s.annotations[keys.owner]).toBe(OWNER);
  });

  it('contradicted (containerd provably started before the boot-time write): failed, left fenced', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.talos.rebootGapMs = -5000;
    const res = await roll(c);
    const r = res.records[0];
    expect(r.proof?.ordering).toBe('before');
    expect(r.proof?.contradicts).toBe(true);
    expect(r.outcome).toBe('failed');
    expect(r.proofUndecided).toBeUndefined();
    expect(r.reason).toMatch(/evidence contradicts that containerd loaded/);
    const s = c.kube.state('w1');
    expect(s.unschedulable).toBe(true);
    expect(s.annotations[keys.owner]).toBe(OWNER);
    expect(s.annotations[keys.phase]).toBe('mutating');
    expect(verifiedRev(s)).toBeUndefined();
  });

  it('contradicted (an old credential in the file after the reboot), even on an undecidable ordering: failed, left fenced', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.talos.rebootGapMs = 500;
    const hook = c.talos.rebootHook!;
    c.talos.rebootHook = (n) => {
      for (const f of Object.values(n.files)) f.auth = { 'ghcr.io': { ...OLD } };
      hook(n);
    };
    const res = await roll(c);
    expect(res.records[0].proof?.contradicts).toBe(true);
    expect(res.records[0].outcome).toBe('failed');
    expect(c.kube.state('w1').annotations[keys.owner]).toBe(OWNER);
  });
});

// Right after a reboot cri may have (re)started a moment ago: Running with health "?" until its
// first check (1 s after the launch), or not launched yet. That is a cri on its way up, not a
// failed proof: the proof is read again until cri is Running and healthy or ready-timeout passes.
describe('the post-reboot proof waits for a cri still coming up', () => {
  const criReads = (c: ReturnType<typeof makeCluster>) => c.talos.calls.filter((x) => x.method === 'criService').length;

  it.each([
    ['Running, health "?" (restarted a moment ago)', { state: 'Running', health: '?' }],
    ['Starting (its run not launched yet)', { state: 'Starting', health: '?' }],
    ['Running, its first health check failed', { state: 'Running', health: 'Fail' }],
  ])('cri %s for 5 s after the node is Ready: read again until healthy, proven and released', async (_what, as) => {
    const c = makeCluster([{ name: 'w1' }]);
    c.talos.criComingUp = { forMs: 5000, as };
    const res = await roll(c);
    const r = res.records[0];
    expect(r.outcome, r.reason).toBe('rebooted');
    expect(res.result).toBe('processed');
    expect(r.proof?.verdict).toBe('skip');
    expect(r.proof?.values.criHealth).toBe('OK');
    expect(r.proofUndecided).toBeUndefined();
    const s = c.kube.state('w1');
    expect(s.unschedulable).toBe(false);
    expect(s.annotations[keys.owner]).toBeUndefined();
    expect(verifiedRev(s)).toBe('rev-2');
  });

  it('cri never healthy within ready-timeout: the last reading decides (left fenced), and the reads stop at the deadline', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.talos.criComingUp = { forMs: 3_600_000, as: { state: 'Running', health: '?' } };
    const res = await roll(c, { readyTimeoutMs: 60_000 });
    const r = res.records[0];
    expect(r.outcome).toBe('failed');
    expect(r.reason).toMatch(/the cri service is Running but its health is \?, not OK/);
    expect(c.kube.state('w1').annotations[keys.owner]).toBe(OWNER);
    // one evidence read before the patch, then one per poll (1 s) within the 60 s after the reboot
    expect(criReads(c)).toBeGreaterThan(20);
    expect(criReads(c)).toBeLessThanOrEqual(62);
  });

  it('a proof that cri being healthy would not change (an old credential) is still judged once cri is up, not waited on longer', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.talos.criComingUp = { forMs: 3000, as: { state: 'Running', health: '?' } };
    const hook = c.talos.rebootHook!;
    c.talos.rebootHook = (n) => {
      for (const f of Object.values(n.files)) f.auth = { 'ghcr.io': { ...OLD } };
      hook(n);
    };
    const res = await roll(c);
    expect(res.records[0].outcome).toBe('failed');
    expect(res.records[0].proof?.contradicts).toBe(true);
    expect(res.records[0].proof?.values.criHealth).toBe('OK');
    expect(criReads(c)).toBeLessThanOrEqual(1 + 4);
  });
});

// Talos answers with the new boot id before machined has written the CRI files
// of the rebuilt /etc (a tmpfs, written by its controllers once the machine config is loaded), and an
// absence seen before the reboot or earlier in the boot is no fact about the next reading: the proof
// reads again whatever its reading needs and judges only a complete reading. At the run's default
// poll interval (2 s), not a shortened one: the bug hid behind a poll shorter than the boot.
describe('the post-reboot proof: an absence seen earlier is no fact about the next reading', () => {
  const CRI = '/etc/cri/conf.d/cri.toml';
  const PART = '/etc/cri/conf.d/01-registries.part';
  const DEFAULT_POLL = { pollIntervalMs: undefined };
  const reads = (c: ReturnType<typeof makeCluster>, method: string) => c.talos.calls.filter((x) => x.method === method).length;

  it('cri.toml written 0.9 s after Talos answers and cri 0.3 s later: the reading after the absent one reads the files, the node is released', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.talos.filesAfterRebootMs = 900;
    c.talos.rebootGapMs = 300;
    const res = await roll(c, { reboot: 'always' }, DEFAULT_POLL);
    const r = res.records[0];
    expect(r.outcome, r.reason).toBe('rebooted');
    expect(r.proof?.incomplete).toBeUndefined();
    expect(r.proof?.values.files.map((f) => [f.exists, f.credential])).toEqual([
      [true, 'desired'],
      [true, 'desired'],
    ]);
    const s = c.kube.state('w1');
    expect(s.annotations[keys.owner]).toBeUndefined();
    expect(verifiedRev(s)).toBe('rev-2');
    expect(s.unschedulable).toBe(false);
  });

  it('the registry part missing before the reboot (the reading before the patch listed it absent), rendered at the boot: read and proven', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const n = c.talos.nodes.get('10.0.0.10')!;
    delete n.files[PART];
    const hook = c.talos.rebootHook!;
    c.talos.rebootHook = (t) => {
      // the boot renders it from the patched machine config
      t.files[PART] = { mtimeMs: t.files[CRI].mtimeMs, auth: { 'ghcr.io': { ...NEW } } };
      hook(t);
    };
    const res = await roll(c, {}, DEFAULT_POLL);
    const r = res.records[0];
    expect(r.evidence?.values.files.find((f) => f.path === PART)?.exists).toBe(false);
    expect(r.outcome, r.reason).toBe('rebooted');
    expect(r.proof?.verdict).toBe('skip');
    expect(verifiedRev(c.kube.state('w1'))).toBe('rev-2');
    // the proof read both files: the absence before the reboot saved no read after it
    expect(reads(c, 'readAuth')).toBe(2 + 2);
  });

  it('no config file at all before the reboot: rebooted, and the files the boot rendered prove it', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const n = c.talos.nodes.get('10.0.0.10')!;
    const paths = Object.keys(n.files);
    n.files = {};
    const hook = c.talos.rebootHook!;
    c.talos.rebootHook = (t) => {
      t.files = Object.fromEntries(paths.map((p) => [p, { mtimeMs: t.criStartedAtMs - 6000, auth: { 'ghcr.io': { ...NEW } } }]));
      hook(t);
    };
    const res = await roll(c, {}, DEFAULT_POLL);
    const r = res.records[0];
    expect(r.evidence?.reason).toMatch(/none of the CRI config files exists/);
    expect(r.outcome, r.reason).toBe('rebooted');
    expect(r.proof?.verdict).toBe('skip');
  });

  it('a reading still incomplete at the ready-timeout (cri up, the files never written) fails the proof, left fenced', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.talos.filesAfterRebootMs = 3_600_000;
    const hook = c.talos.rebootHook!;
    c.talos.rebootHook = (t) => {
      // cri up at once, whatever the files
      t.criUnlistedUntilMs = undefined;
      t.criStartedAtMs = c.clock.now() - 1000;
      hook(t);
    };
    const res = await roll(c, { reboot: 'always', readyTimeoutMs: 60_000 }, DEFAULT_POLL);
    const r = res.records[0];
    expect(r.outcome).toBe('failed');
    expect(r.proof?.incomplete).toMatch(/none of the CRI config files exists/);
    expect(r.reason).toMatch(/does not prove .*none of the CRI config files exists/);
    expect(c.kube.state('w1').annotations[keys.owner]).toBe(OWNER);
    // read again poll after poll (2 s) until the deadline, not judged at the first complete-looking cri
    expect(reads(c, 'criService')).toBeGreaterThanOrEqual(25);
    expect(reads(c, 'criService')).toBeLessThanOrEqual(32);
  });
});
