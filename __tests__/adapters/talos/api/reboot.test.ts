// The reboot over the Talos API against the twin's gRPC server: the boot id read (bootId, which the
// pipeline calls within its own bound, src/pipeline/bootIdBefore.ts) → Reboot → boot id until it
// changes, with no talosctl started; each error class (Reboot refused, a node that never goes down,
// one that never comes back, cancellation), the boot id read's own failures, and the talosctl fallback
// when the role cannot Read.
import { type Socket, connect, createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../../../../src/adapters/exec.js';
import { TalosApi } from '../../../../src/adapters/talos/api/apiClient.js';
import { TalosConnection } from '../../../../src/adapters/talos/api/connection.js';
import { MIN_POLL_CALL_MS } from '../../../../src/adapters/talos/api/reboot.js';
import { loadTalosContext } from '../../../../src/adapters/talos/api/talosconfig.js';
import { Talosctl, TALOSCTL_REBOOT_GRACE } from '../../../../src/adapters/talos/cli/talosctl.js';
import { openTalosClient, type OpenedTalos } from '../../../../src/adapters/talos/open.js';
import { ToolError } from '../../../../src/core/errors.js';
import { TalosSim } from '../../../../sim/talos/index.js';
import { recordingHooks } from '../../../sim-talos/helpers.js';

const CRED = { username: 'ci-bot', password: 'token-1' };
const W1 = '10.0.2.1';
const W2 = '10.0.2.2';
const W3 = '10.0.2.3';
const W4 = '10.0.2.4';
const W5 = '10.0.2.5';
const W6 = '10.0.2.6';
const W7 = '10.0.2.7';
const W8 = '10.0.2.8';
const W9 = '10.0.2.9';
const REBOOT_MS = 600;

let sim: TalosSim;
let opened: OpenedTalos;
let api: TalosApi;

beforeAll(async () => {
  sim = await TalosSim.start({ kube: recordingHooks(), rebootMs: REBOOT_MS });
  for (const [i, ip] of [W1, W2, W3, W4, W5, W6, W7, W8, W9].entries()) {
    sim.addNode({ name: `w-${i + 1}`, ip, role: 'worker', credential: { 'ghcr.io': CRED } });
  }
  opened = await openTalosClient({ runner: new Runner(), path: sim.talosconfigPath });
  expect(opened.client).toBeInstanceOf(TalosApi);
  api = opened.client as TalosApi;
});

afterAll(async () => {
  opened?.close();
  await sim?.stop();
});

const talosctlReboots = () => sim.commands.filter((c) => c.command === 'reboot');
const callsTo = (node: string, since: number) => sim.apiCalls.slice(since).filter((c) => c.node === node);

/** the boot id as the pipeline reads it before the reboot, then the reboot */
async function rebootOf(client: TalosApi, node: string, timeoutMs: number): Promise<void> {
  return client.reboot(node, timeoutMs, await client.bootId(node, 5000));
}

async function rejection(p: Promise<unknown>): Promise<ToolError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ToolError);
  return e as ToolError;
}

