// The runner emulator removes the directories of its runs when its process exits (a suite run left
// thousands in /tmp), keeps them while the process lives (a test reads a run's files after the run),
// and keeps one asked to outlive it (the demo prints the summary's path to open afterwards).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { repoRoot } from '../../runner/runAction.js';

let scratch: string | undefined;
afterEach(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

describe('runAction', () => {
  it("removes its runs' directories when the process exits, not before, and keeps one asked to outlive it", () => {
    const dir = (scratch = mkdtempSync(join(tmpdir(), 'rar-runner-test-')));
    const entry = join(dir, 'entry.cjs');
    writeFileSync(entry, "require('node:fs').appendFileSync(process.env.GITHUB_STEP_SUMMARY, 'ran');\n");
    const script = join(dir, 'drive.mts');
    const runner = pathToFileURL(join(repoRoot, 'runner', 'runAction.ts')).href;
    writeFileSync(
      script,
      [
        "import { existsSync } from 'node:fs';",
        "import { dirname } from 'node:path';",
        `import { runAction } from ${JSON.stringify(runner)};`,
        `const entry = ${JSON.stringify(entry)};`,
        'const removed = await runAction({ entry, inputs: {} });',
        'const kept = await runAction({ entry, inputs: {}, keepDir: true });',
        'console.log(JSON.stringify({ removed: dirname(removed.summaryPath), kept: dirname(kept.summaryPath),',
        '  summary: removed.summary, whileAlive: existsSync(removed.summaryPath) }));',
      ].join('\n'),
    );
    const out = execFileSync(process.execPath, ['--import', 'tsx', script], { cwd: repoRoot, encoding: 'utf8' });
    const seen = JSON.parse(out.trim().split('\n').at(-1)!) as { removed: string; kept: string; summary: string; whileAlive: boolean };
    try {
      expect(seen.summary).toBe('ran');
      expect(seen.whileAlive).toBe(true);
      expect(existsSync(seen.removed)).toBe(false);
      expect(existsSync(join(seen.kept, 'summary.md'))).toBe(true);
    } finally {
      rmSync(seen.kept, { recursive: true, force: true });
    }
  });
});
