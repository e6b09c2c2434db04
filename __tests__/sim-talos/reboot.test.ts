// The twin's reboot behind the fake talosctl: the tracker lines, the boot id, the 1.14 cri start order, faults.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TalosSim } from '../../sim/talos/index.js';
import { criUp, OLD, startFleet, type Fleet } from './fleet.js';
import { talosctl, until } from './helpers.js';

let fleet: Fleet;
let sim: TalosSim;
let hooks: Fleet['hooks'];

beforeAll(async () => {
  fleet = await startFleet();
  ({ sim, hooks } = fleet);
});

afterAll(() => fleet.stop());

// /etc is rebuilt at every boot and machined's controllers write the CRI files
// from the machine config on their own schedule, so the node answers with its new boot id before
// they are there (the twin's default; configAfterAnswerMs pins the write's delay): 1.14 has no
// cri.toml yet; 1.13 has the cri.toml machined merged at its start from the image's parts alone (no
// registry auth), no 01-registries.part, and writes both once the config is loaded.

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
    await criUp(sim, 'w-2');
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
    await criUp(sim, 'w-3');
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
    // held down until the test has looked: a loaded runner's next talosctl must not race the reboot's clock
    sim.holdNextReboot('10.0.1.4');
    const r = await talosctl(sim, ['-n', '10.0.1.4', 'reboot', '--wait=false']);
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const down = await talosctl(sim, ['-n', '10.0.1.4', 'service', 'cri']);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('code = Unavailable');
    sim.releaseReboot('10.0.1.4');
    // a hang bound: each try is a talosctl process, which a loaded runner may take seconds to start
    await until(async () => ((await talosctl(sim, ['-n', '10.0.1.4', 'service', 'cri'])).code === 0 ? true : undefined), 30_000);
  });

  it('fails through the tracker when the wait times out', async () => {
    const r = await talosctl(sim, ['-n', '10.0.1.4', 'reboot', '--timeout', '300ms']);
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe('"10.0.1.4": rpc error: code = DeadlineExceeded desc = context deadline exceeded');
    await until(async () => (sim.node('w-4').up ? true : undefined), 30_000);
  });
});
