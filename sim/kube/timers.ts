// Every delayed or periodic action of the twin goes through here, so stop() can cancel them all and a
// throwing controller step is logged instead of crashing the test process.

export class Timers {
  private readonly live = new Set<NodeJS.Timeout>();
  stopped = false;

  after(ms: number, fn: () => void): () => void {
    if (this.stopped) return () => {};
    const t = setTimeout(() => {
      this.live.delete(t);
      this.run(fn);
    }, ms);
    t.unref();
    this.live.add(t);
    return () => {
      clearTimeout(t);
      this.live.delete(t);
    };
  }

  every(ms: number, fn: () => void): () => void {
    if (this.stopped) return () => {};
    const t = setInterval(() => this.run(fn), ms);
    t.unref();
    this.live.add(t);
    return () => {
      clearInterval(t);
      this.live.delete(t);
    };
  }

  private run(fn: () => void): void {
    if (this.stopped) return;
    try {
      fn();
    } catch (e) {
      console.error('[kube-sim] controller step failed:', e);
    }
  }

  clearAll(): void {
    this.stopped = true;
    for (const t of this.live) clearTimeout(t);
    this.live.clear();
  }
}
