// The runner emulator puts its runs' directories under the test session's own directory, which the
// session's teardown removes (a suite run used to leave thousands in /tmp, each with the twin's
// credential files); a run's files stay readable after the run, until the session ends.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAction } from '../../runner/runAction.js';
import setupSession from '../globalSetup.js';

// what __tests__/globalSetup.ts sets, put back after the test's own session: the files after this one in
// the worker (isolate: false) make their directories in the real session's
const SESSION_VARS = ['RAR_RUNNER_TMP', 'RAR_TEST_SESSION_CACHE'] as const;
const session = Object.fromEntries(SESSION_VARS.map((k) => [k, process.env[k]]));
let scratch: string | undefined;
afterEach(() => {
  for (const k of SESSION_VARS) {
    if (session[k] === undefined) delete process.env[k];
    else process.env[k] = session[k];
  }
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

describe('runAction', () => {
  it("puts a run's directory in the session's, readable after the run, and the session's teardown removes it", async () => {
    const dir = (scratch = mkdtempSync(join(tmpdir(), 'rar-runner-test-')));
    const entry = join(dir, 'entry.cjs');
    writeFileSync(entry, "require('node:fs').appendFileSync(process.env.GITHUB_STEP_SUMMARY, 'ran');\n");
    const teardown = setupSession();
    const root = process.env.RAR_RUNNER_TMP!;
    try {
      const run = await runAction({ entry, inputs: {} });
      expect(dirname(dirname(run.summaryPath))).toBe(root);
      expect(run.summary).toBe('ran');
      expect(existsSync(run.summaryPath)).toBe(true);
    } finally {
      teardown();
    }
    expect(existsSync(root)).toBe(false);
  });
});
