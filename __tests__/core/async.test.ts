// The async helpers (src/core/async.ts): one pool, and the order of the answers.
import { describe, expect, it } from 'vitest';
import { pool, reorder, unique } from '../../src/core/async.js';

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
