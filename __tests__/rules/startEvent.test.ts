import { describe, expect, it } from 'vitest';
import type { Instant, ServiceEvent } from '../../src/model.js';
import { latestStartEvent } from '../../src/rules/startEvent.js';

const T = Date.UTC(2026, 7, 20, 12, 0, 0);
const start = (pid: number, t: { agoMs?: number; at?: [number, number] }): ServiceEvent => ({
  state: 'Running',
  message: `Process Process(["/bin/containerd"]) started with PID ${pid}`,
  agoMs: t.agoMs,
  at: t.at ? ({ earliestMs: t.at[0], latestMs: t.at[1], via: 'api', text: new Date(t.at[0]).toISOString() } satisfies Instant) : undefined,
});
const health: ServiceEvent = { state: 'Running', message: 'Health check successful', agoMs: 1000 };

describe('latestStartEvent', () => {
  const rows: Array<{ name: string; events: ServiceEvent[]; want: ReturnType<typeof latestStartEvent> | { kind: 'latest'; pid: number } }> =
    [
      { name: 'no start event', events: [health], want: { kind: 'none' } },
      { name: 'one start event, whatever its time', events: [health, start(7, {})], want: { kind: 'latest', pid: 7 } },
      {
        name: 'CLI order (newest first): the smallest age wins',
        events: [health, start(20, { agoMs: 5000 }), start(10, { agoMs: 90_000 })],
        want: { kind: 'latest', pid: 20 },
      },
      {
        name: 'API order (oldest first): the smallest age still wins, not the first listed',
        events: [start(10, { agoMs: 90_000 }), health, start(20, { agoMs: 5000 })],
        want: { kind: 'latest', pid: 20 },
      },
      {
        name: 'by Instant: the latest `at` wins whatever the order',
        events: [start(20, { at: [T, T] }), start(10, { at: [T - 60_000, T - 60_000] })],
        want: { kind: 'latest', pid: 20 },
      },
      {
        name: 'by Instant when ages are also present: `at` decides',
        events: [start(10, { agoMs: 1000, at: [T - 60_000, T - 60_000] }), start(20, { agoMs: 90_000, at: [T, T] })],
        want: { kind: 'latest', pid: 20 },
      },
      {
        name: 'the same PID twice at the same age is not ambiguous',
        events: [start(10, { agoMs: 3000 }), start(10, { agoMs: 3000 })],
        want: { kind: 'latest', pid: 10 },
      },
      {
        name: 'two PIDs with the same printed age cannot be ordered',
        events: [start(10, { agoMs: 3000 }), start(20, { agoMs: 3000 })],
        want: { kind: 'ambiguous', reason: 'the start events of PID 10 and PID 20 cannot be ordered by time' },
      },
      {
        name: 'two PIDs with overlapping Instant bounds cannot be ordered',
        events: [start(10, { at: [T - 900, T + 100] }), start(20, { at: [T, T + 50] })],
        want: { kind: 'ambiguous', reason: 'the start events of PID 10 and PID 20 cannot be ordered by time' },
      },
      {
        name: 'one start event without a time among several',
        events: [start(10, { agoMs: 3000 }), start(20, {})],
        want: { kind: 'ambiguous', reason: '2 start events in the cri history, and not all of them carry a comparable time' },
      },
      {
        name: 'an age and an Instant are not comparable',
        events: [start(10, { agoMs: 3000 }), start(20, { at: [T, T] })],
        want: { kind: 'ambiguous', reason: '2 start events in the cri history, and not all of them carry a comparable time' },
      },
    ];
  it.each(rows)('$name', ({ events, want }) => {
    const got = latestStartEvent(events);
    if (want.kind === 'latest') {
      expect(got.kind).toBe('latest');
      expect(got.kind === 'latest' && got.pid).toBe(want.pid);
      expect(got.kind === 'latest' && events.includes(got.event)).toBe(true);
    } else {
      expect(got).toEqual(want);
    }
  });
});
