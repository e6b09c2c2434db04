// One directory for the test session's runner directories (runner/runAction.ts), removed when the
// session ends: vitest ends its worker threads without an `exit` event, so a run's own removal at exit
// never happens there, and a suite run left thousands of directories in /tmp. The twins' certificates
// and the report schema's compiled validator are kept there too (sim/talos/api/certs.ts,
// __tests__/report/reportSchema.ts), made once for the session instead of once per worker.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'rar-tests-'));
  // set before the workers start: each worker thread takes a copy of this environment
  // the session's directory: the runner emulator's run directories, the tests' own files
  // (__tests__/scratch.ts) and what a demo run keeps
  process.env.RAR_RUNNER_TMP = root;
  process.env.RAR_TEST_SESSION_CACHE = join(root, 'cache');
  return () => rmSync(root, { recursive: true, force: true });
}
