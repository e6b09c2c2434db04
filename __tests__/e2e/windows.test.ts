// End to end: maintenance windows through the bundle, against one two-worker twin. A run started
// outside every window reads the node listing and nothing else (no Lease, no write, no Talos call) and
// ends partial; a window that closes while node 1 is in flight lets it finish and never claims node 2.
// The bundle runs on real time, so the window is built from the test's clock: a 6-field cron (seconds
// first) firing at this very second once a year, closing a few seconds later, while a node's roll takes
// longer than that (each reboot 14 s here).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { timelineOf } from '../../demo/summaryText.js';
import { formatZoned } from '../../src/report/windows.js';
import { A, act, requireKubectl, startCluster } from './helpers.js';
import { addWorkers } from './parallelWorkers.js';

let c: SimCluster;
beforeAll(async () => {
  requireKubectl();
  c = await startCluster({ defaultNodes: false, rebootMs: 14_000 });
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
    // open from this second for 12 s: long enough for the bundle to claim node 1 (1-2 s in on an idle
    // machine, several seconds on a loaded runner), shorter than its reboot (14 s)
    const run = await act(c, { 'maintenance-windows': `- start: '${cron}'\n  duration: 12s\n` });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('partial');
    expect(run.outputs.left).toBe('1');
    const decisions = JSON.parse(run.outputs.decisions) as Array<{ name: string; outcome: string; startedAt: string; endedAt: string }>;
    expect(decisions.map((d) => d.name)).toEqual(['w-1']);
    expect(decisions[0].outcome).toBe('rebooted');
    const closesAt = now.getTime() + 12_000;
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
