// The timers of one simulated machine, on its wall clock (real time plus the node's clock offset).
// A boot, a config write and a cri restart are laid out as timers here; a reboot or dispose drops
// them all at once: a timer armed in an earlier generation never fires.

/** setTimeout's largest delay; a longer one would fire at once */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class NodeTimers {
  private gen = 0;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly offsetMs: () => number) {}

  /** The node's wall clock, with the sub-millisecond digits the Talos API serves. */
  now(): number {
    return performance.timeOrigin + performance.now() + this.offsetMs();
  }

  /** bumped by every cancelAll: what was armed before it is void */
  get generation(): number {
    return this.gen;
  }

  /** `fn` now when `ts` has passed, else when it comes: a boot is laid out partly in the future. */
  atTime(ts: number, fn: () => void): void {
    const now = this.now();
    if (ts <= now) fn();
    else this.later(ts - now, fn);
  }

  later(ms: number, fn: () => void): void {
    // a step pinned never to come (criUnlistedMs: Infinity), or beyond what a timer can hold
    if (!(ms <= MAX_TIMER_MS)) return;
    const gen = this.gen;
    const t = setTimeout(
      () => {
        this.timers.delete(t);
        if (gen === this.gen) fn();
      },
      Math.max(0, ms),
    );
    this.timers.add(t);
  }

  /** Every pending timer dropped: the machine went down (or the twin stops). */
  cancelAll(): void {
    this.gen++;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
