// The fake talosctl's two ways to run: the bash script hands the call to the twin's front door, which
// runs the client in the twin's process (TALOSCTL_SIM_FRONT_DOOR set, as TalosSim.env() sets it), or
// starts the Node client (the variable unset, a door that does not answer, a TZ the twin cannot render
// in). Both must print the same bytes and exit the same way, and a signal must stop either as talosctl
// stops: the message, exit 1, and the twin's call aborted (it sees the connection close).
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../../src/adapters/exec.js';
import { TalosSim } from '../../sim/talos/index.js';
import { recordingHooks, talosctl, until, type Ran } from './helpers.js';

const OLD = { username: 'ci-bot', password: 'token-1' };
const SIGNALLED = 'Signal received, aborting, press Ctrl+C once again to abort immediately...\n';

let sim: TalosSim;
let work: string;

beforeAll(async () => {
  // reboots that last long enough for a signal to land while the machine is down, whatever the load
  sim = await TalosSim.start({ kube: recordingHooks(), rebootMs: 120_000, api: false });
  sim.addNode({ name: 'w-1', ip: '10.0.2.1', role: 'worker', version: '1.13', credential: { 'ghcr.io': OLD } });
  sim.addNode({ name: 'w-2', ip: '10.0.2.2', role: 'worker', version: '1.14', credential: { 'ghcr.io': OLD } });
  sim.addNode({ name: 'w-3', ip: '10.0.2.3', role: 'worker', version: '1.13', credential: { 'ghcr.io': OLD } });
  sim.addNode({ name: 'w-4', ip: '10.0.2.4', role: 'worker', version: '1.13', credential: { 'ghcr.io': OLD } });
  sim.addNode({ name: 'w-5', ip: '10.0.2.5', role: 'worker', version: '1.14', credential: { 'ghcr.io': OLD } });
  sim.addNode({ name: 'w-6', ip: '10.0.2.6', role: 'worker', version: '1.13', credential: { 'ghcr.io': OLD } });
  work = mkdtempSync(join(tmpdir(), 'front-door-test-'));
  mkdirSync(join(work, 'here'));
  writeFileSync(
    join(work, 'unicode.yaml'),
    'apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\nusername: ci-bøt—ü\npassword: tøken-2\n',
  );
  copyFileSync(sim.talosconfigPath, join(work, 'here', 'talosconfig'));
  writeFileSync(
    join(work, 'auth.yaml'),
    'apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\nusername: ci-bot\npassword: token-2\n',
  );
});

afterAll(async () => {
  await sim.stop();
  rmSync(work, { recursive: true, force: true });
});

/** through the Node client: the front door's variable emptied */
const NODE = { TALOSCTL_SIM_FRONT_DOOR: '' };

/** the bytes both paths must print alike: no "(D ago)" that a second boundary between the two runs could move */
const CALLS: { args: string[]; env?: Record<string, string>; cwd?: string }[] = [
  { args: ['-n', '10.0.2.1', 'get', 'servicepids', 'cri', '-o', 'yaml'] },
  { args: ['-n', '10.0.2.1,10.0.2.2', 'read', '/etc/cri/conf.d/cri.toml'] },
  { args: ['-n', '10.0.2.2', 'ls', '-l', '/etc/cri/conf.d'] },
  { args: ['-n', '10.0.2.2', 'ls', '-l', '/etc/cri/conf.d'], env: { TZ: 'Asia/Tokyo' } },
  { args: ['-n', '10.0.2.1', 'version'] },
  { args: ['version', '--client'] },
  { args: ['get', 'servicepids', 'cri', '--bogus'] },
  { args: ['frobnicate'] },
  { args: ['-n', '10.0.2.1', 'read', '/etc/cri/conf.d/cri.toml', '-e', '127.0.0.1:1'] },
  // a relative talosconfig is the caller's: found from its directory, in the twin's process as well
  { args: ['-n', '10.0.2.1', 'get', 'servicepids', 'cri', '--talosconfig', 'here/talosconfig'], cwd: 'work' },
  { args: ['-n', '10.0.2.1', 'get', 'servicepids', 'cri', '--talosconfig', 'here'], cwd: 'work' },
  { args: ['-n', '10.0.2.1', 'get', 'servicepids', 'cri'], env: { TALOSCONFIG: 'here/talosconfig' }, cwd: 'work' },
  // patch files are read relative to the caller's directory
  { args: ['-n', '10.0.2.1', 'patch', 'machineconfig', '--patch', '@auth.yaml', '--dry-run'], cwd: 'work' },
  { args: ['-n', '10.0.2.1', 'patch', 'machineconfig', '--patch', '@missing.yaml', '--dry-run'], cwd: 'work' },
  // multi-byte text, from a caller whose locale counts characters: the frames count bytes
  { args: ['-n', '10.0.2.1', 'patch', 'machineconfig', '--patch', '@unicode.yaml', '--dry-run'], env: { LC_ALL: 'C.UTF-8' }, cwd: 'work' },
];

