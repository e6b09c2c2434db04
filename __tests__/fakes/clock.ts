import type { Clock } from '../../src/core/clock.js';

/** Virtual time: sleep advances it at once, so pipeline tests never wait. */
export class TestClock implements Clock {
  constructor(public t = Date.parse('2026-11-30T10:00:00Z')) {}
  now(): number {
    return this.t;
  }
  async sleep(ms: number): Promise<void> {
    this.t += ms;
  }
  random(): number {
    return 0.5;
  }
}
