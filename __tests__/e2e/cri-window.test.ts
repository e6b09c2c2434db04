// End to end: after a reboot Talos answers with the new boot id before it loads cri (apid starts in
// the Initialize sequence, cri in StartAllServices on ≤ 1.13 or by cri.ServiceController on 1.14;
// docs/talos-evidence-timing.md). The twin holds cri unlisted for a pinned window (criUnlistedMs): the
// proof reads again while cri cannot be read, then proves the node; a cri that never comes fails the
// node at ready-timeout, left fenced. Through talosctl the window is hidden: `talosctl reboot --wait`
// returns only once the machine is Running and ready.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { A, act, ann, byName, node, REVISION, requireKubectl, startCluster, verifiedRev } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

/** the run's default poll interval (act() leaves RAR_POLL_INTERVAL_MS unset) */
const POLL_MS = 2000;
const WINDOW_MS = 2500;

/** when the reboot of `name` was sent (over the API or through talosctl) */
function rebootSentAt(c: SimCluster, name: string): number {
  const ip = c.talos.node(name).ip;
  const r = c.talos.mutatingCommands().filter((x) => x.command === 'reboot' && x.nodes.includes(ip));
  expect(r.length).toBe(1);
  return r[0].at;
}

/** the cri service reads of `name` after its reboot was sent, over either read path */
function criReadsAfterReboot(c: SimCluster, name: string): number {
  const ip = c.talos.node(name).ip;
  const at = rebootSentAt(c, name);
  const api = c.talos.apiCalls.filter((x) => x.method === '/machine.MachineService/ServiceList' && x.node === ip && x.at > at);
  const cli = c.talos.commands.filter((x) => x.command === 'service' && x.nodes.includes(ip) && x.at > at);
  return api.length + cli.length;
}

describe('e2e: the proof waits while a rebooted node lists no cri', () => {
  for (const [label, version] of [
    ['1.14 (cri.ServiceController waits for cri.toml)', '1.14'],
    ['1.13 (StartAllServices)', '1.13'],
  ] as const) {
    it(`${label}: cri unlisted for longer than a poll interval; the proof waits, the node ends rebooted and verified`, async () => {
      c = await startCluster({ defaultNodes: false, criUnlistedMs: WINDOW_MS });
      c.addNode({ name: 'worker-1', role: 'worker', version });
      const bootBefore = c.talos.node('worker-1').bootID;
      const run = await act(c, { reboot: 'always' });
      expect(run.exitCode, run.stdout).toBe(0);
      const d = byName(run)['worker-1'] as any;
      expect(d.outcome, run.stdout).toBe('rebooted');
      expect(c.talos.node('worker-1').bootID).not.toBe(bootBefore);
      // the first reading found no cri; it was read again, poll after poll, until cri was up
      expect(run.stdout).toMatch(/worker-1: after the reboot cri is not readable \(Talos answers before it loads cri\); reading it again/);
      expect(criReadsAfterReboot(c, 'worker-1')).toBeGreaterThanOrEqual(Math.ceil(WINDOW_MS / POLL_MS));
      expect(d.proof.values.criState, JSON.stringify(d.proof)).toBe('Running');
      expect(verifiedRev(ann(c, 'worker-1'))).toBe(REVISION);
      expect(ann(c, 'worker-1')[A.owner]).toBeUndefined();
      expect(node(c, 'worker-1').spec.unschedulable ?? false).toBe(false);
    });
  }

  it('through talosctl the reboot returns once the machine is ready: the first proof reading finds cri up', async () => {
    c = await startCluster({ defaultNodes: false, cliPath: true, criUnlistedMs: WINDOW_MS });
    c.addNode({ name: 'worker-1', role: 'worker', version: '1.13' });
    const run = await act(c, { reboot: 'always' });
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run)['worker-1'] as any;
    expect(d.outcome, run.stdout).toBe('rebooted');
    expect(run.stdout).not.toMatch(/worker-1: after the reboot .*; reading it again/);
    expect(criReadsAfterReboot(c, 'worker-1')).toBe(1);
    expect(verifiedRev(ann(c, 'worker-1'))).toBe(REVISION);
  });

  it('cri never loaded within ready-timeout: the node fails with a clear error and stays fenced', async () => {
    c = await startCluster({ defaultNodes: false, criUnlistedMs: Infinity });
    c.addNode({ name: 'worker-1', role: 'worker', version: '1.14' });
    const run = await act(c, { reboot: 'always', 'ready-timeout': '5s' });
    expect(run.exitCode).not.toBe(0);
    const d = byName(run)['worker-1'] as any;
    expect(d.outcome, run.stdout).toBe('failed');
    expect(run.stdout).toMatch(/worker-1: still at the ready-timeout, cri is not readable \(Talos answers before it loads cri\)/);
    expect(d.reason).toMatch(/lists no service "cri"|not registered/);
    // the reboot was sent and nothing proved the node: it stays cordoned under the claim for a person
    expect(ann(c, 'worker-1')[A.owner]).toBeDefined();
    expect(ann(c, 'worker-1')[A.verified]).toBeUndefined();
    expect(node(c, 'worker-1').spec.unschedulable).toBe(true);
  });
});
