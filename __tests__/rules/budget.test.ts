import { describe, expect, it } from 'vitest';
import { budgetAllows, type BudgetInput, type FinishedNode } from '../../src/rules/budget.js';

const MIN = 60_000;
const worker = (tookMin: number, rebooted = true): FinishedNode => ({ role: 'worker', tookMs: tookMin * MIN, rebooted });
const controlPlane = (tookMin: number, rebooted = true): FinishedNode => ({ role: 'control-plane', tookMs: tookMin * MIN, rebooted });

function decide(over: Partial<BudgetInput>) {
  return budgetAllows({
    budgetMs: 60 * MIN,
    runStartMs: 1_000_000,
    nowMs: 1_000_000,
    role: 'worker',
    finished: [],
    boundMs: 55 * MIN,
    left: 10,
    ...over,
  });
}

describe('budgetAllows', () => {
  it('without a budget every start is allowed', () => {
    const d = decide({ budgetMs: undefined, nowMs: 1e12 });
    expect(d).toMatchObject({ allowed: true, basis: 'none' });
    expect(d.remainingMs).toBeUndefined();
  });

  it('stops when the time left is less than the longest a node of this kind took', () => {
    const d = decide({ nowMs: 1_000_000 + 19 * MIN, finished: [worker(12), worker(7), controlPlane(50)], left: 17, budgetMs: 60 * MIN });
    expect(d).toMatchObject({ allowed: true, remainingMs: 41 * MIN, neededMs: 12 * MIN, basis: 'observed' });
    const late = decide({ nowMs: 1_000_000 + 49 * MIN, finished: [worker(12), worker(7)], left: 17 });
    expect(late).toMatchObject({ allowed: false, remainingMs: 11 * MIN, neededMs: 12 * MIN, basis: 'observed' });
    expect(late.message).toBe('time-budget: 11m0s left, a worker took up to 12m0s so far: no new node started; 17 nodes left');
  });

  it('the boundary: exactly enough time left is enough', () => {
    expect(decide({ nowMs: 1_000_000 + 48 * MIN, finished: [worker(12)] }).allowed).toBe(true);
    expect(decide({ nowMs: 1_000_000 + 48 * MIN + 1, finished: [worker(12)] }).allowed).toBe(false);
  });

  it('uses drain-timeout + ready-timeout before a node of this kind has rebooted', () => {
    const first = decide({ nowMs: 1_000_000 + 4 * MIN, left: 1 });
    expect(first).toMatchObject({ allowed: true, neededMs: 55 * MIN, basis: 'bound' });
    const d = decide({ nowMs: 1_000_000 + 6 * MIN, left: 1 });
    expect(d).toMatchObject({ allowed: false, remainingMs: 54 * MIN, neededMs: 55 * MIN, basis: 'bound' });
    expect(d.message).toBe(
      'time-budget: 54m0s left, a worker may take up to 55m0s (drain-timeout + ready-timeout; none has rebooted in this run yet): no new node started; 1 node left',
    );
  });

  it('skipped nodes alone do not replace the bound: the next node may need a reboot', () => {
    const d = decide({ nowMs: 1_000_000 + 10 * MIN, finished: [worker(0.2, false), worker(0.3, false)] });
    expect(d).toMatchObject({ allowed: false, neededMs: 55 * MIN, basis: 'bound' });
    // once one rebooted, the longest observed (reboots and skips alike) is the estimate
    expect(decide({ nowMs: 1_000_000 + 10 * MIN, finished: [worker(0.3, false), worker(9)] })).toMatchObject({
      allowed: true,
      neededMs: 9 * MIN,
      basis: 'observed',
    });
  });

  it('an observed time longer than the bound is not ignored before a reboot was seen', () => {
    expect(decide({ finished: [worker(58, false)] })).toMatchObject({ neededMs: 58 * MIN, basis: 'bound', allowed: true });
  });

  it('weighs each kind on its own times', () => {
    const finished = [worker(5), worker(6)];
    expect(decide({ role: 'control-plane', finished, nowMs: 1_000_000 + 10 * MIN })).toMatchObject({
      allowed: false,
      basis: 'bound',
      neededMs: 55 * MIN,
    });
    const d = decide({ role: 'control-plane', finished: [...finished, controlPlane(20)], nowMs: 1_000_000 + 45 * MIN, left: 2 });
    expect(d).toMatchObject({ allowed: false, neededMs: 20 * MIN });
    expect(d.message).toBe('time-budget: 15m0s left, a control plane took up to 20m0s so far: no new node started; 2 nodes left');
  });

  it('an overrun budget shows 0 left and never allows', () => {
    const d = decide({ nowMs: 1_000_000 + 90 * MIN, finished: [worker(1)] });
    expect(d.allowed).toBe(false);
    expect(d.remainingMs).toBe(-30 * MIN);
    expect(d.message).toMatch(/^time-budget: 0 ms left/);
  });
});
