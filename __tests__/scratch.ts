// A test's own files (a patch, a fake binary, a kubeconfig's neighbours) go into a directory of the test
// session (__tests__/globalSetup.ts), which is removed when the session ends: a test that stops halfway
// or has no clean-up of its own leaves nothing behind in the machine's temp directory.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The session's directory; the machine's temp directory when a file runs outside the configured session. */
export function sessionDir(): string {
  return process.env.RAR_RUNNER_TMP ?? tmpdir();
}

/** A fresh directory named `prefix…` inside the session's directory. */
export function scratchDir(prefix: string): string {
  return mkdtempSync(join(sessionDir(), prefix));
}
