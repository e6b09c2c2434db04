// Node behaviour behind the fake talosctl: clocks, re-rendering, the v1.14 cri restart, reboots,
// what containerd loaded versus what the files say, fault injection, and the call record.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TalosSim } from '../../sim/talos/index.js';
import { criUp, OLD, startFleet, type Fleet } from './fleet.js';
import { goSeconds, recordingHooks, roundSec, sleep, talosctl, until } from './helpers.js';

const NEW = { username: 'ci-bot', password: 'token-2' };
const IMAGE = 'ghcr.io/acme/app:1.0';

let fleet: Fleet;
let sim: TalosSim;
let newPatch: string;
let legacyPatch: string;
let work: string;

beforeAll(async () => {
  fleet = await startFleet();
  ({ sim, newPatch, legacyPatch, work } = fleet);
});

afterAll(() => fleet.stop());

const startedAgo = (stdout: string) => goSeconds(/started with PID \d+ \((-?[0-9hms]+) ago\)/.exec(stdout)?.[1] ?? 'x');

// /etc is rebuilt at every boot and machined's controllers write the CRI files
// from the machine config on their own schedule, so the node answers with its new boot id before
// they are there (the twin's default; configAfterAnswerMs pins the write's delay): 1.14 has no
// cri.toml yet; 1.13 has the cri.toml machined merged at its start from the image's parts alone (no
// registry auth), no 01-registries.part, and writes both once the config is loaded.

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
    // negative: about -56 s, less the call's own time (the bounds above pin the value to the client's clock)
    expect(startedAgo(r.stdout)).toBeLessThan(0);
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
    const patched = sim.commands.filter((x) => x.command === 'patch').at(-1)!;
    expect(r).toMatchObject({ code: 0, stdout: '' });
    expect(r.stderr).toBe(
      'patched MachineConfigs.config.talos.dev/v1alpha1 at the node 10.0.1.1\nApplied configuration without a reboot\n',
    );
    // ApplyConfiguration returns before the controllers write: the write lands 0–300 ms later (drawn by
    // timing.ts; a loaded runner only stretches it), after the patch on the twin's clock
    expect(n.machineConfig.registryAuth['ghcr.io']).toMatchObject(NEW);
    await until(async () => (n.files.get('/etc/cri/conf.d/cri.toml')!.mtimeMs !== tomlBefore ? true : undefined), 10_000, 10);
    expect(n.files.get('/etc/cri/conf.d/cri.toml')!.mtimeMs).toBeGreaterThanOrEqual(patched.at);
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
    await until(async () => (n.containerd.pid !== pid && n.containerd.pid !== 0 ? true : undefined), 5000, 50);
    expect(n.containerd.startedAtMs).toBeGreaterThan(t0);
    // the old containerd was stopped after the write (on the twin's own instants: how soon this client
    // looked after the read depends on the runner's load)
    const stop = n.containerd.events.find((e) => e.msg.startsWith('Sending SIGTERM') && e.ts > t0);
    expect(stop!.ts).toBeGreaterThanOrEqual(written);
    // criRestartMs (400 ms) after the write, not after the patch
    expect(n.containerd.startedAtMs - written).toBeGreaterThanOrEqual(390);
    expect(n.containerd.loadedCredential['ghcr.io']).toEqual(NEW);
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
    await criUp(sim, 'w-1');
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
