// End to end: maintenance windows through the bundle, against one two-worker twin. A run started
// outside every window reads the node listing and nothing else (no Lease, no write, no Talos call) and
// ends partial; a window that closes while node 1 is in flight lets it finish and never claims node 2.
// The bundle runs on real time, so the window is built from the test's clock: a 6-field cron (seconds
// first) firing at this very second once a year, closing 60 s later; node 1's reboot is held down until
// the window has closed, so node 1 is in flight when it closes however fast or slow the machine is. The
// one bound left on the machine's pace is the window itself: the bundle must start node 1 inside it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { timelineOf } from '../../demo/summaryText.js';
import { formatZoned } from '../../src/report/windows.js';
import { A, act, requireKubectl, startCluster } from './helpers.js';
import { addWorkers } from './parallelWorkers.js';

let c: SimCluster;
beforeAll(async () => {
  requireKubectl();
  c = await startCluster({ defaultNodes: false });
  addWorkers(c, ['w-1', 'w-2']);
});
afterAll(async () => {
  await c?.stop();
});

const nodeWrites = (name: string) => c.kube.mutatingRequests().filter((r) => r.path === `/api/v1/nodes/${name}`);

describe('e2e: maintenance windows', () => {
  it('started outside every window: partial, every node left, the next opening said, nothing but the listing read', async () => {
    const run = await act(c, { 'maintenance-windows': "- { start: '0 0 1 1 *', duration: 1h, timezone: UTC }" });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('partial');
    expect(run.outputs.left).toBe('2');
    const next = `${new Date().getUTCFullYear() + 1}-01-01T00:00:00+00:00 (UTC)`;
    expect(run.annotations).toContainEqual(
      expect.objectContaining({
        kind: 'notice',
        title: 'maintenance window closed',
        message: expect.stringContaining(`the next opens at ${next}`),
      }),
    );
    expect(c.kube.mutatingRequests()).toEqual([]);
    expect(c.kube.requests.filter((r) => r.path.includes('/leases'))).toEqual([]);
    expect(c.talos.apiCalls).toEqual([]);
  });

  it('a window closing while node 1 is in flight: node 1 finishes, node 2 is never claimed, partial with the next opening', async () => {
    const now = new Date();
    now.setUTCMilliseconds(0);
    const cron = `${now.getUTCSeconds()} ${now.getUTCMinutes()} ${now.getUTCHours()} ${now.getUTCDate()} ${now.getUTCMonth() + 1} *`;
    // open from this second for 60 s: the bundle must start node 1 inside it, 1-2 s in on an idle
    // machine, but more than 12 s beside a CPU burner and more than 30 s on a 2-core machine at a load
    // of 24 (the window is a wall-clock thing: the run reads the runner's clock); node 1's reboot
    // stays down until the window has closed, on the same wall clock the bundle reads. The idle wait
    // costs no CPU.
    const closesAt = now.getTime() + 60_000;
    c.talos.holdNextReboot('w-1');
    const release = setInterval(() => {
      if (Date.now() <= closesAt || !c.talos.mutatingCommands().some((x) => x.command === 'reboot')) return;
      try {
        c.talos.releaseReboot('w-1');
        clearInterval(release);
      } catch {
        // the reboot is recorded before it is held: the next tick releases it
      }
    }, 100);
    // ready-timeout well past the window: node 1's reboot is held until the window closed, which on an
    // idle machine is ~58 s after the reboot was sent (the channel reaches it within 2 s of the start)
    const run = await act(c, { 'maintenance-windows': `- start: '${cron}'\n  duration: 60s\n`, 'ready-timeout': '180s' }).finally(() =>
      clearInterval(release),
    );
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result, run.stdout).toBe('partial');
    expect(run.outputs.left, run.stdout).toBe('1');
    const decisions = JSON.parse(run.outputs.decisions) as Array<{ name: string; outcome: string; startedAt: string; endedAt: string }>;
    expect(decisions.map((d) => d.name)).toEqual(['w-1']);
    expect(decisions[0].outcome).toBe('rebooted');
    expect(Date.parse(decisions[0].startedAt)).toBeLessThan(closesAt);
    expect(Date.parse(decisions[0].endedAt)).toBeGreaterThan(closesAt);
    // node 2: not one write, so never claimed nor cordoned
    expect(nodeWrites('w-2')).toEqual([]);
    expect(c.kube.node('w-2').metadata.annotations?.[A.owner]).toBeUndefined();
    const next = new Date(now);
    next.setUTCFullYear(now.getUTCFullYear() + 1);
    expect(run.annotations).toContainEqual(
      expect.objectContaining({
        kind: 'notice',
        title: 'maintenance window closed',
        message: expect.stringContaining(`the next opens at ${formatZoned(next.getTime(), 'UTC')}`),
      }),
    );
    const timeline = timelineOf(run.summary)!;
    expect(timeline).toMatch(/^\(holds\) +\| *# *\|$/m);
    expect(timeline).toMatch(/^# maintenance window at .* \(w-2\): outside every maintenance window/m);
  });
});
