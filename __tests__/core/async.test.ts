// The small shared helpers: one pool, one shell quoter, one "CAS lost" check.
import { describe, expect, it } from 'vitest';
import { pool, reorder, unique } from '../../src/core/async.js';
import { shellQuote, shellWord } from '../../src/core/shell.js';
import { casLost, ToolError, type FailureCause } from '../../src/core/errors.js';

describe('pool', () => {
  it('keeps at most `limit` calls in flight and answers in the items order', async () => {
    let inFlight = 0;
    let peak = 0;
    const out = await pool([30, 10, 20, 5, 1], 2, async (ms) => {
      peak = Math.max(peak, ++inFlight);
      await new Promise((r) => setTimeout(r, ms));
      inFlight--;
      return ms * 2;
    });
    expect(out).toEqual([60, 20, 40, 10, 2]);
    expect(peak).toBe(2);
  });

  it('rejects with the first failure', async () => {
    await expect(pool([1, 2], 4, async (n) => (n === 2 ? Promise.reject(new Error('boom')) : n))).rejects.toThrow('boom');
  });
});

describe('unique / reorder', () => {
  it('keeps the first-seen order', () => {
    expect(unique(['b', 'a', 'b', 'c', 'a'])).toEqual(['b', 'a', 'c']);
    const m = new Map([
      ['c', 3],
      ['a', 1],
    ]);
    expect([...reorder(m, ['a', 'b', 'a', 'c'])]).toEqual([
      ['a', 1],
      ['c', 3],
    ]);
  });
});

describe('shellQuote / shellWord', () => {
  it('quotes for a POSIX shell; shellWord leaves plain words alone', () => {
    expect(shellQuote(`it's`)).toBe(`'it'\\''s'`);
    expect(shellQuote('plain')).toBe(`'plain'`);
    expect(shellWord('--nodes=10.0.0.1,10.0.0.2')).toBe('--nodes=10.0.0.1,10.0.0.2');
    expect(shellWord('a b')).toBe(`'a b'`);
    expect(shellWord('')).toBe(`''`);
  });
});

describe('casLost', () => {
  const err = (kind: FailureCause) => new ToolError({ tool: 'kubectl', command: 'kubectl patch', kind, exitCode: 1, stderr: '' });
  it('is a refused test op (422) or a gone object (404), nothing else', () => {
    expect(casLost(err('invalid'))).toBe(true);
    expect(casLost(err('not-found'))).toBe(true);
    for (const k of ['conflict', 'forbidden', 'transport', 'timeout', 'server', 'unknown'] as const) expect(casLost(err(k))).toBe(false);
    expect(casLost(new Error('invalid'))).toBe(false);
  });
});
