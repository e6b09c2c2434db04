// The text of an untyped value, in its two senses, and the one order of names.
import { describe, expect, it } from 'vitest';
import { compareNames } from '../../src/core/order.js';
import { scalarText, stringOrEmpty } from '../../src/core/text.js';

describe('stringOrEmpty and scalarText', () => {
  it.each<[unknown, string, string]>([
    ['s3cret', 's3cret', 's3cret'],
    [1234, '', '1234'],
    [true, '', 'true'],
    [12n, '', '12'],
    [undefined, '', ''],
    [null, '', ''],
    [{ a: 1 }, '', ''],
  ])('%o → %j / %j', (v, asString, asScalar) => {
    expect(stringOrEmpty(v)).toBe(asString);
    expect(scalarText(v)).toBe(asScalar);
  });
});

describe('compareNames', () => {
  it('code-unit order, whatever the locale: upper case before lower, digits before letters', () => {
    expect(['w10', 'b', 'W2', 'w2', 'a'].sort(compareNames)).toEqual(['W2', 'a', 'b', 'w10', 'w2']);
  });
});
