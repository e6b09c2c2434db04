import { describe, expect, it } from 'vitest';
import {
  budgetAllows,
  budgetTooShort,
  nodeDeadlines,
  type BudgetInput,
  type DeadlineInputs,
  type FinishedNode,
} from '../../src/rules/budget.js';
import { HTTP_DRAIN_GRACE_MS } from '../../src/adapters/kube/http/client.js';
import { API_REBOOT_GRACE_MS } from '../../src/adapters/talos/api/rebootGrace.js';
import { TALOSCTL_REBOOT_GRACE } from '../../src/adapters/talos/cli/talosctl.js';

const MIN = 60_000;
const worker = (tookMin: number): FinishedNode => ({ role: 'worker', tookMs: tookMin * MIN });
const controlPlane = (tookMin: number): FinishedNode => ({ role: 'control-plane', tookMs: tookMin * MIN });

/**
 * The defaults: drain-timeout 45m, ready-timeout 10m, cri-restart-wait 60s, and fixed margins in whole
 * minutes (the boot id read's bound, talosctl's reboot grace, and a minute for the drain, as a killed
 * `kubectl drain` had) so the rule's sums read in minutes. The bundle's own margins (the channel's drain
 * ends at its deadline: 5 s) are in BUNDLE below, which the docs' figures are checked against.
 */
const DEFAULTS: DeadlineInputs = {
  drainTimeoutMs: 45 * MIN,
  readyTimeoutMs: 10 * MIN,
  criRestartWaitMs: 1 * MIN,
  verifyImage: false,
  drainKillGraceMs: 1 * MIN,
  rebootGraceMs: 1 * MIN,
  rebootWithoutBootIdGraceMs: 1 * MIN,
  bootIdReadMs: 1 * MIN,
  readyzWaitMs: 2 * MIN,
};
/** The bundle's: the channel's drain grace, over the Talos API (no reboot grace) or through talosctl (its minute). */
const BUNDLE_API: DeadlineInputs = {
  ...DEFAULTS,
  settleTimeoutMs: 10 * MIN,
  drainKillGraceMs: HTTP_DRAIN_GRACE_MS,
  rebootGraceMs: API_REBOOT_GRACE_MS,
};
const BUNDLE_TALOSCTL: DeadlineInputs = { ...BUNDLE_API, rebootGraceMs: TALOSCTL_REBOOT_GRACE.withBootIdMs };
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
      ['the boot id read and the reboot', 12], // its own bound before the Reboot, then ready-timeout and the grace
      ['the wait for /readyz and for Ready', 12],
    ]);
    expect(sum(DEFAULTS)).toBe(119 * MIN);
    expect(sum(DEFAULTS)).toBeGreaterThan(DEFAULTS.drainTimeoutMs + DEFAULTS.readyTimeoutMs);
  });

  it('the reboot: the boot id read within its bound and the path’s grace, or a read refused at once and talosctl’s grace', () => {
    const reboot = (d: DeadlineInputs) => nodeDeadlines(d).find((w) => w.what === 'the boot id read and the reboot')!.ms / MIN;
    // talosctl: its grace after the read's bound
    expect(reboot(DEFAULTS)).toBe(12);
    // the API: no grace past ready-timeout; without the boot id, talosctl's minute in place of the read's unspent bound
    expect(reboot({ ...DEFAULTS, rebootGraceMs: 0 })).toBe(11);
    expect(reboot({ ...DEFAULTS, rebootGraceMs: 0, rebootWithoutBootIdGraceMs: 3 * MIN })).toBe(13);
  });

  it('the settle gate adds its wait of up to settle-timeout before the drain (none when it is off)', () => {
    expect(sum({ ...DEFAULTS, settleTimeoutMs: 10 * MIN }) - sum(DEFAULTS)).toBe(10 * MIN);
    expect(sum({ ...DEFAULTS, settleTimeoutMs: 0 })).toBe(sum(DEFAULTS));
    expect(nodeDeadlines({ ...DEFAULTS, settleTimeoutMs: 10 * MIN })[0]).toEqual({
      what: 'the settle gate before the drain',
      ms: 10 * MIN,
      from: { input: 'settle-timeout', ms: 10 * MIN },
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
      'bootIdReadMs',
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
    const first = decide({ nowMs: 1_000_000 + 81 * MIN, left: 1 });
    expect(first).toMatchObject({ allowed: true, remainingMs: 119 * MIN, neededMs: 119 * MIN, basis: 'deadlines' });
    const d = decide({ nowMs: 1_000_000 + 81 * MIN + 1, left: 1 });
    expect(d).toMatchObject({ allowed: false, neededMs: 119 * MIN, basis: 'deadlines' });
    expect(d.message).toBe(
      'time-budget: 1h58m59s left, a worker may take up to 1h59m0s (the sum of its own deadlines): no new node started; 1 node left',
    );
  });

  it('quick nodes earlier in the run do not lower the estimate: the next drain may be held by a PDB for all of drain-timeout', () => {
    const d = decide({ nowMs: 1_000_000 + 100 * MIN, finished: [worker(4), worker(6), worker(0.2)] });
    expect(d).toMatchObject({ allowed: false, neededMs: 119 * MIN, basis: 'deadlines' });
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
    expect(d).toMatchObject({ allowed: true, basis: 'deadlines', neededMs: 119 * MIN });
  });

  it('an overrun budget shows 0 left and never allows', () => {
    const d = decide({ nowMs: 1_000_000 + 300 * MIN, finished: [worker(1)] });
    expect(d.allowed).toBe(false);
    expect(d.remainingMs).toBe(-100 * MIN);
    expect(d.message).toMatch(/^time-budget: 0 ms left/);
  });
});

