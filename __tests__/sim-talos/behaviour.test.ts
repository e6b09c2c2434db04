// Node behaviour behind the fake talosctl: clocks, re-rendering, the v1.14 cri restart, reboots,
// what containerd loaded versus what the files say, fault injection, and the call record.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TalosSim } from '../../sim/talos/index.js';
import { goSeconds, recordingHooks, roundSec, sleep, talosctl, until } from './helpers.js';

const OLD = { username: 'ci-bot', password: 'token-1' };
const NEW = { username: 'ci-bot', password: 'token-2' };
const IMAGE = 'ghcr.io/acme/app:1.0';

let sim: TalosSim;
let hooks: ReturnType<typeof recordingHooks>;
let newPatch: string;
let legacyPatch: string;
let work: string;

beforeAll(async () => {
  hooks = recordingHooks();
  sim = await TalosSim.start({ kube: hooks, rebootMs: 1200, criRestartMs: 400 });
  for (const [name, ip, version] of [
    ['w-1', '10.0.1.1', '1.13'],
    ['w-2', '10.0.1.2', '1.13'],
    ['w-3', '10.0.1.3', '1.14'],
    ['w-4', '10.0.1.4', '1.13'],
  ] as const) {
    sim.addNode({ name, ip, role: 'worker', version, credential: { 'ghcr.io': OLD } });
  }
  sim.addNode({ name: 'cp-1', ip: '10.0.1.10', role: 'control-plane', credential: { 'ghcr.io': OLD } });
  sim.setRegistryCredential('ghcr.io', OLD);
  work = mkdtempSync(join(tmpdir(), 'sim-talos-test-'));
  newPatch = join(work, 'registry-auth.yaml');
  writeFileSync(newPatch, 'apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\nusername: ci-bot\npassword: token-2\n');
  legacyPatch = join(work, 'legacy.yaml');
  writeFileSync(
    legacyPatch,
    'machine:\n  registries:\n    config:\n      ghcr.io:\n        auth:\n          username: ci-bot\n          password: token-2\n',
  );
});

afterAll(async () => {
  await sim.stop();
  rmSync(work, { recursive: true, force: true });
});

/** A rebooted node answers before it loads cri: wait until cri is launched and its first check passed. */
const criUp = (name: string) => until(async () => (sim.node(name).containerd.health.healthy ? true : undefined), 10_000, 20);

const startedAgo = (stdout: string) => goSeconds(/started with PID \d+ \((-?[0-9hms]+) ago\)/.exec(stdout)?.[1] ?? 'x');