/** the fake talosctl as the action spawns it, from a chosen directory */
function run(args: string[], env: Record<string, string> = {}, cwd?: string): Promise<Ran> {
  if (!cwd) return talosctl(sim, args, env);
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const child = spawn(join(sim.binDir, 'talosctl'), args, { cwd, env: { ...process.env, ...sim.env(), TZ: 'UTC', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ stdout, stderr, code, t0, t1: Date.now() }));
  });
}

describe('the front door', () => {
  it.each(
    CALLS.map((c) => ({
      ...c,
      name: `${c.args.join(' ')}${c.env ? ` (${JSON.stringify(c.env)})` : ''}${c.cwd ? ' (from its directory)' : ''}`,
    })),
  )('$name: run in the twin, the same bytes and exit code as the Node client', async ({ args, env, cwd }) => {
    const dir = cwd === 'work' ? work : undefined;
    const before = sim.frontDoorCalls;
    const inTwin = await run(args, env, dir);
    const mid = sim.frontDoorCalls;
    const inNode = await run(args, { ...env, ...NODE }, dir);
    const after = sim.frontDoorCalls;
    expect(mid.inProcess).toBe(before.inProcess + 1);
    expect(after).toEqual(mid);
    expect({ stdout: inTwin.stdout, stderr: inTwin.stderr, code: inTwin.code }).toEqual({
      stdout: inNode.stdout,
      stderr: inNode.stderr,
      code: inNode.code,
    });
    expect(inTwin.stdout + inTwin.stderr).not.toBe('');
  });

  it('renders the ages on the client clock in the twin as well', async () => {
    const r = await run(['-n', '10.0.2.1', 'service', 'cri']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^EVENTS {3}\[Running\]: Health check successful \((\d+h)?(\d+m)?\d+s ago\)$/m);
    expect(r.stdout).not.toContain('\u0000');
  });

  it('hands a call back to the Node client when the twin cannot render in its TZ (a POSIX rule), and prints the same', async () => {
    const args = ['-n', '10.0.2.2', 'ls', '-l', '/etc/cri/conf.d'];
    const before = sim.frontDoorCalls;
    const posix = await run(args, { TZ: 'JST-9' });
    expect(sim.frontDoorCalls).toEqual({ inProcess: before.inProcess, handedBack: before.handedBack + 1 });
    const tokyo = await run(args, { TZ: 'Asia/Tokyo' });
    expect(posix.code).toBe(0);
    expect(posix.stdout).toBe(tokyo.stdout);
  });

  it('starts the Node client when the variable is unset, or names a door that is closed', async () => {
    const args = ['-n', '10.0.2.1', 'get', 'servicepids', 'cri', '-o', 'yaml'];
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const { port } = closed.address() as { port: number };
    await new Promise<void>((r) => closed.close(() => r()));
    const before = sim.frontDoorCalls;
    const env: Record<string, string | undefined> = { ...process.env, ...sim.env(), TZ: 'UTC' };
    delete env.TALOSCTL_SIM_FRONT_DOOR;
    const unset = await new Promise<Ran>((resolve) => {
      const child = spawn(join(sim.binDir, 'talosctl'), args, { env });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('close', (code) => resolve({ stdout, stderr, code, t0: 0, t1: 0 }));
    });
    const dead = await run(args, { TALOSCTL_SIM_FRONT_DOOR: `127.0.0.1:${port}` });
    expect(sim.frontDoorCalls).toEqual(before);
    const inTwin = await run(args);
    for (const r of [unset, dead])
      expect({ stdout: r.stdout, stderr: r.stderr, code: r.code }).toEqual({ stdout: inTwin.stdout, stderr: '', code: 0 });
  });
});

