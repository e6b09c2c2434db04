// The timers of one simulated machine, on its wall clock (real time plus the node's clock offset).
// A boot, a config write and a cri restart are laid out as timers here; a reboot or dispose drops
// them all at once: a timer armed in an earlier generation never fires.
//
// Steps fire in the order of their instants, whatever the load. One setTimeout per step does not
// give that: Node counts a delay from a millisecond clock, so two steps a fraction of a millisecond
// apart, laid out from a slow synchronous block, can fire the wrong way round; and a step whose
// instant had passed by the time it was laid out would run at once, ahead of earlier ones still
// waiting for the blocked event loop. (A boot's "Creating service runner" then landed after cri's
// launch and left the service "Preparing" for good.) So the steps wait in one queue ordered by
// instant, behind a single timer armed for the earliest. A step's due time is read off the clock once:
// a lay-out that read the wall clock for the delay and then the monotonic clock for the due time was
// moved later by however long the OS kept the thread off its core between the two reads (a timeslice
// or more on a loaded runner), past the step laid out next (CI, 2026-12-06: the launch again ran
// before "Creating service runner").

/** setTimeout's largest delay; a longer one would fire at once */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Step {
  /** when it is due, on the monotonic clock (performance.now), so a clock offset set later moves nothing */
  due: number;
  /** the order it was laid out in: steps due at the same instant fire in that order */
  seq: number;
  fn: () => void;
}

export class NodeTimers {
  private gen = 0;
  private seq = 0;
  /** pending steps, by due then seq */
  private queue: Step[] = [];
  private handle?: NodeJS.Timeout;
  private armedFor = Infinity;
  private running = false;

  constructor(private readonly offsetMs: () => number) {}

  /** The node's wall clock, with the sub-millisecond digits the Talos API serves. */
  now(): number {
    return performance.timeOrigin + performance.now() + this.offsetMs();
  }

  /** bumped by every cancelAll: what was armed before it is void */
  get generation(): number {
    return this.gen;
  }

  /** `fn` when `ts` comes (now, after the steps due before it, when it has passed): a boot is laid out partly in the future. */
  atTime(ts: number, fn: () => void): void {
    // the wall instant on the monotonic clock, with no clock read in between
    this.at(ts - performance.timeOrigin - this.offsetMs(), fn);
  }

  /** `fn` `ms` from now. */
  later(ms: number, fn: () => void): void {
    this.at(performance.now() + ms, fn);
  }

  /** `fn` at `due` on the monotonic clock; a due time that has passed keeps its place among the others. */
  private at(due: number, fn: () => void): void {
    // a step pinned never to come (criUnlistedMs: Infinity), or beyond what a timer can hold
    if (!(due - performance.now() <= MAX_TIMER_MS)) return;
    const step: Step = { due, seq: this.seq++, fn };
    let i = this.queue.length;
    while (i > 0 && this.queue[i - 1].due > step.due) i--;
    this.queue.splice(i, 0, step);
    // due already: it runs now, after every step due before it (unless a step is running: then in its turn)
    if (step.due <= performance.now()) this.runDue();
    else this.arm();
  }

  /** Every pending timer dropped: the machine went down (or the twin stops). */
  cancelAll(): void {
    this.gen++;
    this.queue = [];
    clearTimeout(this.handle);
    this.handle = undefined;
    this.armedFor = Infinity;
  }

  /** Runs every step that is due, in order, then arms the timer for the next. */
  private runDue(): void {
    if (this.running) return;
    this.running = true;
    try {
      const gen = this.gen;
      while (this.queue.length > 0 && this.queue[0].due <= performance.now() && gen === this.gen) {
        this.queue.shift()!.fn();
      }
    } finally {
      this.running = false;
      this.arm();
    }
  }

  private arm(): void {
    const next = this.queue[0];
    if (!next || this.running) return;
    if (this.handle && this.armedFor <= next.due) return;
    clearTimeout(this.handle);
    this.armedFor = next.due;
    this.handle = setTimeout(
      () => {
        this.handle = undefined;
        this.armedFor = Infinity;
        this.runDue();
      },
      Math.max(0, next.due - performance.now()),
    );
  }
}
