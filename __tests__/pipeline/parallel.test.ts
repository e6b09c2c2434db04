// The scheduler loop of src/pipeline/run.ts on the in-memory fakes: the finer cases of several nodes
// in flight (the e2e tests check the same through the bundle and the twin's own writes).
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/errors.js';
import { keys, makeCluster, roll } from './harness.js';

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
      expect(c.kube.state(r.node).annotations[keys.verifiedRevision]).toBe('rev-2');
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

  it('the time budget: no node starts when less than drain-timeout + ready-timeout is left; result partial', async () => {
    const c = makeCluster(workers(3));
    const res = await roll(c, { timeBudgetMs: 60_000, drainTimeoutMs: 60_000, readyTimeoutMs: 600_000 });
    expect(res.result).toBe('partial');
    expect(res.records).toEqual([]);
    expect(res.notReached).toEqual(['w1', 'w2', 'w3']);
    expect(res.notice).toMatch(/time-budget: .* no new node started; 3 nodes left/);
    expect(c.kube.mutatingCalls().filter((m) => !m.includes('Lease'))).toEqual([]);
  });

  it('the time budget, once a node rebooted: its time is the estimate, and the roll stops when it no longer fits', async () => {
    const c = makeCluster(workers(4));
    // each fake reboot advances the test clock by the polls; budget for about two nodes
    const one = await roll(makeCluster(workers(1)), {});
    const took = one.records[0].durationMs;
    const res = await roll(c, { timeBudgetMs: Math.max(took * 2.5, 1), drainTimeoutMs: 1, readyTimeoutMs: 1 });
    expect(res.result).toBe('partial');
    expect(res.records.length).toBeGreaterThanOrEqual(2);
    expect(res.records.every((r) => r.outcome === 'rebooted')).toBe(true);
    expect(res.notReached.length).toBe(4 - res.records.length);
  });
});