describe('signals', () => {
  /**
   * `reboot --wait` streams its tracker lines while the machine is down; SIGTERM then prints talosctl's
   * message and exits 1, and the twin's call ends (aborted) while the machine is still down.
   */
  async function signalledReboot(ip: string, name: string, env: Record<string, string>, signal: NodeJS.Signals) {
    const recorded = sim.commands.length;
    const child = spawn(join(sim.binDir, 'talosctl'), ['-n', ip, 'reboot'], { env: { ...process.env, ...sim.env(), TZ: 'UTC', ...env } });
    let stderr = '';
    let downWhenRetrying: boolean | undefined;
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (downWhenRetrying === undefined && stderr.includes('unavailable, retrying...')) downWhenRetrying = !sim.node(name).up;
    });
    const closed = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    await until(async () => (downWhenRetrying !== undefined ? true : undefined), 60_000, 20);
    child.kill(signal);
    const code = await closed;
    const rec = sim.commands.slice(recorded).find((c) => c.command === 'reboot');
    // the twin's call ends once it sees the connection close: its record gets the exit code
    await until(async () => (rec && rec.exitCode !== -1 ? true : undefined), 60_000, 20);
    return { code, stderr, downWhenRetrying, downAtEnd: !sim.node(name).up, rec };
  }

  it.each([
    { path: 'front door', ip: '10.0.2.3', name: 'w-3', env: {}, signal: 'SIGTERM' as const },
    { path: 'Node client', ip: '10.0.2.4', name: 'w-4', env: NODE, signal: 'SIGINT' as const },
    { path: 'front door', ip: '10.0.2.5', name: 'w-5', env: {}, signal: 'SIGINT' as const },
    { path: 'Node client', ip: '10.0.2.6', name: 'w-6', env: NODE, signal: 'SIGTERM' as const },
  ])('$path: $signal mid-reboot prints the message, exits 1, and the twin aborts the call', async ({ ip, name, env, signal }) => {
    const inProcess = sim.frontDoorCalls.inProcess;
    const r = await signalledReboot(ip, name, env, signal);
    expect(sim.frontDoorCalls.inProcess).toBe(inProcess + (env === NODE ? 0 : 1));
    expect(r.downWhenRetrying).toBe(true); // streamed line by line while the machine was down
    expect(r.code).toBe(1);
    expect(r.stderr.endsWith(`"${ip}": unavailable, retrying...\n${SIGNALLED}`)).toBe(true);
    expect(r.downAtEnd).toBe(true); // the call ended before the machine came back: aborted
    expect(r.rec?.exitCode).toBe(1);
  });

  it("the action's runner ending the front-door talosctl (SIGTERM, as at its deadline): the message, exit 1, the twin's call aborted", async () => {
    // Runner kills a child the same way at its deadline and on an abort (SIGTERM, SIGKILL 2 s later);
    // the abort is used here so the kill lands once the reboot is under way, however loaded the machine
    const runner = new Runner();
    const recorded = sim.commands.length;
    const ac = new AbortController();
    const reboot = () => sim.commands.slice(recorded).find((c) => c.command === 'reboot');
    const res = runner.run({
      file: join(sim.binDir, 'talosctl'),
      args: ['-n', '10.0.2.1', 'reboot'],
      env: { ...sim.env(), TZ: 'UTC' },
      signal: ac.signal,
    });
    await until(async () => (reboot() && !sim.node('w-1').up ? true : undefined), 60_000, 20);
    ac.abort();
    const r = await res;
    expect(r.aborted).toBe(true);
    expect(r.exitCode).toBe(1);
    expect(r.signal).toBe(null);
    expect(r.stderr.endsWith(SIGNALLED)).toBe(true);
    await until(async () => (reboot()!.exitCode !== -1 ? true : undefined), 60_000, 20);
    expect(sim.node('w-1').up).toBe(false);
  });
});
