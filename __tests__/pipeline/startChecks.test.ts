// The scheduler through the start-check port (src/core/model/startCheck.ts, docs/start-checks.md), on the
// fakes and their virtual clock: checks made for the test, asked as the run's own list is, so each answer
// (start, hold, stop partial or failed, refuse) and the begin/end lifetimes are seen doing what the port
// says, whatever the check's name.
import { describe, expect, it } from 'vitest';
import { present } from '../../src/action/publish.js';
import type { StartAnswer, StartCheck, StartQuestion } from '../../src/core/model/startCheck.js';
import { makeContext } from '../../src/pipeline/context.js';
import { NodeRuns } from '../../src/pipeline/nodeRun.js';
import { rollLogs } from '../../src/pipeline/rollLogs.js';
import { rollNodes, withStartChecks, type RollEnd, type RollState } from '../../src/pipeline/scheduler.js';
import { makeCluster, rolloutDeps } from './harness.js';

const workers = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `w${i + 1}` }));

/** Roll every node of `c` asking `checks` before each start, as the run does (no Lease: the scheduler alone). */
async function rollWith(c: ReturnType<typeof makeCluster>, checks: StartCheck[]) {
  const deps = rolloutDeps(c, {}, { lock: undefined });
  const ctx = makeContext(deps);
  const nodes = await c.kube.listNodes();
  const nodeRuns = new NodeRuns(ctx);
  const roll: RollState = {
    maxUnavailable: 1,
    times: [],
    peak: 0,
    logs: rollLogs(deps, ctx),
    quarantined: [],
    quarantinedNow: new Map(),
    checks,
  };
  const end: RollEnd = await withStartChecks(
    checks,
    nodes,
    ctx.log,
    async () => (await rollNodes(ctx, nodeRuns, nodes, new Set(), roll)) ?? { result: 'processed' },
  );
  return { end, records: nodeRuns.records() };
}

/** A check answering `answer(q)` for each question, and recording what it was asked and when it began and ended. */
function check(name: string, answer: (q: StartQuestion) => StartAnswer, events: string[] = []): StartCheck {
  return {
    name,
    begin: () => (events.push(`${name}: begin`), Promise.resolve()),
    ask: (q) => (events.push(`${name}: ${q.node.name}`), Promise.resolve(answer(q))),
    end: () => (events.push(`${name}: end`), Promise.resolve()),
  };
}

