// The test sequencer: on a fresh clone the longest files first, from the committed durations; a file
// missing there first of all; vitest's own order once it remembers every file.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestSpecification } from 'vitest/node';
import { repoRoot } from '../../runner/runAction.js';
import { LongestFirst } from '../sequencer.js';

const seconds = JSON.parse(readFileSync(join(repoRoot, '__tests__', 'durations.json'), 'utf8')) as Record<string, number>;
const spec = (path: string) => ({ moduleId: join(repoRoot, path), project: { name: '' } }) as unknown as TestSpecification;
const sequencer = (remembers: (key: string) => boolean) =>
  new LongestFirst({
    config: { root: repoRoot },
    cache: { getFileTestResults: (key: string) => (remembers(key) ? { duration: 1, failed: false } : undefined) },
  } as never);

describe('LongestFirst', () => {
  it('on a fresh clone: a file without a recorded duration first, then the longest recorded first', async () => {
    const known = Object.keys(seconds).slice(0, 30);
    const files = [...known, '__tests__/e2e/brand-new.test.ts'].map(spec);
    const order = (await sequencer(() => false).sort(files)).map((f) => f.moduleId.slice(repoRoot.length + 1));
    expect(order[0]).toBe('__tests__/e2e/brand-new.test.ts');
    const durations = order.slice(1).map((p) => seconds[p]);
    expect(durations).toEqual([...durations].sort((a, b) => b - a));
    expect(durations[0]).toBeGreaterThan(durations.at(-1)!);
  });
});