describe('clocks', () => {
  it('renders "(D ago)" on the client clock at print time, so D moves with real time', async () => {
    const start = sim.node('w-1').containerd.startedAtMs;
    const a = await talosctl(sim, ['-n', '10.0.1.1', 'service', 'cri']);
    await sleep(2100);
    const b = await talosctl(sim, ['-n', '10.0.1.1', 'service', 'cri']);
    const da = startedAgo(a.stdout);
    const db = startedAgo(b.stdout);
    for (const [d, r] of [
      [da, a],
      [db, b],
    ] as const) {
      expect(d).toBeGreaterThanOrEqual(roundSec(r.t0 - start));
      expect(d).toBeLessThanOrEqual(roundSec(r.t1 - start));
    }
    expect(db - da).toBeGreaterThanOrEqual(2);
  });

  it('stamps node events on the node clock: a node ahead shows negative ages', async () => {
    sim.addNode({
      name: 'w-ahead',
      ip: '10.0.1.20',
      role: 'worker',
      credential: {},
      bootedAgoMs: 10_000,
      criStartedAgoMs: 4000,
      clock: { offsetMs: 60_000 },
    });
    const r = await talosctl(sim, ['-n', '10.0.1.20', 'service', 'cri']);
    // started 4 s ago by the node clock, which runs 60 s ahead of the client
    const start = sim.node('w-ahead').containerd.startedAtMs;
    expect(startedAgo(r.stdout)).toBeGreaterThanOrEqual(roundSec(r.t0 - start));
    expect(startedAgo(r.stdout)).toBeLessThanOrEqual(roundSec(r.t1 - start));
    expect(startedAgo(r.stdout)).toBeLessThan(-50);
  });

  it('reports clock state through timestatus', async () => {
    sim.setClock('w-4', { synced: false, epoch: 2 });
    const r = await talosctl(sim, ['-n', '10.0.1.4', 'get', 'timestatus', 'node', '-o', 'json']);
    expect(JSON.parse(r.stdout).spec).toEqual({ epoch: 2, synced: false, syncDisabled: false });
    sim.setClock('w-4', { synced: true, epoch: 0 });
  });

  it('can push the launch event out of the 64-event history', async () => {
    sim.addNode({ name: 'w-flap', ip: '10.0.1.21', role: 'worker', credential: {}, eventsWithoutStart: true });
    const r = await talosctl(sim, ['-n', '10.0.1.21', 'service', 'cri']);
    expect(r.stdout).not.toContain('started with PID');
    expect(
      r.stdout
        .trimEnd()
        .split('\n')
        .filter((l) => /^(EVENTS {3}| {9})\[/.test(l)),
    ).toHaveLength(64);
    expect(sim.node('w-flap').containerd.events).toHaveLength(64);
    const pids = await talosctl(sim, ['-n', '10.0.1.21', 'get', 'servicepids', 'cri', '-o', 'yaml']);
    expect(pids.stdout).toContain(`pid: ${sim.node('w-flap').containerd.pid}`);
  });
});

describe('patch machineconfig on Talos 1.13', () => {
  it('re-renders the CRI files only when their content changes; containerd keeps what it loaded', async () => {
    const n = sim.node('w-1');
    const partBefore = n.files.get('/etc/cri/conf.d/01-registries.part')?.mtimeMs;
    const tomlBefore = n.files.get('/etc/cri/conf.d/cri.toml')?.mtimeMs;
    const pid = n.containerd.pid;

    const r = await talosctl(sim, ['-n', '10.0.1.1', 'patch', 'machineconfig', '--mode=no-reboot', '--patch-file', newPatch]);
    const returned = Date.now();
    expect(r).toMatchObject({ code: 0, stdout: '' });
    expect(r.stderr).toBe(
      'patched MachineConfigs.config.talos.dev/v1alpha1 at the node 10.0.1.1\nApplied configuration without a reboot\n',
    );
    // ApplyConfiguration returns before the controllers write: the write lands 0–300 ms later
    expect(n.machineConfig.registryAuth['ghcr.io']).toMatchObject(NEW);
    await until(async () => (n.files.get('/etc/cri/conf.d/cri.toml')!.mtimeMs !== tomlBefore ? true : undefined), 2000, 10);
    expect(Date.now() - returned).toBeLessThan(1000);
    const partAfter = n.files.get('/etc/cri/conf.d/01-registries.part')?.mtimeMs ?? 0;
    const tomlAfter = n.files.get('/etc/cri/conf.d/cri.toml')?.mtimeMs ?? 0;
    expect(partAfter).toBeGreaterThan(partBefore ?? Infinity);
    expect(tomlAfter).toBeGreaterThan(tomlBefore ?? Infinity);
    expect(n.files.get('/etc/cri/conf.d/cri.toml')?.content).toContain("password = 'token-2'");
    expect(n.containerd.pid).toBe(pid);
    expect(n.containerd.loadedCredential['ghcr.io']).toEqual(OLD);
    const status = await talosctl(sim, ['-n', '10.0.1.1', 'get', 'etcfilestatus', 'cri/conf.d/cri.toml', '-o', 'json']);
    expect(JSON.parse(status.stdout).metadata.version).toBe(2);

    // the same patch again: no content change, no write, and talosctl says so
    await sleep(1100);
    const again = await talosctl(sim, ['-n', '10.0.1.1', 'patch', 'machineconfig', '--mode=no-reboot', '--patch-file', newPatch]);
    expect(again).toMatchObject({ code: 0, stderr: 'Apply was skipped: no changes detected.\n' });
    // the legacy form renders the same bytes: the config changes, the files do not
    const legacy = await talosctl(sim, ['-n', '10.0.1.1', 'patch', 'machineconfig', '--mode=no-reboot', '--patch-file', legacyPatch]);
    expect(legacy.stderr).toContain('Applied configuration without a reboot');
    await sleep(400); // past any write the controllers would make
    expect(n.files.get('/etc/cri/conf.d/cri.toml')?.mtimeMs).toBe(tomlAfter);
    expect(n.files.get('/etc/cri/conf.d/01-registries.part')?.mtimeMs).toBe(partAfter);
  });

  it('a ksail desired-revision marker changes the machine config but no CRI file', async () => {
    const n = sim.node('w-2');
    const before = [...n.files.entries()].map(([p, f]) => [p, f.mtimeMs, f.content]);
    const version = n.machineConfig.version;
    sim.stampConfigMarker('w-2', 'rev-42');
    expect(n.machineConfig.version).toBe(version + 1);
    expect([...n.files.entries()].map(([p, f]) => [p, f.mtimeMs, f.content])).toEqual(before);
    const ls = await talosctl(sim, ['-n', '10.0.1.2', 'ls', '-l', '/etc/cri/conf.d/cri.toml']);
    expect(ls.code).toBe(0);
  });

  it('rejects an invalid RegistryAuthConfig after printing the patched line', async () => {
    const bad = join(work, 'bad.yaml');
    writeFileSync(bad, 'apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\nusername: x\nidentityToken: y\n');
    const r = await talosctl(sim, ['-n', '10.0.1.4', 'patch', 'machineconfig', '--mode=no-reboot', '--patch-file', bad]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'patched MachineConfigs.config.talos.dev/v1alpha1 at the node 10.0.1.4\n' +
        '1 error occurred:\n\t* 10.0.1.4: rpc error: code = InvalidArgument desc = 1 error occurred:\n\t* RegistryAuthConfig/ghcr.io: only one of username/password or identityToken authentication can be specified\n\n\n\n\n',
    );
    expect(sim.node('w-4').files.get('/etc/cri/conf.d/cri.toml')?.content).toContain("password = 'token-1'");
  });

  it('reports a missing patch file like os.ReadFile', async () => {
    const r = await talosctl(sim, ['-n', '10.0.1.4', 'patch', 'machineconfig', '--patch-file', '/nonexistent/p.yaml']);
    expect(r).toMatchObject({ code: 1, stderr: 'open /nonexistent/p.yaml: no such file or directory\n' });
  });
});

describe('Talos 1.14 restarts cri when cri.toml changes', () => {
  it('produces Stopping…Running events, a new PID, and containerd loads the new credential', async () => {
    const n = sim.node('w-3');
    expect(n.files.has('/etc/cri/conf.d/01-registries.part')).toBe(false);
    const oldPid = n.containerd.pid;
    const r = await talosctl(sim, ['-n', '10.0.1.3', 'patch', 'machineconfig', '--mode=no-reboot', '--patch-file', newPatch]);
    expect(r.code).toBe(0);
    expect(n.files.get('/etc/cri/conf.d/cri.toml')?.content).toMatch(
      /^## file \/etc\/cri\/conf\.d\/00-base\.part \(sha256:[0-9a-f]{64}\)\n## in-memory registries \(sha256:[0-9a-f]{64}\)\n\n/,
    );
    // criRestartMs (400 ms) after the write, then ~1.2 s until the new process is healthy
    const out = await until(async () => {
      const s = await talosctl(sim, ['-n', '10.0.1.3', 'service', 'cri']);
      return s.stdout.includes('Sending SIGTERM') && /^EVENTS {3}\[Running\]: Health check successful/m.test(s.stdout)
        ? s.stdout
        : undefined;
    }, 10_000);
    const newPid = n.containerd.pid;
    expect(newPid).not.toBe(oldPid);
    const msgs = out
      .split('\n')
      .filter((l) => l.includes('['))
      .map((l) => l.replace(/^(EVENTS {3}| {9})/, '').replace(/ \(-?[0-9hms]+ ago\)$/, ''));
    expect(msgs.slice(0, 9)).toEqual([
      '[Running]: Health check successful',
      `[Running]: Process Process(["/bin/containerd" "--address" "/run/containerd/containerd.sock" "--config" "/etc/cri/containerd.toml"]) started with PID ${newPid}`,
      '[Preparing]: Creating service runner',
      '[Preparing]: Running pre state',
      '[Waiting]: Waiting for volumes /var/lib, /var/lib/cni, CRI, /var/run, /var/run/lock, /opt to be mounted, network, /etc files ["machine-id" "cri/conf.d/cri.toml" "cri/conf.d/base-spec.json"] to be ready',
      '[Starting]: Starting service',
      '[Finished]: Service finished successfully',
      '[Stopping]: Sending SIGTERM to Process(["/bin/containerd" "--address" "/run/containerd/containerd.sock" "--config" "/etc/cri/containerd.toml"])',
      '[Running]: Health check successful',
    ]);
    expect(n.containerd.loadedCredential['ghcr.io']).toEqual(NEW);
    expect(n.containerd.startedAtMs).toBeGreaterThan(n.files.get('/etc/cri/conf.d/cri.toml')?.mtimeMs ?? Infinity);
    const pids = await talosctl(sim, ['-n', '10.0.1.3', 'get', 'servicepids', 'cri', '-o', 'yaml']);
    expect(pids.stdout).toContain(`    pid: ${newPid}\n`);
  });
});

describe('the write after a patch, held for a test (holdNextWrite)', () => {
  it('lands right before the nth matching read after the patch is answered, and the 1.14 restart follows that write', async () => {
    const CRI = '/etc/cri/conf.d/cri.toml';
    sim.addNode({ name: 'w-held', ip: '10.0.1.30', role: 'worker', version: '1.14', credential: { 'ghcr.io': OLD } });
    const n = sim.node('w-held');
    const pid = n.containerd.pid;
    const mtime = n.files.get(CRI)!.mtimeMs;
    // a read before the patch does not count
    expect((await talosctl(sim, ['-n', '10.0.1.30', 'read', CRI])).stdout).toContain("password = 'token-1'");
    sim.holdNextWrite('w-held', { command: 'read', target: CRI, nth: 2 });
    const r = await talosctl(sim, ['-n', '10.0.1.30', 'patch', 'machineconfig', '--mode=no-reboot', '--patch-file', newPatch]);
    expect(r.code).toBe(0);
    await sleep(500); // longer than any unheld write would take
    expect(n.files.get(CRI)!.mtimeMs).toBe(mtime);
    // other reads do not count; the first matching read still sees the old file
    await talosctl(sim, ['-n', '10.0.1.30', 'ls', '-l', '/etc/cri/conf.d']);
    expect((await talosctl(sim, ['-n', '10.0.1.30', 'read', CRI])).stdout).toContain("password = 'token-1'");
    expect(n.files.get(CRI)!.mtimeMs).toBe(mtime);
    // the second lands the write just before it is answered
    const t0 = n.containerd.startedAtMs;
    expect((await talosctl(sim, ['-n', '10.0.1.30', 'read', CRI])).stdout).toContain("password = 'token-2'");
    const written = n.files.get(CRI)!.mtimeMs;
    expect(written).toBeGreaterThan(mtime);
    expect(n.containerd.pid).toBe(pid);
    await until(async () => (n.containerd.pid !== pid && n.containerd.pid !== 0 ? true : undefined), 5000, 50);
    expect(n.containerd.startedAtMs).toBeGreaterThan(t0);
    // criRestartMs (400 ms) after the write, not after the patch
    expect(n.containerd.startedAtMs - written).toBeGreaterThanOrEqual(390);
    expect(n.containerd.loadedCredential['ghcr.io']).toEqual(NEW);
  });
});

describe('reboot', () => {
  it('waits, prints the tracker lines, changes the boot id and tells the Kubernetes side', async () => {
    const n = sim.node('w-2');
    const before = (await talosctl(sim, ['-n', '10.0.1.2', 'read', '/proc/sys/kernel/random/boot_id'])).stdout.trim();
    expect(before).toBe(n.bootID);
    hooks.calls.length = 0;
    const t0 = Date.now();
    const r = await talosctl(sim, ['-n', '10.0.1.2', 'reboot']);
    expect(r.code).toBe(0);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1200);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('"10.0.1.2": waiting for actor ID');
    expect(lines[1]).toMatch(/^"10\.0\.1\.2": actor ID: [0-9a-f-]{36}$/);
    expect(lines).toContain('"10.0.1.2": error: reboot sequence completed');
    expect(lines).toContain('"10.0.1.2": unavailable, retrying...');
    expect(lines.slice(-2)).toEqual(['"10.0.1.2": events check condition met', '"10.0.1.2": post check passed']);

    const after = (await talosctl(sim, ['-n', '10.0.1.2', 'read', '/proc/sys/kernel/random/boot_id'])).stdout.trim();
    expect(after).not.toBe(before);
    // the kubelet starts only once cri is up, so the Kubernetes side sees the new boot id after that
    await criUp('w-2');
    expect(hooks.calls).toEqual(['down w-2', `up w-2 ${after}`]);

    // fresh ≤1.13 boot: cri.toml written and containerd launched on independent schedules, 0.3–3 s
    // apart (sim/talos/timing.ts); the status recorded after the write; everything already in the past
    const now = performance.timeOrigin + performance.now();
    const write = n.files.get('/etc/cri/conf.d/cri.toml')?.mtimeMs ?? 0;
    expect(n.containerd.startedAtMs - write).toBeGreaterThanOrEqual(300);
    expect(n.containerd.startedAtMs - write).toBeLessThanOrEqual(3000);
    expect(n.etcFileStatus.get('cri/conf.d/cri.toml')!.updated).toBeGreaterThan(write);
    for (const e of n.containerd.events) expect(e.ts).toBeLessThanOrEqual(now);
    // the real order around a launch: pre-launch events, then the PID record, then the start event
    const msgs = n.containerd.events.map((e) => e.msg);
    const launch = msgs.findIndex((m) => /started with PID/.test(m));
    expect(msgs.slice(launch - 2, launch)).toEqual(['Running pre state', 'Creating service runner']);
    expect(n.containerd.events[launch - 1].ts).toBeLessThan(n.containerd.startedAtMs);
    expect(n.containerd.servicePid!.created).toBeGreaterThan(n.containerd.startedAtMs);
    expect(n.containerd.events[launch].ts).toBeGreaterThan(n.containerd.servicePid!.created);
    expect(n.containerd.events[0].msg).toBe('Starting service');
    expect(n.containerd.loadedCredential).toEqual(n.auth);
    expect(n.auth['ghcr.io']).toEqual(OLD);
    expect(sim.mutatingCommands().at(-1)).toMatchObject({ command: 'reboot', nodes: ['10.0.1.2'], exitCode: 0 });
  });

  it("a 1.14 boot: cri.ServiceController starts cri after cri.toml's status, so its whole run is logged after the write", async () => {
    const n = sim.node('w-3');
    const r = await talosctl(sim, ['-n', '10.0.1.3', 'reboot']);
    expect(r.code).toBe(0);
    await criUp('w-3');
    const write = n.files.get('/etc/cri/conf.d/cri.toml')!.mtimeMs;
    const status = n.etcFileStatus.get('cri/conf.d/cri.toml')!;
    // written once at this boot: the controller only starts cri once the status exists
    expect(status).toMatchObject({ version: 1, created: status.updated });
    expect(status.updated).toBeGreaterThan(write);
    const msgs = n.containerd.events.map((e) => e.msg);
    const launch = msgs.findIndex((m) => /started with PID/.test(m));
    expect(msgs.slice(0, launch)).toEqual([
      'Starting service',
      'Waiting for volumes /var/lib, /var/lib/cni, CRI, /var/run, /var/run/lock, /opt to be mounted, network, /etc files ["machine-id" "cri/conf.d/cri.toml" "cri/conf.d/base-spec.json"] to be ready',
      'Running pre state',
      'Creating service runner',
    ]);
    for (const e of n.containerd.events.slice(0, launch)) {
      expect(e.ts).toBeGreaterThan(status.updated);
      expect(e.ts).toBeLessThan(n.containerd.startedAtMs);
    }
    // a few ms from the write to the launch (sim/talos/timing.ts)
    expect(n.containerd.startedAtMs - write).toBeGreaterThanOrEqual(2);
    expect(n.containerd.startedAtMs - write).toBeLessThanOrEqual(15);
  });

  it('the criRestartAfterBoot fault: cri restarted just after the node is up, health "?" then a failed check, then healthy', async () => {
    sim.addNode({
      name: 'w-5',
      ip: '10.0.1.5',
      role: 'worker',
      version: '1.14',
      credential: { 'ghcr.io': OLD },
      criRestartAfterBoot: { afterUpMs: 100, failingChecks: 1 },
    });
    const n = sim.node('w-5');
    const r = await talosctl(sim, ['-n', '10.0.1.5', 'reboot', '--wait=false']);
    expect(r.code).toBe(0);
    // the boot's containerd, launched once the node loaded cri; the restart comes before its first check
    const bootPid = await until(async () => (n.up && n.containerd.pid !== 0 ? n.containerd.pid : undefined), 10_000, 5);
    expect(n.containerd.health.unknown).toBe(true);
    // criRestartMs (400 ms) after base-spec.json's write the new containerd is Running, health unknown
    await until(async () => (n.containerd.pid !== bootPid && n.containerd.pid !== 0 ? true : undefined), 5000, 20);
    expect(n.containerd).toMatchObject({ state: 'Running', health: { unknown: true, healthy: false } });
    // written at the boot (version 1), then again by the fault
    expect(n.etcFileStatus.get('cri/conf.d/base-spec.json')!.version).toBe(2);
    await until(async () => (n.containerd.health.unknown ? undefined : true), 5000, 20);
    expect(n.containerd.health).toMatchObject({ healthy: false, lastMessage: expect.stringMatching(/context deadline exceeded/) });
    await until(async () => (n.containerd.health.healthy ? true : undefined), 8000, 50);
    const msgs = n.containerd.events.map((e) => e.msg);
    const restart = msgs.lastIndexOf('Service finished successfully');
    expect(msgs.slice(restart + 1).map((m) => m.replace(/PID \d+/, 'PID N').replace(/^Waiting for .*/, 'Waiting for …'))).toEqual([
      'Starting service',
      'Waiting for …',
      'Running pre state',
      'Creating service runner',
      `Process ${'Process(["/bin/containerd" "--address" "/run/containerd/containerd.sock" "--config" "/etc/cri/containerd.toml"])'} started with PID N`,
      'Health check failed: rpc error: code = DeadlineExceeded desc = context deadline exceeded',
      'Health check successful',
    ]);
    expect(n.containerd.loadedCredential).toEqual(n.auth);
  });

  it('returns at once with --wait=false; the node is unreachable until it is back', async () => {
    const r = await talosctl(sim, ['-n', '10.0.1.4', 'reboot', '--wait=false']);
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const down = await talosctl(sim, ['-n', '10.0.1.4', 'service', 'cri']);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('code = Unavailable');
    await until(async () => ((await talosctl(sim, ['-n', '10.0.1.4', 'service', 'cri'])).code === 0 ? true : undefined), 5000);
  });

  it('fails through the tracker when the wait times out', async () => {
    const r = await talosctl(sim, ['-n', '10.0.1.4', 'reboot', '--timeout', '300ms']);
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe('"10.0.1.4": rpc error: code = DeadlineExceeded desc = context deadline exceeded');
    await until(async () => (sim.node('w-4').up ? true : undefined), 5000);
  });
});

