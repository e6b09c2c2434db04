// The twin's machine timers fire in the order of their instants. A boot lays out its steps a few ms
// apart in one synchronous block (cri's "Creating service runner", then its launch 0.3–2 ms later).
// One setTimeout per step does not keep that order: Node counts each delay from a millisecond clock,
// and a step whose instant has already passed when it is laid out ran at once, before earlier steps
// still waiting for the blocked loop. On a loaded runner a node's cri then stayed "Preparing" after
// its launch (seen once in CI: the proof waited out its ready-timeout). Each test waits for its steps
// to have fired, not for a fixed time: a loaded runner may keep this thread off its core far longer.
import { describe, expect, it, vi } from 'vitest';
import { NodeTimers } from '../../sim/talos/nodeTimers.js';
import { until } from './helpers.js';

const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

describe('NodeTimers', () => {
  it('fires in the order of the instants, however long the blocks that laid them out took', async () => {
    const timers = new NodeTimers(() => 0);
    const fired: number[] = [];
    // 400 steps a fraction of a millisecond apart, laid out (in their order, as a boot does) from
    // blocks of synchronous work of random length, as on a loaded runner
    const t0 = timers.now() + 5;
    const at = Array.from({ length: 400 }, (_, i) => t0 + i * 0.07);
    for (const ts of at) {
      timers.atTime(ts, () => fired.push(ts));
      busy(Math.random() * 0.12);
    }
    await until(async () => (fired.length === at.length ? true : undefined), 10_000, 10);
    expect(fired).toEqual([...fired].sort((a, b) => a - b));
  });

  it('a step already due runs after the earlier steps still pending, not before them', async () => {
    const timers = new NodeTimers(() => 0);
    const order: string[] = [];
    const t0 = timers.now();
    timers.atTime(t0 + 2, () => order.push('first'));
    busy(4); // the loop is blocked: the first step's instant has passed, its timer has not run
    timers.atTime(t0 + 3, () => order.push('second'));
    await until(async () => (order.length === 2 ? true : undefined), 10_000, 10);
    expect(order).toEqual(['first', 'second']);
  });

  it('a thread descheduled while it lays out a step does not move the step: its instant is read once', async () => {
    // On a runner whose cores are shared, the OS may take the core away between any two instructions
    // for a timeslice or more. A lay-out that read the clock twice (the node's wall clock for the delay,
    // then the monotonic clock to fix the due time) moved its step later by that much, past a step laid
    // out next 0.5 ms after it: cri's launch then ran before "Creating service runner", and cri stayed
    // "Preparing" (CI, drain-kubelet, 2026-12-06). The clock jump below stands for that preemption.
    const real = performance.now.bind(performance);
    let extra = 0;
    let reads = 0;
    let preemptAtRead = -1;
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => {
      if (++reads === preemptAtRead) extra += 5;
      return real() + extra;
    });
    try {
      const timers = new NodeTimers(() => 0);
      const order: string[] = [];
      const t0 = timers.now() + 10;
      for (let preempted = 1; preempted <= 3; preempted++) {
        reads = 0;
        preemptAtRead = preempted; // the core is taken away before this clock read of the lay-out
        timers.atTime(t0 + preempted * 20, () => order.push(`runner ${preempted}`));
        preemptAtRead = -1;
        timers.atTime(t0 + preempted * 20 + 0.5, () => order.push(`launch ${preempted}`));
      }
      await until(async () => (order.length === 6 ? true : undefined), 10_000, 10);
      expect(order).toEqual(['runner 1', 'launch 1', 'runner 2', 'launch 2', 'runner 3', 'launch 3']);
    } finally {
      clock.mockRestore();
    }
  });

  it('a step laid out by a step runs in its turn; cancelAll drops everything pending', async () => {
    const timers = new NodeTimers(() => 0);
    const order: string[] = [];
    const t0 = timers.now();
    timers.atTime(t0 + 1, () => {
      order.push('a');
      timers.later(0, () => order.push('a+0'));
    });
    timers.atTime(t0 + 1000, () => order.push('late'));
    await until(async () => (order.length === 2 ? true : undefined), 10_000, 10);
    timers.cancelAll();
    // past the dropped step's instant
    await until(async () => (timers.now() > t0 + 1100 ? true : undefined), 10_000, 50);
    expect(order).toEqual(['a', 'a+0']);
  });

  it('never fires a step pinned never to come', async () => {
    const timers = new NodeTimers(() => 0);
    let fired = false;
    timers.later(Infinity, () => (fired = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(fired).toBe(false);
  });
});
