// The scheduler loop of src/pipeline/scheduler.ts on the in-memory fakes: the finer cases of several nodes
// in flight (the e2e tests check the same through the bundle and the twin's own writes).
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/errors.js';
import { present } from '../../src/action/publish.js';
import { keys, makeCluster, roll, verifiedRev } from './harness.js';

const MIN = 60_000;
const workers = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `w${i + 1}` }));

describe('rollout: several workers in flight (fakes)', () => {
  it('max-unavailable 2 on 5 workers: the peak is 2, every node verified, each record has its start and end', async () => {
    const c = makeCluster(workers(5));
    const res = await roll(c, { maxUnavailable: { count: 2 } });
    expect(res.result).toBe('processed');
    expect(res.inFlightMax).toBe(2);
    expect(res.maxUnavailable).toBe(2);
    expect(res.records.map((r) => r.outcome)).toEqual(Array(5).fill('rebooted'));
    for (const r of res.records) {
      expect(r.startedAt).toBeDefined();
      expect(Date.parse(r.endedAt!)).toBeGreaterThanOrEqual(Date.parse(r.startedAt!));
      expect(verifiedRev(c.kube.state(r.node))).toBe('rev-2');
    }
  });

  it('a percentage resolves against the selected workers: 50% of 4 is 2', async () => {
    const c = makeCluster(workers(4));
    const res = await roll(c, { maxUnavailable: { percent: 50 } });
    expect(res.maxUnavailable).toBe(2);
    expect(res.inFlightMax).toBe(2);
  });

  it('a failure in flight: the other node in flight finishes, no new node starts, the failed one is released', async () => {
    const c = makeCluster(workers(5));
    const error = new ToolError({
      tool: 'kubectl',
      command: 'kubectl drain',
      kind: 'timeout',
      exitCode: 1,
      stderr: 'global timeout reached',
      node: 'w1',
    });
    const drain = c.kube.drain.bind(c.kube);
    // only w1's drain fails
    c.kube.drain = async (name: string, timeoutMs: number) => {
      if (name === 'w1') throw error;
      return drain(name, timeoutMs);
    };
    const res = await roll(c, { maxUnavailable: { count: 2 } });
    expect(res.result).toBe('failed');
    expect(res.error?.message).toMatch(/^w1: /);
    const by = Object.fromEntries(res.records.map((r) => [r.node, r.outcome]));
    expect(by.w1).toBe('failed');
    expect(by.w2).toBe('rebooted');
    expect(res.notReached).toEqual(expect.arrayContaining(['w4', 'w5']));
    for (const n of ['w1', 'w2', 'w3', 'w4', 'w5']) {
      expect(c.kube.state(n).annotations[keys.owner]).toBeUndefined();
      expect(c.kube.state(n).unschedulable).toBe(false);
    }
  });

  /**
   * A node whose every wait stays within its own deadline, yet takes longer than drain-timeout +
   * ready-timeout: a drain of 50 s (drain-timeout 60 s), a `talosctl reboot --wait` that reports after
   * 9 min (its --timeout is ready-timeout, 10 min), then 5 min until Ready (the wait allows 10 min).
   */
  function slowButWithinItsDeadlines(c: ReturnType<typeof makeCluster>) {
    c.kube.drainBody = async () => {
      c.clock.t += 50_000;
    };
    const reboot = c.talos.reboot.bind(c.talos);
    let readyAt = Infinity;
    c.talos.reboot = async (address, timeoutMs, bootBefore) => {
      await reboot(address, timeoutMs, bootBefore);
      c.clock.t += 9 * MIN - 30_000; // the fake reboot itself takes 30 s
      readyAt = c.clock.now() + 5 * MIN;
      c.kube.mutate('w1', (o) => (o.status.conditions[0].status = 'False'));
    };
    const getNode = c.kube.getNode.bind(c.kube);
    c.kube.getNode = async (name) => {
      if (c.clock.now() >= readyAt) {
        readyAt = Infinity;
        c.kube.mutate(name, (o) => (o.status.conditions[0].status = 'True'));
      }
      return getNode(name);
    };
  }

  it('the time budget: a node is started only when the sum of its own deadlines fits; then it ends within the budget', async () => {
    const timeouts = { drainTimeoutMs: 60_000, readyTimeoutMs: 10 * MIN, criRestartWaitMs: 60_000 };
    // 14 min covers drain-timeout + ready-timeout (11 min), not what this node may take (31 min): the
    // old estimate started it and it overran; now such a budget is refused before anything runs
    const c = makeCluster(workers(1));
    slowButWithinItsDeadlines(c);
    await expect(roll(c, { ...timeouts, timeBudgetMs: 14 * MIN })).rejects.toThrow(
      /input "time-budget": 14m0s is shorter than what one node may take at worst, 31m0s/,
    );
    expect(c.kube.mutatingCalls()).toEqual([]);
    // with the sum of its deadlines left (31 min), it starts, and ends within the budget
    const d = makeCluster(workers(1));
    slowButWithinItsDeadlines(d);
    const t1 = d.clock.now();
    const ok = await roll(d, { ...timeouts, timeBudgetMs: 31 * MIN });
    expect(ok.records.map((r) => r.outcome)).toEqual(['rebooted']);
    expect(Date.parse(ok.records[0].endedAt!) - t1).toBeGreaterThan(14 * MIN); // what overran the 14 min above
    expect(Date.parse(ok.records[0].endedAt!) - t1).toBeLessThanOrEqual(31 * MIN);
  });

  it('a budget shorter than one node may take is an input error: nothing is read from Talos or changed, no Lease', async () => {
    const c = makeCluster(workers(3));
    await expect(roll(c, { timeBudgetMs: 60_000, drainTimeoutMs: 60_000, readyTimeoutMs: 600_000 })).rejects.toMatchObject({
      name: 'InputError',
      input: 'time-budget',
    });
    expect(c.kube.mutatingCalls()).toEqual([]);
  });

  it('the refusal names the inputs to lower with the values this run has (the adapters’ margins included)', async () => {
    const c = makeCluster(workers(1));
    const err = await roll(c, {
      timeBudgetMs: 50 * MIN,
      drainTimeoutMs: 45 * MIN,
      readyTimeoutMs: 10 * MIN,
      settleTimeoutMs: 10 * MIN,
    }).catch((e: Error) => e);
    expect(err).toMatchObject({ name: 'InputError', input: 'time-budget' });
    expect((err as Error).message).toMatch(/^input "time-budget": 50m0s is shorter than what one node may take at worst, 2h9m0s \(/);
    expect((err as Error).message).toContain(
      'That worst case is 2 × drain-timeout (45m0s) + 2 × ready-timeout (10m0s) + settle-timeout (10m0s) + cri-restart-wait (1m0s) + 8m0s of fixed margins: ' +
        'lower drain-timeout, ready-timeout, settle-timeout, cri-restart-wait until it is well below time-budget',
    );
    expect(c.kube.mutatingCalls()).toEqual([]);
  });

  // The Talos path's reboot grace is its port's (src/adapters/types.ts RebootGrace): the API path's
  // reboot never outlives ready-timeout, and without the role to read the boot id talosctl's grace
  // takes the place of the boot id read's unspent bound; the time budget adds talosctl's only on its path.
  const API_GRACE = { withBootIdMs: 0, withoutBootIdMs: MIN };
  const DEFAULT_WAITS = { drainTimeoutMs: 45 * MIN, readyTimeoutMs: 10 * MIN, settleTimeoutMs: 10 * MIN };

  it('on the API path the budget counts the API reboot’s grace, not talosctl’s: one node may take 2h8m', async () => {
    const c = makeCluster(workers(1));
    c.talos.rebootGrace = API_GRACE;
    const err = await roll(c, { ...DEFAULT_WAITS, timeBudgetMs: 50 * MIN }).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/^input "time-budget": 50m0s is shorter than what one node may take at worst, 2h8m0s \(/);
    expect((err as Error).message).toContain('the boot id read and the reboot 11m0s');
    // a budget the API path fits in but talosctl's would not: the node starts
    const ok = await roll(c, { ...DEFAULT_WAITS, timeBudgetMs: 128 * MIN + 30_000 });
    expect(ok.result).toBe('processed');
  });

  it('before the Talos path is chosen the budget is checked with the shortest grace, then again with the opened path’s, before the Lease', async () => {
    const c = makeCluster(workers(1));
    const open = (grace: typeof API_GRACE) => async () => {
      c.talos.rebootGrace = grace;
      return { client: c.talos, describe: 'test' };
    };
    const budget = { ...DEFAULT_WAITS, timeBudgetMs: 128 * MIN + 30_000 };
    const viaCli = { talos: undefined, rebootGraceBeforeOpen: API_GRACE, openTalos: open({ withBootIdMs: MIN, withoutBootIdMs: MIN }) };
    const err = await roll(c, budget, viaCli).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/^input "time-budget": 2h8m30s is shorter than what one node may take at worst, 2h9m0s \(/);
    expect(c.kube.mutatingCalls()).toEqual([]);
    expect(c.kube.calls.filter((k) => /lease/i.test(k.method))).toEqual([]);
    const viaApi = { talos: undefined, rebootGraceBeforeOpen: API_GRACE, openTalos: open(API_GRACE) };
    expect((await roll(c, budget, viaApi)).result).toBe('processed');
  });

  it('the time budget over several nodes: nodes start while the sum of their deadlines fits, and all end within the budget', async () => {
    const c = makeCluster(workers(4));
    const one = await roll(makeCluster(workers(1)), {});
    const took = one.records[0].durationMs;
    // with 1 ms timeouts the sum is the fixed margins alone: 8 min; budget for about two nodes more
    const tiny = { drainTimeoutMs: 1, readyTimeoutMs: 1, criRestartWaitMs: 1 };
    const budget = 8 * MIN + 3 + Math.round(took * 2.5);
    const t0 = c.clock.now();
    const res = await roll(c, { ...tiny, timeBudgetMs: budget });
    expect(res.result).toBe('partial');
    expect(res.records.length).toBeGreaterThanOrEqual(2);
    expect(res.records.every((r) => r.outcome === 'rebooted')).toBe(true);
    expect(res.notReached.length).toBe(4 - res.records.length);
    for (const r of res.records) expect(Date.parse(r.endedAt!) - t0).toBeLessThanOrEqual(budget);
  });
});

describe('rollout: the timeline of a real roll (fakes)', () => {
  const summaryOf = (res: Awaited<ReturnType<typeof roll>>) =>
    present({ kind: 'rollout', mode: 'apply', registry: ['ghcr.io'], revision: 'rev-2', talosReads: 'api', failOnPartial: false, ...res })
      .summary!();
  const preOf = (html: string) => html.slice(html.indexOf('<h3>Timeline of the roll</h3>'), html.indexOf('</pre>'));

  it('max-unavailable 2 on 3 workers: a bar for every node rolled, each through its phases, the most in flight as counted', async () => {
    const res = await roll(makeCluster(workers(3)), { maxUnavailable: { count: 2 } });
    expect(res.result).toBe('processed');
    const pre = preOf(summaryOf(res));
    for (const r of res.records)
      expect(pre).toMatch(new RegExp(`\\n${r.node} +&#124; *C[^\\n]*D[^\\n]*R[^\\n]*P[^\\n]*\\^[^\\n]*U *&#124; rebooted\\n`));
    expect(pre).toContain(`most nodes in flight at once: ${res.inFlightMax}\n`);
    expect(res.holds).toEqual([]);
  });

  it('the time budget stopping the roll is a hold at that moment, naming the node it did not start, drawn as a mark', async () => {
    const c = makeCluster(workers(4));
    const one = await roll(makeCluster(workers(1)), {});
    const tiny = { drainTimeoutMs: 1, readyTimeoutMs: 1, criRestartWaitMs: 1 };
    const res = await roll(c, { ...tiny, timeBudgetMs: 8 * MIN + 3 + Math.round(one.records[0].durationMs * 2.5) });
    expect(res.result).toBe('partial');
    expect(res.holds).toEqual([{ kind: 'budget', startedAt: expect.any(String), detail: res.notice, node: res.notReached[0] }]);
    // when the last node that started ended: the budget refused the next start right then
    const lastEnd = Math.max(...res.records.map((r) => Date.parse(r.endedAt!)));
    expect(Date.parse(res.holds![0].startedAt)).toBe(lastEnd);
    const pre = preOf(summaryOf(res));
    for (const r of res.records) expect(pre).toContain(`\n${r.node} `);
    expect(pre).toMatch(/\n\(holds\) +&#124; *!&#124;\n/);
    expect(pre).toContain(`! time budget at `);
    expect(pre).toContain(`(${res.notReached[0]}): `);
  });
});
