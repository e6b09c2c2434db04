import { describe, expect, it } from 'vitest';
import { formatGap, formatInstant, parseRfc3339, rfc3339Ms } from '../../src/core/instants.js';

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

describe('parseRfc3339: the one RFC 3339 parser (Lease MicroTime, COSI metadata)', () => {
  it('keeps the whole second and the fractional digits as written', () => {
    expect(parseRfc3339('2026-08-20T10:11:12Z')).toEqual({ secondMs: at('2026-08-20T10:11:12Z'), fraction: '' });
    expect(parseRfc3339('2026-08-20T11:11:12.123456789+01:00')).toEqual({ secondMs: at('2026-08-20T10:11:12Z'), fraction: '123456789' });
    // RFC 3339 §5.6 lets `T` and `Z` be lower case
    expect(parseRfc3339('2026-08-20t10:11:12z')).toEqual({ secondMs: at('2026-08-20T10:11:12Z'), fraction: '' });
  });

  it.each([
    ['Go time.String()', '2026-08-20 10:11:12 +0000 UTC'],
    ['Feb 30 (Date.parse would roll it into March)', '2026-02-30T10:11:12Z'],
    ['24:00', '2026-08-20T24:00:00Z'],
    ['no zone', '2026-08-20T10:11:12'],
    ['a five-digit year', '20260-08-20T10:11:12Z'],
  ])('is undefined for %s', (_what, text) => {
    expect(parseRfc3339(text)).toBeUndefined();
    expect(rfc3339Ms(text)).toBeUndefined();
  });

  it('rfc3339Ms truncates below the millisecond', () => {
    expect(rfc3339Ms('2026-08-20T10:11:12.123999Z')).toBe(at('2026-08-20T10:11:12Z') + 123);
    expect(rfc3339Ms('2026-08-20T10:11:12.5Z')).toBe(at('2026-08-20T10:11:12Z') + 500);
  });
});