describe('reboot over the API', () => {
  it('says so in the describe line', () => {
    expect(opened.describe).toMatch(/reboots through the API \(MachineService\.Reboot/);
    expect(opened.describe).toMatch(/the credential patch through talosctl \(no auth patch given\)/);
  });

  it('with the boot id read before, sends Reboot, and resolves once the node answers with a new boot id; no talosctl', async () => {
    const before = sim.node(W1).bootID;
    const since = sim.apiCalls.length;
    const t0 = Date.now();
    await rebootOf(api, W1, 20_000);
    // the node was down for REBOOT_MS: resolving earlier would mean the old boot id was accepted
    expect(Date.now() - t0).toBeGreaterThanOrEqual(REBOOT_MS);
    expect(sim.node(W1).bootID).not.toBe(before);
    expect(sim.node(W1).up).toBe(true);
    const calls = callsTo(W1, since);
    expect(calls[0].method).toBe('/machine.MachineService/Read');
    expect(sim.apiCalls.length).toBeGreaterThan(since);
    expect(calls[1]).toMatchObject({ method: '/machine.MachineService/Reboot', code: 0 });
    // the last read answered (with the new boot id); the outage's Unavailable reads are no error
    expect(calls.at(-1)).toMatchObject({ method: '/machine.MachineService/Read', code: 0 });
    expect(calls.filter((c) => c.method === '/machine.MachineService/Reboot')).toHaveLength(1);
    expect(talosctlReboots()).toEqual([]);
  });

  it('a refused Reboot (PermissionDenied) fails as forbidden at once; the node is not rebooted', async () => {
    const before = sim.node(W2).bootID;
    sim.failNext({ command: 'reboot', node: W2 }, { stderr: 'rpc error: code = PermissionDenied desc = not authorized\n', exitCode: 1 });
    const e = await rejection(rebootOf(api, W2, 20_000));
    expect(e.kind).toBe('forbidden');
    expect(e.tool).toBe('talos-api');
    expect(e.message).toContain('/machine.MachineService/Reboot');
    expect(e.message).toContain('not authorized');
    expect(sim.node(W2).bootID).toBe(before);
    expect(talosctlReboots()).toEqual([]);
  });

  it('a node that never comes back fails as timeout at the deadline, the outage itself being no error', async () => {
    sim.failNextReboot(W3, 'stays-down');
    const t0 = Date.now();
    const e = await rejection(rebootOf(api, W3, 2500));
    const took = Date.now() - t0;
    expect(e.kind).toBe('timeout');
    expect(e.message).toMatch(/did not answer with a new boot id within 2\.5 ?s/);
    expect(e.message).toContain('Unavailable');
    // it gives up once less than one short read is left (MIN_POLL_CALL_MS), not past the deadline
    expect(took).toBeGreaterThanOrEqual(2500 - MIN_POLL_CALL_MS);
    expect(took).toBeLessThan(2500 + 6000);
    expect(sim.node(W3).up).toBe(false);
  });

  it('the time budget counts no grace past the deadline for this reboot, talosctl’s for the one it hands over (no boot id)', () => {
    // the test above: the wait ends once less than one short read is left, never past its deadline
    expect(api.rebootGrace).toEqual({ withBootIdMs: 0, withoutBootIdMs: TALOSCTL_REBOOT_GRACE.withoutBootIdMs });
  });

  it('a Reboot answered but never carried out fails as timeout, the boot id unchanged', async () => {
    const before = sim.node(W4).bootID;
    sim.failNextReboot(W4, 'ignored');
    const e = await rejection(rebootOf(api, W4, 2000));
    expect(e.kind).toBe('timeout');
    expect(e.message).toContain('last: the boot id was unchanged');
    expect(sim.node(W4).bootID).toBe(before);
  });

  // Cancelled once the node went down after the Reboot's answer (an event, not a timer a loaded machine
  // may fire early or late), while the wait sleeps towards a poll and a deadline a minute away: ended within 20 s of the
  // abort is at once (a wait that ignored the signal would end at the minute, as a timeout or after it).
  it('cancellation ends the wait at once as cancelled', async () => {
    const ctx = loadTalosContext({ path: sim.talosconfigPath });
    const conn = new TalosConnection({ endpoint: ctx.endpoints[0], credentials: ctx.credentials! });
    const abort = new AbortController();
    const client = new TalosApi(conn, new Talosctl({ runner: new Runner() }), { reboot: { signal: abort.signal, pollMs: 60_000 } });
    try {
      sim.failNextReboot(W5, 'stays-down');
      const since = sim.apiCalls.length;
      const p = rebootOf(client, W5, 60_000);
      let settled = false;
      void p.catch(() => undefined).then(() => (settled = true));
      // the node went down: the twin starts the reboot 300 ms after it sent the Reboot's answer, so the
      // client (on the same event loop) has read it and sleeps in the wait
      const down = () => callsTo(W5, since).some((c) => c.method === '/machine.MachineService/Reboot') && !sim.node(W5).up;
      while (!down() && !settled) await new Promise((r) => setTimeout(r, 20));
      expect(settled).toBe(false);
      const abortedAt = Date.now();
      abort.abort();
      const e = await rejection(p);
      expect(e.kind).toBe('cancelled');
      expect(e.message).toContain('the run was stopped while the node rebooted');
      expect(Date.now() - abortedAt).toBeLessThan(20_000);
    } finally {
      conn.close();
    }
  });

  // The boot id read before the reboot: its failures are classified once here (a cut stream is an
  // outage, `transport`); the pipeline reads it again within its own bound and sends nothing without it.
  it('a boot id read failing as an outage (Unavailable, a cut stream) is a transport failure; nothing is sent', async () => {
    const before = sim.node(W7).bootID;
    const since = sim.apiCalls.length;
    for (const stderr of [
      'rpc error: code = Unavailable desc = connection error\n',
      'rpc error: code = Canceled desc = context canceled\n',
    ]) {
      sim.failNext({ command: 'read', node: W7 }, { stderr, exitCode: 1 });
      const e = await rejection(api.bootId(W7, 2000));
      expect(e.kind).toBe('transport');
      expect(e.message).toContain('/machine.MachineService/Read');
    }
    expect(await api.bootId(W7, 2000)).toBe(before);
    expect(callsTo(W7, since).map((c) => c.method)).toEqual(Array(3).fill('/machine.MachineService/Read'));
    expect(sim.node(W7).bootID).toBe(before);
  });

  // The read GAP_MS before the Reboot and a wait of GAP_MS + REBOOT_MS: counted from the read, the wait
  // ends REBOOT_MS after the Reboot's answer, before the node is back (it goes down 300 ms after the
  // answer); counted from the answer, it has GAP_MS more than the reboot takes. GAP_MS is several
  // seconds so that a loaded machine's late timers (the twin's reboot, the client's 1 s poll) cannot
  // use up the margin: 1.5 s of it was about one poll and the twin's boot.
  it("the wait for a new boot id counts from the Reboot's answer: a boot id read long before spends none of it", async () => {
    const GAP_MS = 5000;
    const before = await api.bootId(W8, 2000);
    await new Promise((r) => setTimeout(r, GAP_MS));
    const t0 = Date.now();
    await api.reboot(W8, GAP_MS + REBOOT_MS, before);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(REBOOT_MS);
    expect(sim.node(W8).bootID).not.toBe(before);
  });

  it('a boot id read failing otherwise than an outage keeps its kind (the pipeline does not read it again)', async () => {
    const since = sim.apiCalls.length;
    sim.failNext({ command: 'read', node: W9 }, { stderr: 'rpc error: code = Internal desc = read failed\n', exitCode: 1 });
    const e = await rejection(api.bootId(W9, 2000));
    expect(e.kind).not.toBe('transport');
    expect(e.message).toMatch(/read failed/);
    expect(callsTo(W9, since).map((c) => c.method)).toEqual(['/machine.MachineService/Read']);
  });

  it('a role that may not Read the boot id (os:operator) leaves the reboot to talosctl, which follows its events', async () => {
    const ctx = loadTalosContext({ path: sim.talosconfigPath });
    const conn = new TalosConnection({ endpoint: ctx.endpoints[0], credentials: ctx.credentials! });
    const cli = new Talosctl({ runner: new Runner(), talosconfig: sim.talosconfigPath, binary: join(sim.binDir, 'talosctl') });
    const client = new TalosApi(conn, cli);
    try {
      const before = sim.node(W6).bootID;
      const since = sim.apiCalls.length;
      sim.failNext({ command: 'read', node: W6 }, { stderr: 'rpc error: code = PermissionDenied desc = not authorized\n', exitCode: 1 });
      const read = await rejection(client.bootId(W6, 2000));
      expect(read.kind).toBe('forbidden');
      await client.reboot(W6, 20_000, undefined);
      expect(sim.node(W6).bootID).not.toBe(before);
      // nothing was sent over the API: the only call was the refused boot id read
      expect(callsTo(W6, since).map((c) => [c.method, c.code])).toEqual([['/machine.MachineService/Read', 7]]);
      expect(talosctlReboots().map((c) => c.nodes)).toEqual([[W6]]);
    } finally {
      conn.close();
    }
  });

  it('an endpoint that is itself away (a rebooting control plane) is dialled again about once a second, not after grpc backoff', async () => {
    // A TCP relay in front of the twin's endpoint. While "away" it takes each connection and drops it at
    // once (a node whose apid is not up yet), and counts the dials: grpc's default backoff (1 s, × 1.6
    // an attempt, ± 20 %) dials at most 5 times in 12 s; the connection's own interval (1 s) 10 or more,
    // and at least 8 on a machine whose timers run late. Counted, not timed, so a loaded machine that
    // stretches each attempt a little does not turn a right answer into a failure.
    const [host, port] = sim.endpoint.split(':');
    const sockets = new Set<Socket>();
    let away = false;
    const dials: number[] = [];
    const front = createServer((down) => {
      if (away) {
        dials.push(Date.now());
        down.destroy();
        return;
      }
      const up = connect(Number(port), host);
      for (const s of [down, up]) {
        sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => sockets.delete(s));
      }
      down.pipe(up).pipe(down);
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    const relayPort = (front.address() as { port: number }).port;
    const ctx = loadTalosContext({ path: sim.talosconfigPath });
    const conn = new TalosConnection({ endpoint: `127.0.0.1:${relayPort}`, credentials: ctx.credentials!, callTimeoutMs: 1000 });
    const client = new TalosApi(conn, new Talosctl({ runner: new Runner() }));
    try {
      expect((await client.version([W1])).get(W1)?.ok).toBe(true);
      away = true;
      for (const s of sockets) s.destroy();
      const awayUntil = Date.now() + 12_000;
      while (Date.now() < awayUntil) {
        expect((await client.version([W1])).get(W1)?.ok).toBe(false);
        await new Promise((r) => setTimeout(r, 300));
      }
      expect(dials.length).toBeGreaterThanOrEqual(8);
      away = false;
      while (!(await client.version([W1])).get(W1)?.ok) await new Promise((r) => setTimeout(r, 100));
    } finally {
      conn.close();
      for (const s of sockets) s.destroy();
      front.close();
    }
  });
});
