import { describe, expect, it } from 'vitest';
import { formatGap, formatInstant } from '../../src/instants.js';

const at = (iso: string) => Date.parse(iso);

describe('formatGap', () => {
  it.each([
    [410, 414, '+412 ms ± 2 ms'],
    [5500, 8500, '+7 s ± 1.5 s'],
    [98.2, 98.2, '+98 ms ± 0 ms'],
    [-1300, 700, '-300 ms ± 1 s'],
    [411.9, 412.3, '+412 ms ± 200 µs'],
    [62_000, 64_000, '+1m3s ± 1 s'],
  ])('[%d, %d] → %s', (lo, hi, want) => {
    expect(formatGap(lo, hi)).toBe(want);
  });
});

describe('formatInstant', () => {
  const ref = at('2026-08-20T23:00:00Z');
  it('prints what the bounds know, no digit they invented', () => {
    expect(formatInstant({ earliestMs: at('2026-08-20T10:15:44.412Z') + 0.3, latestMs: at('2026-08-20T10:15:44.412Z') + 0.3 }, ref)).toBe(
      '10:15:44.412Z',
    );
    // a whole-second reading [t, t + 999] is that second, not 10:15:44.999Z
    expect(formatInstant({ earliestMs: at('2026-08-20T10:15:44Z'), latestMs: at('2026-08-20T10:15:44Z') + 999 }, ref)).toBe('10:15:44Z');
    expect(formatInstant({ earliestMs: at('2026-08-20T10:15:00Z'), latestMs: at('2026-08-20T10:15:00Z') + 59_999 }, ref)).toBe('10:15Z');
    expect(formatInstant({ earliestMs: at('2026-08-20T10:15:43.2Z'), latestMs: at('2026-08-20T10:15:45.8Z') }, ref)).toBe(
      '10:15:44.5Z ± 1.3 s',
    );
  });
  it('dates an instant from another UTC day than the reference, and every instant without one', () => {
    const b = { earliestMs: at('2026-08-19T23:59:59Z'), latestMs: at('2026-08-19T23:59:59Z') + 999 };
    expect(formatInstant(b, ref)).toBe('2026-08-19 23:59:59Z');
    expect(formatInstant(b)).toBe('2026-08-19 23:59:59Z');
  });
});
