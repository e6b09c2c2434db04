// The one shell quoter (src/core/shell.ts), for every command a person is told to run.
import { describe, expect, it } from 'vitest';
import { shellQuote, shellWord } from '../../src/core/shell.js';

describe('shellQuote / shellWord', () => {
  it('quotes for a POSIX shell; shellWord leaves plain words alone', () => {
    expect(shellQuote(`it's`)).toBe(`'it'\\''s'`);
    expect(shellQuote('plain')).toBe(`'plain'`);
    expect(shellWord('--nodes=10.0.0.1,10.0.0.2')).toBe('--nodes=10.0.0.1,10.0.0.2');
    expect(shellWord('a b')).toBe(`'a b'`);
    expect(shellWord('')).toBe(`''`);
  });
});