describe('image pulls after a credential rotation', () => {
  it('a kubelet pull uses what containerd LOADED; talosctl image pull uses the machine config', async () => {
    // w-1 was patched to token-2 above without a reboot (Talos 1.13): its containerd still holds token-1.
    sim.setRegistryCredential('ghcr.io', NEW);
    const stale = sim.imagePull.pull('w-1', IMAGE);
    expect(stale.ok).toBe(false);
    if (!stale.ok) {
      expect(stale.error).toMatch(/^failed to pull and unpack image "ghcr\.io\/acme\/app:1\.0": .*401 Unauthorized$/);
    }
    // Talos's own resolver reads the machine config, so this succeeds: not proof of anything
    const talosPull = await talosctl(sim, ['-n', '10.0.1.1', 'image', 'pull', IMAGE]);
    expect(talosPull.code).toBe(0);
    expect(talosPull.stderr).toMatch(/^10\.0\.1\.1: pulled image ghcr\.io\/acme\/app@sha256:[0-9a-f]{64}\n$/);
    expect(sim.imagePull.pull('w-1', IMAGE).ok).toBe(false);

    // the 1.14 node restarted containerd with the new credential
    const fresh = sim.imagePull.pull('w-3', IMAGE);
    expect(fresh).toMatchObject({ ok: true, imageID: expect.stringMatching(/^ghcr\.io\/acme\/app@sha256:[0-9a-f]{64}$/) });

    // after a reboot containerd loads the rendered credential
    const r = await talosctl(sim, ['-n', '10.0.1.1', 'reboot']);
    expect(r.code).toBe(0);
    await criUp('w-1');
    expect(sim.imagePull.pull('w-1', IMAGE).ok).toBe(true);
  });

  it('image remove deletes the exact name and answers NotFound otherwise', async () => {
    const miss = await talosctl(sim, ['-n', '10.0.1.1', 'image', 'remove', 'acme/app']);
    expect(miss).toMatchObject({
      code: 1,
      stderr: 'error from node 10.0.1.1: rpc error: code = NotFound desc = image acme/app not found\n',
    });
    const hit = await talosctl(sim, ['-n', '10.0.1.1', 'image', 'remove', IMAGE]);
    expect(hit).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });
});

