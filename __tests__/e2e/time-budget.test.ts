// End to end: the time budget: a run that reaches it ends partial with nothing half-done; a budget no
// node fits in is an input error.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { timelineOf } from '../../demo/summaryText.js';
import { HTTP_DRAIN_GRACE_MS } from '../../src/adapters/kube/http/client.js';
import { TALOSCTL_REBOOT_GRACE } from '../../src/adapters/talos/cli/talosctl.js';
import { API_REBOOT_GRACE_MS } from '../../src/adapters/talos/api/rebootGrace.js';
import { READYZ_WAIT_MS } from '../../src/pipeline/apiserver.js';
import { BOOT_ID_READ_MS } from '../../src/pipeline/bootIdBefore.js';
import { nodeDeadlines } from '../../src/rules/budget.js';
import { A, act, REVISION, requireKubectl, startCluster, verifiedRev } from './helpers.js';
import { addWorkers } from './parallelWorkers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

/**
 * A budget 6 s above what one node may take at worst with drain-timeout 4 s and ready-timeout 12 s (6m32s,
 * mostly the adapters' fixed margins): the first node may start, and once it took its seconds less
 * than that is left, so the roll ends `partial`.
 */
const READY_TIMEOUT_S = 12;

function justAboveOneNodeS(slackS = 6): number {
  const deadlines = nodeDeadlines({
    drainTimeoutMs: 4000,
    // a real boot: Talos answers, then its CRI files are written (up to 1.5 s) and cri runs and is
    // healthy (up to 4 s more on 1.13), read at the default 2 s poll (sim/talos/timing.ts)
    readyTimeoutMs: READY_TIMEOUT_S * 1000,
    criRestartWaitMs: 20_000, // act()'s default cri-restart-wait
    verifyImage: false,
    // the bundle's drain is the channel's (requests it ends at its own deadline), not `kubectl drain`'s 60 s
    drainKillGraceMs: HTTP_DRAIN_GRACE_MS,
    // the twin's talosconfig has a client certificate: the API path's reboot, talosctl's without the boot id
    rebootGraceMs: API_REBOOT_GRACE_MS,
    rebootWithoutBootIdGraceMs: TALOSCTL_REBOOT_GRACE.withoutBootIdMs,
    bootIdReadMs: BOOT_ID_READ_MS,
    readyzWaitMs: READYZ_WAIT_MS,
    settleTimeoutMs: 30_000, // act()'s default settle-timeout
  });
  return deadlines.reduce((t, d) => t + d.ms, 0) / 1000 + slackS;
}

describe('e2e: several workers at once', () => {
  it('time-budget reached: result partial, nothing half-done, and the next run finishes the rest', async () => {
    c = await startCluster({ defaultNodes: false });
    addWorkers(c, ['w-1', 'w-2', 'w-3', 'w-4']);
    const first = await act(c, {
      'time-budget': `${justAboveOneNodeS()}s`,
      'drain-timeout': '4s',
      'ready-timeout': `${READY_TIMEOUT_S}s`,
    });
    expect(first.exitCode, first.stdout).toBe(0);
    expect(first.outputs.result).toBe('partial');
    const left = Number(first.outputs.left);
    expect(left).toBeGreaterThan(0);
    expect(first.annotations.some((a) => a.kind === 'notice' && a.message.includes(`${left} node(s) left`))).toBe(true);
    let verified = 0;
    for (const n of c.kube.nodes()) {
      const a = n.metadata.annotations ?? {};
      expect(a[A.owner], n.metadata.name).toBeUndefined();
      expect(!!n.spec.unschedulable, n.metadata.name).toBe(false);
      if (verifiedRev(a) === REVISION) verified++;
    }
    expect(verified).toBe(4 - left);
    // the timeline marks the moment the budget refused the next start, and names that node
    const timeline = timelineOf(first.summary)!;
    expect(timeline).toMatch(/^\(holds\) +\| *! *\|$/m);
    expect(timeline).toMatch(/^! time budget at .* \(w-\d\): /m);
    const again = await act(c);
    expect(again.exitCode, again.stdout).toBe(0);
    expect(again.outputs.result).toBe('processed');
    expect(JSON.parse(again.outputs.decisions).length).toBe(left);
    for (const n of c.kube.nodes()) expect(verifiedRev(n.metadata.annotations)).toBe(REVISION);
  });

  it('fail-on-partial: true fails the step when the budget ends the run', async () => {
    c = await startCluster({ defaultNodes: false });
    addWorkers(c, ['w-1', 'w-2']);
    const run = await act(c, {
      // 1 s above one node: the second cannot start once the first took its seconds
      'time-budget': `${justAboveOneNodeS(1)}s`,
      'drain-timeout': '4s',
      'ready-timeout': `${READY_TIMEOUT_S}s`,
      'fail-on-partial': 'true',
    });
    expect(run.exitCode, run.stdout).toBe(1);
    expect(run.outputs.result).toBe('partial');
    expect(Number(run.outputs.left)).toBeGreaterThan(0);
    for (const n of c.kube.nodes()) expect(n.metadata.annotations?.[A.owner], n.metadata.name).toBeUndefined();
  });

  it('a time-budget no node fits in is an input error before anything is read or changed', async () => {
    c = await startCluster({ defaultNodes: false });
    addWorkers(c, ['w-1']);
    // with the default timeouts one node may take about 2h at worst: 5 s would start nothing, ever
    const run = await act(c, { 'time-budget': '5s' });
    expect(run.exitCode).toBe(1);
    expect(run.outputs.result).toBe('failed');
    expect(run.stdout).toMatch(/input \\?"time-budget\\?": 5\.0 s is shorter than what one node may take at worst/);
    expect(c.kube.mutatingRequests()).toEqual([]);
  });
});
