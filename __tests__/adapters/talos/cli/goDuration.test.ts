import { describe, expect, it } from 'vitest';
import {
  formatGoDuration,
  formatGoDurationNs,
  parseGoDuration,
  parseGoDurationNs,
} from '../../../../src/adapters/talos/cli/parse/goDuration.js';
import { ParseError } from '../../../../src/adapters/parseError.js';

describe('parseGoDuration', () => {
  it.each([
    ['0s', 0],
    ['0', 0],
    ['59s', 59_000],
    ['3m25s', 205_000],
    ['1h0m0s', 3_600_000],
    ['258h12m31s', (258 * 3600 + 12 * 60 + 31) * 1000],
    ['-4s', -4000],
    ['1.5s', 1500],
    ['500ms', 500],
    ['2m0.5s', 120_500],
    ['1µs', 0.001],
    ['1μs', 0.001],
    ['1us', 0.001],
    ['1.2ms', 1.2],
    ['750ns', 0.00075],
    ['.5s', 500],
    ['+3s', 3000],
    ['1h30m', 5_400_000],
  ])('%s → %d ms', (text, ms) => {
    expect(parseGoDuration(text)).toBeCloseTo(ms, 9);
  });

  it('is exact in nanoseconds where doubles are not', () => {
    expect(parseGoDurationNs('0.1s')).toBe(100_000_000n);
    expect(parseGoDurationNs('2m0.5s')).toBe(120_500_000_000n);
    expect(parseGoDuration('0.7s')).toBe(700);
  });

  it.each(['', '-', 's', '3', '3x', '1h 2m', '1.s.', '.s', '3m25s ago', '1d'])('rejects %j', (text) => {
    expect(() => parseGoDuration(text)).toThrow(ParseError);
  });
});

describe('formatGoDuration (Duration.String)', () => {
  it.each([
    [0, '0s'],
    [59_000, '59s'],
    [205_000, '3m25s'],
    [3_600_000, '1h0m0s'],
    [(258 * 3600 + 12 * 60 + 31) * 1000, '258h12m31s'],
    [-4000, '-4s'],
    [1500, '1.5s'],
    [500, '500ms'],
    [120_500, '2m0.5s'],
    [0.001, '1µs'],
    [1.2, '1.2ms'],
    [1_800_000, '30m0s'],
  ])('%d ms → %s', (ms, text) => {
    expect(formatGoDuration(ms)).toBe(text);
    expect(parseGoDuration(text)).toBeCloseTo(ms, 9);
  });

  it('formats nanoseconds', () => {
    expect(formatGoDurationNs(1n)).toBe('1ns');
    expect(formatGoDurationNs(-1_000_000_001n)).toBe('-1.000000001s');
  });
});
