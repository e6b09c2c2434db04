// The twin's boot: the node answers before it loads cri and before machined writes the CRI files of the
// rebuilt /etc, as a real Talos boot does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TalosSim } from '../../sim/talos/index.js';
import { OLD } from './fleet.js';
import { recordingHooks, talosctl, until } from './helpers.js';

/** A hang bound for waits on the twin's own timers and talosctl polls: a loaded runner stretches both. */
const HANG_MS = 30_000;

// /etc is rebuilt at every boot and machined's controllers write the CRI files
// from the machine config on their own schedule, so the node answers with its new boot id before
// they are there (the twin's default; configAfterAnswerMs pins the write's delay): 1.14 has no
// cri.toml yet; 1.13 has the cri.toml machined merged at its start from the image's parts alone (no
// registry auth), no 01-registries.part, and writes both once the config is loaded.

describe('after a reboot the node answers before it loads cri (apid in Initialize, cri in StartAllServices / cri.ServiceController)', () => {
  let twin: TalosSim;
  let calls: ReturnType<typeof recordingHooks>;
  // the window before cri is listed; the tests that read inside it hold it open until they have read
  // (TalosSim.holdNextBootWindow), whatever a loaded runner's talosctl processes take, then it runs
  const WINDOW_MS = 8000;
  const services = async (ip: string) =>
    (await talosctl(twin, ['-n', ip, 'service'])).stdout
      .split('\n')
      .slice(1)
      .filter(Boolean)
      .map((l) => l.split(/\s+/)[1]);

  /** Reboot without talosctl's wait (which lasts until the machine is ready) and return once the new boot id answers, as the API client does. */
  const rebootUntilNewBootId = async (t: TalosSim, name: string, ip: string) => {
    const before = t.node(name).bootID;
    expect((await talosctl(t, ['-n', ip, 'reboot', '--wait=false'])).code).toBe(0);
    await until(
      async () => {
        const r = await talosctl(t, ['-n', ip, 'read', '/proc/sys/kernel/random/boot_id']);
        return r.code === 0 && r.stdout.trim() !== before ? true : undefined;
      },
      HANG_MS,
      50,
    );
  };

  beforeAll(async () => {
    calls = recordingHooks();
    twin = await TalosSim.start({ kube: calls, rebootMs: 300, criUnlistedMs: WINDOW_MS });
    twin.addNode({ name: 'v13', ip: '10.0.2.1', role: 'control-plane', version: '1.13', credential: { 'ghcr.io': OLD } });
    twin.addNode({ name: 'v14', ip: '10.0.2.2', role: 'worker', version: '1.14', credential: { 'ghcr.io': OLD } });
  });
  afterAll(async () => {
    await twin.stop();
  });

  it('1.13: the new boot id answers while ServiceList has no cri, kubelet, etcd or trustd; cri comes with StartAllServices', async () => {
    const n = twin.node('v13');
    twin.holdNextBootWindow('v13');
    await rebootUntilNewBootId(twin, 'v13', '10.0.2.1');
    expect(await services('10.0.2.1')).toEqual(['apid', 'auditd', 'containerd', 'dashboard', 'machined', 'syslogd', 'udevd']);
    // talosctl's own text when no node has the service (cmd/talosctl/cmd/talos/service.go)
    const cri = await talosctl(twin, ['-n', '10.0.2.1', 'service', 'cri']);
    expect(cri.code).toBe(1);
    expect(cri.stderr).toContain('service "cri" is not registered on any nodes');
    const pids = await talosctl(twin, ['-n', '10.0.2.1', 'get', 'servicepids', 'cri', '-o', 'yaml']);
    expect(pids.code).toBe(1);
    // the kubelet needs the CRI socket: Kubernetes has not seen the new boot id
    expect(calls.calls.filter((c) => c.includes('v13'))).toEqual(['down v13']);
    twin.releaseBootWindow('v13');

    await until(async () => (n.containerd.health.healthy ? true : undefined), HANG_MS, 20);
    // the window on the twin's own instants (when this client first saw the answer depends on the machine's load)
    expect(n.containerd.startedAtMs - n.answeredAtMs).toBeGreaterThanOrEqual(WINDOW_MS);
    expect(await services('10.0.2.1')).toEqual(expect.arrayContaining(['cri', 'etcd', 'kubelet', 'trustd']));
    expect(calls.calls.filter((c) => c.includes('v13'))).toEqual(['down v13', `up v13 ${n.bootID}`]);
    // the conditions held by then: the run from Starting to the launch took a few ms; cri.toml the
    // 1.13 boot gap before the launch (it may predate the node's answer)
    const starting = n.containerd.events.find((e) => e.msg === 'Starting service')!;
    expect(n.containerd.startedAtMs - starting.ts).toBeLessThan(20);
    const write = n.files.get('/etc/cri/conf.d/cri.toml')!.mtimeMs;
    expect(n.containerd.startedAtMs - write).toBeGreaterThanOrEqual(300);
    expect(n.containerd.startedAtMs - write).toBeLessThanOrEqual(3000);
  });

  it('1.14: cri.toml is not written yet, so no EtcFileStatus and no cri; both come together', async () => {
    const n = twin.node('v14');
    twin.holdNextBootWindow('v14');
    await rebootUntilNewBootId(twin, 'v14', '10.0.2.2');
    expect(n.files.has('/etc/cri/conf.d/cri.toml')).toBe(false);
    const status = await talosctl(twin, ['-n', '10.0.2.2', 'get', 'etcfilestatus', 'cri/conf.d/cri.toml', '-o', 'json']);
    expect(status.code).toBe(1);
    expect(await services('10.0.2.2')).not.toContain('cri');
    const ls = await talosctl(twin, ['-n', '10.0.2.2', 'ls', '-l', '/etc/cri/conf.d/cri.toml']);
    expect(ls.code).not.toBe(0);
    twin.releaseBootWindow('v14');

    await until(async () => (n.containerd.health.healthy ? true : undefined), HANG_MS, 20);
    const write = n.files.get('/etc/cri/conf.d/cri.toml')!.mtimeMs;
    expect(n.containerd.events[0].ts).toBeGreaterThan(n.etcFileStatus.get('cri/conf.d/cri.toml')!.updated);
    expect(n.containerd.startedAtMs - write).toBeGreaterThanOrEqual(2);
    expect(n.containerd.startedAtMs - write).toBeLessThanOrEqual(15);
  });

  it('talosctl reboot (--wait) returns only once the machine is Running and ready, so through it cri is up', async () => {
    const n = twin.node('v13');
    const t0 = Date.now();
    const r = await talosctl(twin, ['-n', '10.0.2.1', 'reboot']);
    expect(r.code).toBe(0);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300 + WINDOW_MS + 1000 - 100);
    expect(r.stderr.trimEnd().split('\n').slice(-2)).toEqual(['"10.0.2.1": events check condition met', '"10.0.2.1": post check passed']);
    expect(n.containerd.health.healthy).toBe(true);
    expect(await services('10.0.2.1')).toContain('cri');
  });

  it('criUnlistedMs Infinity: a boot that never loads cri (stuck before StartAllServices)', async () => {
    const stuck = await TalosSim.start({ kube: recordingHooks(), rebootMs: 100, criUnlistedMs: Infinity });
    try {
      stuck.addNode({ name: 's', ip: '10.0.3.1', role: 'worker', version: '1.13', credential: { 'ghcr.io': OLD } });
      // talosctl's tracker waits for a machine that is never ready, until its --timeout
      const r = await talosctl(stuck, ['-n', '10.0.3.1', 'reboot', '--timeout', '2s']);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/"10\.0\.3\.1": error: rpc error: code = DeadlineExceeded desc = context deadline exceeded\n/);
      expect(r.stderr).not.toContain('events check condition met');
      const cri = await talosctl(stuck, ['-n', '10.0.3.1', 'service', 'cri']);
      expect(cri.stderr).toContain('service "cri" is not registered on any nodes');
      expect(stuck.node('s').containerd.pid).toBe(0);
      expect(stuck.node('s').up).toBe(true);
    } finally {
      await stuck.stop();
    }
  });
});

