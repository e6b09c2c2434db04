import { describe, expect, it } from 'vitest';
import { formatDuration, plural } from '../../src/core/format.js';

describe('formatDuration', () => {
  it.each([
    [0, '0 ms'],
    [850, '850 ms'],
    [999.9, '999 ms'],
    [1000, '1.0 s'],
    [2500, '2.5 s'],
    [12_345, '12.3 s'],
    [59_999, '59.9 s'], // truncated: never `60.0 s`
    [60_000, '1m0s'],
    [205_000, '3m25s'],
    [245_999, '4m5s'],
    [3_600_000, '1h0m0s'],
    [3_720_000, '1h2m0s'],
    [929_551_000, '258h12m31s'], // hours are not folded into days, as in Go and talosctl
    [-4000, '-4.0 s'],
    [-1, '-1 ms'],
    [-205_000, '-3m25s'],
    [Number.NaN, '—'],
    [Number.POSITIVE_INFINITY, '—'],
  ])('%d ms → %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('plural', () => {
  it.each([
    [0, 'node', '0 nodes'],
    [1, 'node', '1 node'],
    [3, 'more node', '3 more nodes'],
  ])('%d %s → %s', (n, word, want) => expect(plural(n, word)).toBe(want));
});
