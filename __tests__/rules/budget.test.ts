import { describe, expect, it } from 'vitest';
import {
  budgetAllows,
  budgetTooShort,
  nodeDeadlines,
  type BudgetInput,
  type DeadlineInputs,
  type FinishedNode,
} from '../../src/rules/budget.js';

const MIN = 60_000;
const worker = (tookMin: number): FinishedNode => ({ role: 'worker', tookMs: tookMin * MIN });
const controlPlane = (tookMin: number): FinishedNode => ({ role: 'control-plane', tookMs: tookMin * MIN });

/** The defaults: drain-timeout 45m, ready-timeout 10m, cri-restart-wait 60s, and the adapters' margins. */
const DEFAULTS: DeadlineInputs = {
  drainTimeoutMs: 45 * MIN,
  readyTimeoutMs: 10 * MIN,
  criRestartWaitMs: 1 * MIN,
  verifyImage: false,
  drainKillGraceMs: 1 * MIN,
  rebootGraceMs: 1 * MIN,
  readyzWaitMs: 2 * MIN,
};
const sum = (d: DeadlineInputs) => nodeDeadlines(d).reduce((s, x) => s + x.ms, 0);

function decide(over: Partial<BudgetInput>) {
  return budgetAllows({
    budgetMs: 200 * MIN,
    runStartMs: 1_000_000,
    nowMs: 1_000_000,
    role: 'worker',
    finished: [],
    deadlines: nodeDeadlines(DEFAULTS),
    left: 10,
    ...over,
  });
}

describe('nodeDeadlines: what one node may take at worst', () => {
  it('covers every long wait of a node at its own deadline, not drain-timeout + ready-timeout alone', () => {
    const waits = nodeDeadlines(DEFAULTS);
    expect(waits.map((w) => [w.what, w.ms / MIN])).toEqual([
      ['the wait for Talos to restart cri', 1],
      ['the drain', 46], // --timeout, and the grace before the process is killed
      ['the wait for /readyz and a second drain after a transport failure', 48],
      ['talosctl reboot --wait', 11],
      ['the wait for /readyz and for Ready', 12],
    ]);
    expect(sum(DEFAULTS)).toBe(118 * MIN);
    expect(sum(DEFAULTS)).toBeGreaterThan(DEFAULTS.drainTimeoutMs + DEFAULTS.readyTimeoutMs);
  });

  it('the settle gate adds its wait of up to settle-timeout before the drain (none when it is off)', () => {
    expect(sum({ ...DEFAULTS, settleTimeoutMs: 10 * MIN }) - sum(DEFAULTS)).toBe(10 * MIN);
    expect(sum({ ...DEFAULTS, settleTimeoutMs: 0 })).toBe(sum(DEFAULTS));
    expect(nodeDeadlines({ ...DEFAULTS, settleTimeoutMs: 10 * MIN })[0]).toEqual({
      what: 'the settle gate before the drain',
      ms: 10 * MIN,
    });
  });

  it('verify-image adds its own wait of up to ready-timeout', () => {
    expect(sum({ ...DEFAULTS, verifyImage: true }) - sum(DEFAULTS)).toBe(10 * MIN);
  });

  it('grows with each timeout it is made of', () => {
    for (const k of [
      'drainTimeoutMs',
      'readyTimeoutMs',
      'criRestartWaitMs',
      'drainKillGraceMs',
      'rebootGraceMs',
      'readyzWaitMs',
    ] as const) {
      expect(sum({ ...DEFAULTS, [k]: DEFAULTS[k] + MIN }), k).toBeGreaterThan(sum(DEFAULTS));
    }
  });
});

describe('budgetAllows', () => {
  it('without a budget every start is allowed', () => {
    const d = decide({ budgetMs: undefined, nowMs: 1e12 });
    expect(d).toMatchObject({ allowed: true, basis: 'none' });
    expect(d.remainingMs).toBeUndefined();
  });

  it('a node starts only while the time left covers the sum of its own deadlines', () => {
    const first = decide({ nowMs: 1_000_000 + 82 * MIN, left: 1 });
    expect(first).toMatchObject({ allowed: true, remainingMs: 118 * MIN, neededMs: 118 * MIN, basis: 'deadlines' });
    const d = decide({ nowMs: 1_000_000 + 82 * MIN + 1, left: 1 });
    expect(d).toMatchObject({ allowed: false, neededMs: 118 * MIN, basis: 'deadlines' });
    expect(d.message).toBe(
      'time-budget: 1h57m59s left, a worker may take up to 1h58m0s (the sum of its own deadlines): no new node started; 1 node left',
    );
  });

  it('quick nodes earlier in the run do not lower the estimate: the next drain may be held by a PDB for all of drain-timeout', () => {
    const d = decide({ nowMs: 1_000_000 + 100 * MIN, finished: [worker(4), worker(6), worker(0.2)] });
    expect(d).toMatchObject({ allowed: false, neededMs: 118 * MIN, basis: 'deadlines' });
  });

  it('a node of its kind that took longer than the sum raises the estimate (the short calls between the waits are not in the sum)', () => {
    const d = decide({ nowMs: 1_000_000 + 60 * MIN, finished: [worker(125), controlPlane(190)], left: 3 });
    expect(d).toMatchObject({ allowed: true, neededMs: 125 * MIN, basis: 'observed' });
    const late = decide({ nowMs: 1_000_000 + 76 * MIN, finished: [worker(125)], left: 3 });
    expect(late).toMatchObject({ allowed: false, remainingMs: 124 * MIN, neededMs: 125 * MIN, basis: 'observed' });
    expect(late.message).toBe('time-budget: 2h4m0s left, a worker took up to 2h5m0s so far: no new node started; 3 nodes left');
  });

  it('weighs each kind on its own observed times', () => {
    const d = decide({ role: 'control-plane', finished: [worker(150)], nowMs: 1_000_000 + 70 * MIN });
    expect(d).toMatchObject({ allowed: true, basis: 'deadlines', neededMs: 118 * MIN });
  });

  it('an overrun budget shows 0 left and never allows', () => {
    const d = decide({ nowMs: 1_000_000 + 300 * MIN, finished: [worker(1)] });
    expect(d.allowed).toBe(false);
    expect(d.remainingMs).toBe(-100 * MIN);
    expect(d.message).toMatch(/^time-budget: 0 ms left/);
  });
});

describe('budgetTooShort: a budget no node fits in is refused up front', () => {
  const deadlines = [
    { what: 'the drain', ms: 46 * 60_000 },
    { what: 'the wait for Ready', ms: 12 * 60_000 },
  ];
  it("no budget, or one at least the sum of one node's deadlines, fits", () => {
    expect(budgetTooShort(undefined, deadlines)).toBeUndefined();
    expect(budgetTooShort(58 * 60_000, deadlines)).toBeUndefined();
  });
  it('a budget below the sum names the sum and every deadline in it', () => {
    expect(budgetTooShort(58 * 60_000 - 1, deadlines)).toMatch(
      /is shorter than what one node may take at worst, 58m0s \(the drain 46m0s \+ the wait for Ready 12m0s\), so no node could start/,
    );
  });
});
