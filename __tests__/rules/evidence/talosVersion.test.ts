import { describe, expect, it } from 'vitest';
import { isTalosAtLeast } from '../../../src/rules/evidence/talosVersion.js';

describe('isTalosAtLeast', () => {
  const rows: Array<[string, number, number, boolean | undefined]> = [
    ['v1.13.8', 1, 14, false],
    ['v1.14.0', 1, 14, true],
    ['v1.14.2', 1, 14, true],
    ['v1.15.0', 1, 14, true],
    ['v2.0.0', 1, 14, true],
    ['v0.99.0', 1, 14, false],
    ['1.14.1', 1, 14, true],
    ['v1.14.0-rc.1', 1, 14, true],
    ['v1.14.0-beta.0+dirty', 1, 14, true],
    ['v1.9.3', 1, 14, false],
    ['', 1, 14, undefined],
    ['unknown', 1, 14, undefined],
    ['v1', 1, 14, undefined],
    ['v1.x.3', 1, 14, undefined],
  ];
  it.each(rows)('%s ≥ %i.%i → %s', (version, major, minor, want) => {
    expect(isTalosAtLeast(version, major, minor)).toBe(want);
  });
});