describe('budgetTooShort: a budget no node fits in is refused up front', () => {
  const deadlines = nodeDeadlines({ ...DEFAULTS, drainTimeoutMs: 10 * MIN, readyTimeoutMs: 5 * MIN });
  // 1 + 11 + 13 + 7 + 7 = 39 minutes
  it("no budget, or one at least the sum of one node's deadlines, fits", () => {
    expect(budgetTooShort(undefined, deadlines)).toBeUndefined();
    expect(budgetTooShort(39 * MIN, deadlines)).toBeUndefined();
  });
  it('a budget below the sum names the sum and every deadline in it', () => {
    expect(budgetTooShort(39 * MIN - 1, deadlines)).toMatch(
      /is shorter than what one node may take at worst, 39m0s \(the wait for Talos to restart cri 1m0s \+ the drain 11m0s \+ .* \+ the wait for \/readyz and for Ready 7m0s\), so no node could start/,
    );
  });

  it('with the defaults and a 50-minute budget: the whole text, naming the inputs to lower, how often each counts, and how far the largest goes', () => {
    // the bundle's margins over the Talos API, as docs/parallel.md quotes the text in full
    expect(budgetTooShort(50 * MIN, nodeDeadlines(BUNDLE_API))).toBe(
      '50m0s is shorter than what one node may take at worst, 2h6m10s (the settle gate before the drain 10m0s + the wait for Talos to restart cri 1m0s + ' +
        'the drain 45m5s + the wait for /readyz and a second drain after a transport failure 47m5s + the boot id read and the reboot 11m0s + ' +
        'the wait for /readyz and for Ready 12m0s), so no node could start. ' +
        'That worst case is 2 × drain-timeout (45m0s) + 2 × ready-timeout (10m0s) + settle-timeout (10m0s) + cri-restart-wait (1m0s) + 5m10s of fixed margins: ' +
        'lower drain-timeout, ready-timeout, settle-timeout, cri-restart-wait until it is well below time-budget ' +
        '(the difference is the time in which nodes may start; lowering drain-timeout alone to 6m55s would just fit one node, with no time left to start another), ' +
        'or raise time-budget above 2h6m10s. docs/parallel.md, "Sizing a short job", shows how',
    );
    // through talosctl: its minute past the reboot's wait
    expect(budgetTooShort(50 * MIN, nodeDeadlines(BUNDLE_TALOSCTL))).toMatch(/at worst, 2h7m10s \(.* \+ 6m10s of fixed margins/);
  });

  it('verify-image makes ready-timeout count three times; a budget the largest input alone cannot fix says so', () => {
    const d = nodeDeadlines({ ...DEFAULTS, verifyImage: true });
    expect(budgetTooShort(10 * MIN, d)).toContain('3 × ready-timeout (10m0s)');
    expect(budgetTooShort(10 * MIN, d)).toContain('lowering drain-timeout alone cannot make it fit');
  });

  it("the docs' example for a 60-minute job fits: time-budget 50m with drain-timeout 8m, ready-timeout 5m, settle-timeout 5m", () => {
    // the bundle's margins on the longer path (talosctl's reboot grace)
    const d = nodeDeadlines({ ...BUNDLE_TALOSCTL, drainTimeoutMs: 8 * MIN, readyTimeoutMs: 5 * MIN, settleTimeoutMs: 5 * MIN });
    expect(d.reduce((n, x) => n + x.ms, 0)).toBe(38 * MIN + 10_000);
    expect(budgetTooShort(50 * MIN, d)).toBeUndefined();
    // and nodes may start during the first 11m50s of the budget
    const window = 11 * MIN + 50_000;
    expect(decide({ budgetMs: 50 * MIN, deadlines: d, nowMs: 1_000_000 + window }).allowed).toBe(true);
    expect(decide({ budgetMs: 50 * MIN, deadlines: d, nowMs: 1_000_000 + window + 1 }).allowed).toBe(false);
  });
});
