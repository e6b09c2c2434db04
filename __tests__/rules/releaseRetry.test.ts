import { describe, expect, it } from 'vitest';
import type { FailureCause } from '../../src/core/errors.js';
import { releaseBackoffMs, releaseTransient, RELEASE_RETRY_MS } from '../../src/rules/releaseRetry.js';

describe('releaseTransient: which failed releases are tried again', () => {
  it('a 5xx, a dropped connection, a timeout, a 409 and a 429 pass; a refusal of the CAS, a gone object, a 403 or a usage error do not', () => {
    const kinds: FailureCause[] = ['server', 'transport', 'timeout', 'conflict', 'too-many-requests'];
    for (const k of kinds) expect(releaseTransient(k), k).toBe(true);
    const definite: FailureCause[] = ['invalid', 'not-found', 'forbidden', 'usage', 'cancelled', 'unparseable', 'unknown'];
    for (const k of definite) expect(releaseTransient(k), k).toBe(false);
  });
});

describe('releaseBackoffMs: capped exponential waits with jitter', () => {
  it('doubles from 1 s to a cap of 15 s, half of each wait drawn from the random number', () => {
    expect([1, 2, 3, 4, 5, 6, 9].map((n) => releaseBackoffMs(n, 1))).toEqual([1000, 2000, 4000, 8000, 15_000, 15_000, 15_000]);
    expect([1, 2, 3, 4, 5, 6].map((n) => releaseBackoffMs(n, 0))).toEqual([500, 1000, 2000, 4000, 7500, 7500]);
    expect(releaseBackoffMs(3, 0.5)).toBe(3000);
  });

  it('the bound rides out an apiserver restart with a handful of tries, not one a second', () => {
    let t = 0;
    let tries = 1;
    while (t + releaseBackoffMs(tries, 0.5) <= RELEASE_RETRY_MS) t += releaseBackoffMs(tries++, 0.5);
    expect(RELEASE_RETRY_MS).toBeGreaterThanOrEqual(60_000);
    expect(tries).toBeGreaterThanOrEqual(8);
    expect(tries).toBeLessThanOrEqual(14);
  });
});
