// End to end: several workers in flight, checked from the TWIN's own node writes (sim/kube's
// nodeWrites, replayed by outOverTime), never from what the action says about itself.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { outOverTime } from '../../sim/kube/index.js';
import { timelineOf } from '../../demo/summaryText.js';
import { DRAIN_KILL_GRACE_MS } from '../../src/adapters/kube/kubectl.js';
import { REBOOT_GRACE_MS } from '../../src/adapters/talos/cli/talosctl.js';
import { READYZ_WAIT_MS } from '../../src/pipeline/transport.js';
import { nodeDeadlines } from '../../src/rules/budget.js';
import { A, act, ann, byName, decisions, postStep, REVISION, requireKubectl, startCluster } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

const ZONE = 'topology.kubernetes.io/zone';
const isCp = (n: string) => n.startsWith('cp-');

/** Every moment of the roll as the twin saw it: no control plane with anything else, and the workers out. */
function checkMoments(cluster: SimCluster, maxWorkers: number): number {
  const { moments } = outOverTime(cluster.kube.nodeWrites, A.owner);
  let peakWorkers = 0;
  for (const m of moments) {
    const cps = m.out.filter(isCp);
    const workers = m.out.filter((n) => !isCp(n));
    expect(cps.length, `at rv ${m.rv}: ${m.out.join(', ')}`).toBeLessThanOrEqual(1);
    if (cps.length) expect(workers, `a control plane out with workers at rv ${m.rv}`).toEqual([]);
    expect(workers.length, `at rv ${m.rv}: ${m.out.join(', ')}`).toBeLessThanOrEqual(maxWorkers);
    peakWorkers = Math.max(peakWorkers, workers.length);
  }
  return peakWorkers;
}

function addWorkers(cluster: SimCluster, names: string[], zone?: (i: number) => string): void {
  names.forEach((name, i) => cluster.addNode({ name, role: 'worker', labels: zone ? { [ZONE]: zone(i) } : undefined }));
}