describe('fault injection and the call record', () => {
  it('failNext unavailable makes one node of the next matching call unreachable', async () => {
    sim.failNext({ command: 'service', node: '10.0.1.2' }, { unavailable: true });
    const r = await talosctl(sim, ['-n', '10.0.1.1,10.0.1.2', 'service', 'cri']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('NODE     10.0.1.1');
    expect(r.stdout).not.toContain('10.0.1.2');
    expect(r.stderr).toMatch(/^WARNING: 1 error occurred:\n\t\* 10\.0\.1\.2: rpc error: code = Unavailable desc = /);
    const next = await talosctl(sim, ['-n', '10.0.1.1,10.0.1.2', 'service', 'cri']);
    expect(next.stderr).toBe('');
  });

  it('failNext with stderr replaces the whole call, count times, matched by name or path', async () => {
    sim.failNext({ command: 'etcd status', count: 2 }, { stderr: 'boom\n', exitCode: 1 });
    for (let i = 0; i < 2; i++) {
      const r = await talosctl(sim, ['-n', '10.0.1.10', 'etcd', 'status']);
      expect(r).toMatchObject({ code: 1, stdout: '', stderr: 'boom\n' });
    }
    const ok = await talosctl(sim, ['-n', '10.0.1.10', 'etcd', 'status']);
    expect(ok.code).toBe(0);
    expect(sim.commands.at(-1)).toMatchObject({ command: 'etcd', path: 'etcd status', mutating: false, exitCode: 0 });
  });

  it('records reads as non-mutating and patch/reboot/image as mutating', () => {
    const kinds = new Set(sim.mutatingCommands().map((c) => c.path));
    expect(kinds).toEqual(new Set(['patch', 'reboot', 'image pull', 'image remove']));
    for (const c of sim.commands) expect(c.at).toBeGreaterThan(0);
  });

  it('prints the endpoint dial error when the sim is gone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sim-talos-gone-'));
    try {
      const other = await TalosSim.start({ kube: recordingHooks(), dir });
      const env = other.env();
      const port = /127\.0\.0\.1:(\d+)/.exec(readFileSync(env.TALOSCONFIG, 'utf8'))?.[1];
      await other.stop();
      const r = await talosctl(sim, ['-n', '10.0.1.1', 'service', 'cri'], { TALOSCONFIG: env.TALOSCONFIG });
      expect(r).toMatchObject({ code: 1, stdout: '' });
      expect(r.stderr).toBe(
        `error listing services: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:${port}: connect: connection refused"\n`,
      );
      const ls = await talosctl(sim, ['-n', '10.0.1.1', '-e', '127.0.0.1:1', 'ls', '-l', '/etc']);
      expect(ls.stderr).toBe(
        'error fetching logs: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"\n',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('after a reboot the node answers before it loads cri (apid in Initialize, cri in StartAllServices / cri.ServiceController)', () => {
  let twin: TalosSim;
  let calls: ReturnType<typeof recordingHooks>;
  const WINDOW_MS = 4000;
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
      5000,
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
    await rebootUntilNewBootId(twin, 'v13', '10.0.2.1');
    const t0 = Date.now();
    expect(await services('10.0.2.1')).toEqual(['apid', 'auditd', 'containerd', 'dashboard', 'machined', 'syslogd', 'udevd']);
    // talosctl's own text when no node has the service (cmd/talosctl/cmd/talos/service.go)
    const cri = await talosctl(twin, ['-n', '10.0.2.1', 'service', 'cri']);
    expect(cri.code).toBe(1);
    expect(cri.stderr).toContain('service "cri" is not registered on any nodes');
    const pids = await talosctl(twin, ['-n', '10.0.2.1', 'get', 'servicepids', 'cri', '-o', 'yaml']);
    expect(pids.code).toBe(1);
    // the kubelet needs the CRI socket: Kubernetes has not seen the new boot id
    expect(calls.calls.filter((c) => c.includes('v13'))).toEqual(['down v13']);
    expect(Date.now() - t0).toBeLessThan(WINDOW_MS);

    await until(async () => (n.containerd.health.healthy ? true : undefined), WINDOW_MS + 5000, 20);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(WINDOW_MS - 200);
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
    await rebootUntilNewBootId(twin, 'v14', '10.0.2.2');
    expect(n.files.has('/etc/cri/conf.d/cri.toml')).toBe(false);
    const status = await talosctl(twin, ['-n', '10.0.2.2', 'get', 'etcfilestatus', 'cri/conf.d/cri.toml', '-o', 'json']);
    expect(status.code).toBe(1);
    expect(await services('10.0.2.2')).not.toContain('cri');
    const ls = await talosctl(twin, ['-n', '10.0.2.2', 'ls', '-l', '/etc/cri/conf.d/cri.toml']);
    expect(ls.code).not.toBe(0);

    await until(async () => (n.containerd.health.healthy ? true : undefined), WINDOW_MS + 5000, 20);
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

// /etc is rebuilt at every boot and machined's controllers write the CRI files
// from the machine config on their own schedule, so the node answers with its new boot id before
// they are there (the twin's default; configAfterAnswerMs pins the write's delay): 1.14 has no
// cri.toml yet; 1.13 has the cri.toml machined merged at its start from the image's parts alone (no
// registry auth), no 01-registries.part, and writes both once the config is loaded.
describe('after a reboot the node answers before machined writes the CRI files of the rebuilt /etc', () => {
  const CRI = '/etc/cri/conf.d/cri.toml';
  const PART = '/etc/cri/conf.d/01-registries.part';
  const WRITE_MS = 900;

  /** reboot without talosctl's wait; returns the real time the new boot id first answered */
  const rebootUntilNewBootId = async (t: TalosSim, name: string, ip: string): Promise<number> => {
    const before = t.node(name).bootID;
    expect((await talosctl(t, ['-n', ip, 'reboot', '--wait=false'])).code).toBe(0);
    return until(
      async () => {
        const r = await talosctl(t, ['-n', ip, 'read', '/proc/sys/kernel/random/boot_id']);
        return r.code === 0 && r.stdout.trim() !== before ? Date.now() : undefined;
      },
      5000,
      20,
    );
  };
  const node = async (version: '1.13' | '1.14', opts: { configAfterAnswerMs?: number; bootGapMs?: number; seed?: number } = {}) => {
    const t = await TalosSim.start({ kube: recordingHooks(), rebootMs: 200, ...opts });
    t.addNode({ name: 'n', ip: '10.0.4.1', role: 'worker', version, credential: { 'ghcr.io': OLD } });
    return t;
  };

  it('1.14: no cri.toml, no EtcFileStatus, no cri at the first answer; cri.toml 0.9 s later, cri launched a few ms after it', async () => {
    const t = await node('1.14', { configAfterAnswerMs: WRITE_MS });
    try {
      const n = t.node('n');
      const answered = await rebootUntilNewBootId(t, 'n', '10.0.4.1');
      expect(n.files.has(CRI)).toBe(false);
      const ls = await talosctl(t, ['-n', '10.0.4.1', 'ls', '-l', CRI]);
      expect(ls.code).not.toBe(0);
      expect((await talosctl(t, ['-n', '10.0.4.1', 'get', 'etcfilestatus', 'cri/conf.d/cri.toml', '-o', 'yaml'])).code).toBe(1);
      expect((await talosctl(t, ['-n', '10.0.4.1', 'service', 'cri'])).stderr).toContain('service "cri" is not registered on any nodes');
      await until(async () => (n.containerd.pid > 0 ? true : undefined), 5000, 20);
      const write = n.files.get(CRI)!.mtimeMs;
      // the write's delay is counted from the node's answer, which the client saw a poll later
      expect(write - answered).toBeGreaterThan(WRITE_MS - 150);
      expect(n.containerd.startedAtMs - write).toBeGreaterThanOrEqual(2);
      expect(n.containerd.startedAtMs - write).toBeLessThanOrEqual(15);
    } finally {
      await t.stop();
    }
  });

  it('1.13: cri.toml without registry auth and no 01-registries.part at the first answer; both written 0.9 s later, cri 0.3 s after', async () => {
    const t = await node('1.13', { configAfterAnswerMs: WRITE_MS, bootGapMs: 300 });
    try {
      const n = t.node('n');
      await rebootUntilNewBootId(t, 'n', '10.0.4.1');
      const early = await talosctl(t, ['-n', '10.0.4.1', 'read', CRI]);
      expect(early.code).toBe(0);
      expect(early.stdout).toMatch(
        /^## \/etc\/cri\/conf\.d\/00-base\.part \(sha256:[0-9a-f]{64}\)\n## \/etc\/cri\/conf\.d\/20-customization\.part/,
      );
      expect(early.stdout).not.toContain('ghcr.io');
      expect((await talosctl(t, ['-n', '10.0.4.1', 'read', PART])).stderr).toMatch(/no such file or directory/);
      expect(n.etcFileStatus.get('cri/conf.d/cri.toml')?.version).toBe(1);
      await until(async () => (n.files.has(PART) ? true : undefined), 5000, 20);
      const late = await talosctl(t, ['-n', '10.0.4.1', 'read', CRI]);
      expect(late.stdout).toContain('## /etc/cri/conf.d/01-registries.part');
      expect(late.stdout).toContain('ghcr.io');
      const st = n.etcFileStatus.get('cri/conf.d/cri.toml')!;
      expect(st.version).toBe(2);
      expect(n.etcFileStatus.get('cri/conf.d/01-registries.part')!.version).toBe(1);
      await until(async () => (n.containerd.pid > 0 ? true : undefined), 5000, 20);
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
        const answered = await rebootUntilNewBootId(t, 'n', '10.0.4.1');
        expect(t.node('n').files.has(CRI) && version === '1.14').toBe(false);
        expect(t.node('n').files.has(PART)).toBe(false);
        await until(async () => (t.node('n').containerd.pid > 0 ? true : undefined), 8000, 20);
        expect(t.node('n').files.get(CRI)!.mtimeMs).toBeGreaterThan(answered - 50);
      } finally {
        await t.stop();
      }
    }
  });
});