describe('the scheduler through the start-check port (fakes)', () => {
  it('refuse: the node is not started, its record is refused with the finding and the next step, the roll goes on', async () => {
    const c = makeCluster(workers(3));
    const refuseW2 = check('never-drains', (q) =>
      q.node.name === 'w2'
        ? {
            kind: 'refuse',
            check: 'never-drains',
            value: { pods: ['shop/web-1'] },
            message: 'its drain can never finish',
            nextStep: 'scale shop/web',
          }
        : { kind: 'start' },
    );
    const { end, records } = await rollWith(c, [refuseW2]);
    expect(end).toEqual({ result: 'processed' });
    expect(records.map((r) => [r.node, r.outcome])).toEqual([
      ['w1', 'rebooted'],
      ['w2', 'refused'],
      ['w3', 'rebooted'],
    ]);
    const w2 = records[1];
    expect([w2.reason, w2.nextStep]).toEqual(['its drain can never finish', 'scale shop/web']);
    // its one step: the check that refused it, failed with its message (what the timeline and the details show)
    expect(w2.steps.map((s) => [s.name, s.ok, s.detail])).toEqual([['start check (never-drains)', false, 'its drain can never finish']]);
    // never claimed: not one write to w2
    expect(c.kube.calls.filter((x) => x.name === 'w2' && x.method !== 'getNode' && x.method !== 'listNodes')).toEqual([]);
    // nothing sent to its Talos either (w2 is 10.0.0.11)
    expect(c.talos.calls.filter((x) => x.addresses.includes('10.0.0.11'))).toEqual([]);
    // counted as refused in the outputs
    const p = present({
      kind: 'rollout',
      mode: 'apply',
      registry: ['ghcr.io'],
      revision: 'rev-2',
      failOnPartial: false,
      result: 'processed',
      records,
      notReached: [],
      upToDate: [],
    });
    expect(JSON.parse(p.outputs!.decisions).map((d: { name: string; outcome: string }) => [d.name, d.outcome])).toContainEqual([
      'w2',
      'refused',
    ]);
  });

  it('stop, partial: any check’s stop ends the roll partial with its finding, whatever its name; nodes already started finish', async () => {
    const c = makeCluster(workers(3));
    const quiet = check('quiet-period', (q) =>
      q.finished.length >= 1
        ? { kind: 'stop', ends: 'partial', check: 'quiet-period', value: { untilMs: 5 }, message: 'a deploy is settling' }
        : { kind: 'start' },
    );
    const { end, records } = await rollWith(c, [quiet]);
    expect(records.map((r) => [r.node, r.outcome])).toEqual([['w1', 'rebooted']]);
    expect(end).toEqual({
      result: 'partial',
      notReached: ['w2', 'w3'],
      notice: 'a deploy is settling',
      stop: { check: 'quiet-period', value: { untilMs: 5 }, message: 'a deploy is settling' },
    });
  });

  it('stop, failed: the run fails with the check’s error and starts nothing more', async () => {
    const c = makeCluster(workers(2));
    const error = new Error('the silence could not be renewed');
    const { end, records } = await rollWith(c, [
      check('silence', () => ({ kind: 'stop', ends: 'failed', error, check: 'silence', value: null, message: error.message })),
    ]);
    expect(records).toEqual([]);
    expect(end).toEqual({ result: 'failed', notReached: ['w1', 'w2'], error });
  });

  it('the first answer that is not start wins, in the list’s order; a hold looks again at the instant it names', async () => {
    const c = makeCluster(workers(1));
    const t0 = c.clock.now();
    const events: string[] = [];
    const hold = check(
      'later',
      (q) =>
        q.nowMs < t0 + 90_000
          ? { kind: 'hold', lookAgainAtMs: t0 + 90_000, check: 'later', value: null, message: 'not yet' }
          : { kind: 'start' },
      events,
    );
    const never = check('after', () => ({ kind: 'start' }), events);
    const { records } = await rollWith(c, [hold, never]);
    expect(Date.parse(records[0].startedAt!)).toBe(t0 + 90_000);
    // held once (the second check not asked then), then both asked; begun in order, ended in reverse
    expect(events).toEqual(['later: begin', 'after: begin', 'later: w1', 'later: w1', 'after: w1', 'after: end', 'later: end']);
  });

  it('begin and end: a begin that throws fails the run before any start, and the checks begun before it are ended', async () => {
    const c = makeCluster(workers(2));
    const events: string[] = [];
    const first = check('first', () => ({ kind: 'start' }), events);
    const broken: StartCheck = {
      name: 'broken',
      begin: () => Promise.reject(new Error('alertmanager refused the silence')),
      ask: () => Promise.resolve({ kind: 'start' }),
    };
    const { end, records } = await rollWith(c, [first, broken]);
    expect(records).toEqual([]);
    expect(end.result).toBe('failed');
    expect(end.result === 'failed' && end.error.message).toBe('alertmanager refused the silence');
    expect(events).toEqual(['first: begin', 'first: end']);
  });

  it('end runs whatever ends the roll: after a node failed', async () => {
    const c = makeCluster(workers(2));
    const drain = c.kube.drain.bind(c.kube);
    c.kube.drain = async (name: string, timeoutMs: number) => {
      if (name === 'w1') throw new Error('the drain broke');
      return drain(name, timeoutMs);
    };
    const events: string[] = [];
    const { end } = await rollWith(c, [check('silence', () => ({ kind: 'start' }), events)]);
    expect(end.result).toBe('failed');
    expect(events).toEqual(['silence: begin', 'silence: w1', 'silence: end']);
  });
});