/**
 * A budget 6 s above what one node may take at worst with drain-timeout and ready-timeout 4 s (7m36s,
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
    drainKillGraceMs: DRAIN_KILL_GRACE_MS,
    rebootGraceMs: REBOOT_GRACE_MS,
    readyzWaitMs: READYZ_WAIT_MS,
    settleTimeoutMs: 30_000, // act()'s default settle-timeout
  });
  return deadlines.reduce((t, d) => t + d.ms, 0) / 1000 + slackS;
}

describe('e2e: several workers at once', () => {
  it(
    'max-unavailable 3: never more than 3 workers out, control planes alone and last behind the quorum gate',
    { timeout: 60_000 },
    async () => {
      // three control planes: the quorum gate lets one reboot only while two healthy peers remain
      c = await startCluster({ defaultNodes: false });
      for (const cp of ['cp-1', 'cp-2', 'cp-3']) c.addNode({ name: cp, role: 'control-plane' });
      addWorkers(c, ['worker-1', 'worker-2', 'worker-3', 'worker-4', 'worker-5']);
      // two of the three control planes are rolled (each takes seconds); the gate still counts all three
      const run = await act(c, { 'max-unavailable': '3', nodes: 'worker-1,worker-2,worker-3,worker-4,worker-5,cp-1,cp-2' });
      expect(run.exitCode, run.stdout).toBe(0);
      expect(run.outputs.result).toBe('processed');
      expect(checkMoments(c, 3)).toBe(3);
      expect(run.outputs['in-flight-max']).toBe('3');
      expect(run.outputs.left).toBe('0');
      const d = byName(run);
      for (const cp of ['cp-1', 'cp-2']) {
        const steps = d[cp].steps.map((s) => s.name);
        const gate = (label: string) => steps.findIndex((s) => s.startsWith('quorum gate') && s.includes(label));
        expect(steps.indexOf('drain')).toBeGreaterThan(gate('drain'));
        expect(gate('drain')).toBeGreaterThanOrEqual(0);
        const lastGate = steps.map((s) => s.startsWith('quorum gate')).lastIndexOf(true);
        expect(steps.indexOf('reboot')).toBeGreaterThan(lastGate);
        expect(lastGate).toBeGreaterThan(steps.indexOf('drain'));
        expect(steps.filter((s) => s.startsWith('quorum gate')).length).toBeGreaterThanOrEqual(2);
      }
      for (const n of c.kube.nodes()) expect(n.metadata.annotations[A.verified] === REVISION).toBe(n.metadata.name !== 'cp-3');
      // each node's log group is one contiguous block: its lines never interleave with another's
      const groups = run.stdout.split('\n').filter((l) => l.startsWith('::group::') || l.startsWith('::endgroup::'));
      for (let i = 0; i < groups.length; i += 2) {
        expect(groups[i]).toMatch(/^::group::/);
        expect(groups[i + 1]).toBe('::endgroup::');
      }
      expect(run.summary).toMatch(/At most 3 in flight/);
      // the timeline: a bar for every node rolled, in roll order, and the same most in flight
      const timeline = timelineOf(run.summary)!;
      const bars = timeline.split('\n').filter((l) => /^\S+ +\|.*\| /.test(l));
      expect(bars.map((l) => l.split(' ')[0])).toEqual(JSON.parse(run.outputs.decisions).map((d: { name: string }) => d.name));
      for (const bar of bars) expect(bar).toMatch(/\|[^|]*C[^|]*D[^|]*R[^|]*P[^|]*\^[^|]*U[^|]*\| rebooted$/);
      expect(timeline).toMatch(/^most nodes in flight at once: 3$/m);
    },
  );

  it('topology-key: never two zones out at once, yet a zone fills up to max-unavailable', { timeout: 60_000 }, async () => {
    c = await startCluster({ defaultNodes: false });
    addWorkers(c, ['w-1', 'w-2', 'w-3', 'w-4', 'w-5', 'w-6'], (i) => ['a', 'b'][i % 2]);
    const run = await act(c, { 'max-unavailable': '3', 'topology-key': ZONE });
    expect(run.exitCode, run.stdout).toBe(0);
    const zoneOf = (n: string) => c!.kube.node(n).metadata.labels[ZONE];
    let peak = 0;
    for (const m of outOverTime(c.kube.nodeWrites, A.owner).moments) {
      const zones = new Set(m.out.filter((n) => !isCp(n)).map(zoneOf));
      expect(zones.size, `at rv ${m.rv}: ${m.out.join(', ')}`).toBeLessThanOrEqual(1);
      peak = Math.max(peak, m.out.length);
    }
    expect(peak).toBe(3);
  });

  it(
    'a failure on one in-flight node: no node starts after it, the others finish, each ends as its phase says',
    { timeout: 60_000 },
    async () => {
      c = await startCluster();
      addWorkers(c, ['worker-4', 'worker-5', 'worker-6']);
      // web-1 on worker-1 cannot be evicted: worker-1's drain times out and the node is released
      c.kube.setPdbAllowed('default', 'web', 0);
      const run = await act(c, { 'max-unavailable': '3', 'drain-timeout': '4s' });
      expect(run.exitCode).toBe(1);
      expect(run.outputs.result).toBe('failed');
      const d = byName(run);
      expect(d['worker-1'].outcome).toBe('failed');
      // no node started after worker-1's drain failed (the action's own times), and a node it never
      // started was never written to (the twin's writes)
      const drain = d['worker-1'].steps.find((s) => s.name === 'drain' && !s.ok)!;
      const failedAt = Date.parse(drain.startedAt!) + drain.durationMs;
      for (const x of decisions(run)) expect(Date.parse(x.startedAt!), x.name).toBeLessThanOrEqual(failedAt);
      const claimed = new Set(c.kube.nodeWrites.filter((x) => A.owner in x.annotations).map((x) => x.node));
      expect([...claimed].sort()).toEqual(Object.keys(d).sort());
      // every node started ended released (worker-1, its cordon restored) or verified; none stays claimed
      for (const n of c.kube.nodes()) {
        const a = n.metadata.annotations ?? {};
        expect(a[A.owner], n.metadata.name).toBeUndefined();
        if (d[n.metadata.name] && n.metadata.name !== 'worker-1') expect(a[A.verified], n.metadata.name).toBe(REVISION);
      }
      expect(c.kube.node('worker-1').spec.unschedulable ?? false).toBe(false);
      // control planes were never started
      for (const cp of ['cp-1', 'cp-2', 'cp-3']) expect(d[cp]).toBeUndefined();
      expect(Number(run.outputs.left)).toBe(6 + 3 - Object.keys(d).length);
    },
  );

  it(
    'cancelled during parallel drains: the post step releases or fences each held node by its own phase',
    { timeout: 60_000 },
    async () => {
      c = await startCluster({ defaultNodes: false });
      addWorkers(c, ['w-1', 'w-2', 'w-3']);
      for (const n of ['w-1', 'w-2', 'w-3']) {
        c.kube.addPod({
          namespace: 'default',
          name: `db-${n}`,
          nodeName: n,
          owner: { kind: 'ReplicaSet', name: 'db-1' },
          labels: { app: 'db' },
        });
      }
      c.kube.addPdb({ namespace: 'default', name: 'db', selector: { app: 'db' }, disruptionsAllowed: 0 });
      const run = await act(c, { 'max-unavailable': '3' }, { killWhen: (out) => (out.match(/: ▶ drain$/gm) ?? []).length >= 3 });
      const held = JSON.parse(run.state.held ?? '[]') as Array<{ node: string; phase: string }>;
      expect(held.map((h) => h.node).sort()).toEqual(['w-1', 'w-2', 'w-3']);
      const post = await postStep(c, run);
      // the main step may have restored some itself; whatever is left, nothing stays claimed and no
      // cordon of ours stays: no reboot was ever started
      expect(post.exitCode, post.stdout).toBe(0);
      for (const n of ['w-1', 'w-2', 'w-3']) {
        expect(ann(c, n)[A.owner], n).toBeUndefined();
        expect(c.kube.node(n).spec.unschedulable ?? false, n).toBe(false);
      }
    },
  );

  it('time-budget reached: result partial, nothing half-done, and the next run finishes the rest', { timeout: 60_000 }, async () => {
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
      if (a[A.verified] === REVISION) verified++;
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
    for (const n of c.kube.nodes()) expect(n.metadata.annotations[A.verified]).toBe(REVISION);
  });

  it('fail-on-partial: true fails the step when the budget ends the run', { timeout: 60_000 }, async () => {
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

  it('a time-budget no node fits in is an input error before anything is read or changed', { timeout: 30_000 }, async () => {
    c = await startCluster({ defaultNodes: false });
    addWorkers(c, ['w-1']);
    // with the default timeouts one node may take 1h58m at worst: 5 s would start nothing, ever
    const run = await act(c, { 'time-budget': '5s' });
    expect(run.exitCode).toBe(1);
    expect(run.outputs.result).toBe('failed');
    expect(run.stdout).toMatch(/input \\?"time-budget\\?": 5\.0 s is shorter than what one node may take at worst/);
    expect(c.kube.mutatingRequests()).toEqual([]);
  });
});