describe('after a reboot the node answers before machined writes the CRI files of the rebuilt /etc', () => {
  const CRI = '/etc/cri/conf.d/cri.toml';
  const PART = '/etc/cri/conf.d/01-registries.part';
  // the pinned write's delay; the tests that read before it hold the window open until they have read
  // (TalosSim.holdNextBootWindow); the drawn delays (0.3–1.5 s) are checked against the twin's own
  // record of the answer
  const WRITE_MS = 8000;

  /** reboot without talosctl's wait; returns the real time the new boot id first answered */
  const rebootUntilNewBootId = async (t: TalosSim, name: string, ip: string): Promise<number> => {
    const before = t.node(name).bootID;
    expect((await talosctl(t, ['-n', ip, 'reboot', '--wait=false'])).code).toBe(0);
    return until(
      async () => {
        const r = await talosctl(t, ['-n', ip, 'read', '/proc/sys/kernel/random/boot_id']);
        return r.code === 0 && r.stdout.trim() !== before ? Date.now() : undefined;
      },
      HANG_MS,
      20,
    );
  };
  const node = async (version: '1.13' | '1.14', opts: { configAfterAnswerMs?: number; bootGapMs?: number; seed?: number } = {}) => {
    const t = await TalosSim.start({ kube: recordingHooks(), rebootMs: 200, ...opts });
    t.addNode({ name: 'n', ip: '10.0.4.1', role: 'worker', version, credential: { 'ghcr.io': OLD } });
    return t;
  };

  it('1.14: no cri.toml, no EtcFileStatus, no cri at the first answer; cri.toml written configAfterAnswerMs later, cri launched a few ms after it', async () => {
    const t = await node('1.14', { configAfterAnswerMs: WRITE_MS });
    try {
      const n = t.node('n');
      t.holdNextBootWindow('n');
      const answered = await rebootUntilNewBootId(t, 'n', '10.0.4.1');
      expect(n.files.has(CRI)).toBe(false);
      const ls = await talosctl(t, ['-n', '10.0.4.1', 'ls', '-l', CRI]);
      expect(ls.code).not.toBe(0);
      expect((await talosctl(t, ['-n', '10.0.4.1', 'get', 'etcfilestatus', 'cri/conf.d/cri.toml', '-o', 'yaml'])).code).toBe(1);
      expect((await talosctl(t, ['-n', '10.0.4.1', 'service', 'cri'])).stderr).toContain('service "cri" is not registered on any nodes');
      t.releaseBootWindow('n');
      await until(async () => (n.containerd.pid > 0 ? true : undefined), HANG_MS, 20);
      const write = n.files.get(CRI)!.mtimeMs;
      // the write's delay is counted from the node's answer (the twin's own record; held, from the release), which the client saw later
      expect(write - n.answeredAtMs).toBeGreaterThanOrEqual(WRITE_MS - 1);
      expect(answered).toBeLessThan(write);
      expect(n.containerd.startedAtMs - write).toBeGreaterThanOrEqual(2);
      expect(n.containerd.startedAtMs - write).toBeLessThanOrEqual(15);
    } finally {
      await t.stop();
    }
  });

  it('1.13: cri.toml without registry auth and no 01-registries.part at the first answer; both written configAfterAnswerMs later, cri 0.3 s after', async () => {
    const t = await node('1.13', { configAfterAnswerMs: WRITE_MS, bootGapMs: 300 });
    try {
      const n = t.node('n');
      t.holdNextBootWindow('n');
      await rebootUntilNewBootId(t, 'n', '10.0.4.1');
      const early = await talosctl(t, ['-n', '10.0.4.1', 'read', CRI]);
      expect(early.code).toBe(0);
      expect(early.stdout).toMatch(
        /^## \/etc\/cri\/conf\.d\/00-base\.part \(sha256:[0-9a-f]{64}\)\n## \/etc\/cri\/conf\.d\/20-customization\.part/,
      );
      expect(early.stdout).not.toContain('ghcr.io');
      expect((await talosctl(t, ['-n', '10.0.4.1', 'read', PART])).stderr).toMatch(/no such file or directory/);
      expect(n.etcFileStatus.get('cri/conf.d/cri.toml')?.version).toBe(1);
      t.releaseBootWindow('n');
      await until(async () => (n.files.has(PART) ? true : undefined), HANG_MS, 20);
      const late = await talosctl(t, ['-n', '10.0.4.1', 'read', CRI]);
      expect(late.stdout).toContain('## /etc/cri/conf.d/01-registries.part');
      expect(late.stdout).toContain('ghcr.io');
      const st = n.etcFileStatus.get('cri/conf.d/cri.toml')!;
      expect(st.version).toBe(2);
      expect(n.etcFileStatus.get('cri/conf.d/01-registries.part')!.version).toBe(1);
      await until(async () => (n.containerd.pid > 0 ? true : undefined), HANG_MS, 20);
      expect(n.containerd.startedAtMs - n.files.get(CRI)!.mtimeMs).toBeCloseTo(300, 0);
      expect(n.containerd.loadedCredential['ghcr.io']).toEqual(expect.objectContaining({ username: OLD.username }));
    } finally {
      await t.stop();
    }
  });

  it('drawn (the default): on either version the files come after the node answers', async () => {
    for (const [version, seed] of [
      ['1.14', 1],
      ['1.13', 2],
      ['1.14', 3],
    ] as const) {
      const t = await node(version, { seed });
      try {
        await rebootUntilNewBootId(t, 'n', '10.0.4.1');
        await until(async () => (t.node('n').containerd.pid > 0 ? true : undefined), HANG_MS, 20);
        // judged on the twin's own instants, not on when a (possibly slow) client first saw the answer
        const n = t.node('n');
        expect(n.answeredAtMs).toBeGreaterThan(0);
        if (version === '1.13') expect(n.files.get(PART)!.mtimeMs).toBeGreaterThan(n.answeredAtMs);
        // 1.13 has the cri.toml merged from the image's parts all along; its rewrite with the registry part comes after the answer
        expect(n.files.get(CRI)!.mtimeMs).toBeGreaterThan(n.answeredAtMs);
      } finally {
        await t.stop();
      }
    }
  });
});
