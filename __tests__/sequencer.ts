// Which test files start first. vitest starts the longest first when it remembers the durations of a
// previous run (under node_modules/.vite), and otherwise the largest files first: on a fresh clone, as
// CI has, the end-to-end files, small but each 20-70 s long, then start among the last and the suite
// ends with a few of them running alone. So the durations of a measured run are committed
// (__tests__/durations.json, refreshed by scripts/test-durations.mjs) and a fresh clone starts the
// longest first from them; a file missing there (a new one) starts before all others, as vitest
// starts a file it has no record of. With a full record of its own, vitest's order is kept.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const remembered = files.every((f) => this.ctx.cache.getFileTestResults(`${f.project.name}:${relative(root, f.moduleId)}`));
    if (remembered) return super.sort(files);
    const seconds = JSON.parse(readFileSync(join(root, '__tests__', 'durations.json'), 'utf8')) as Record<string, number>;
    const length = (f: TestSpecification) => seconds[relative(root, f.moduleId)] ?? Infinity;
    return [...files].sort((a, b) => {
      const la = length(a);
      const lb = length(b);
      return la === lb ? 0 : la > lb ? -1 : 1;
    });
  }
}
