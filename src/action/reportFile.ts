// Where the report file goes and how it is written: in RUNNER_TEMP (the runner's per-job temporary
// directory, emptied after the job), created new with mode 0600. The document is built by
// src/report/runReport.ts; the text reaches this writer only through the masking port
// (src/action/masked.ts), like every other sink.
import { closeSync, fchmodSync, openSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { RunIdentity } from '../report/runReport.js';

/** The report file could not be written; names RUNNER_TEMP, the path tried and the underlying error. */
export class ReportFileError extends Error {
  readonly path?: string;
  constructor(message: string, path?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ReportFileError';
    this.path = path;
  }
}

const PREFIX = 'talos-registry-auth-rollout';

/**
 * The file's path: `$RUNNER_TEMP/talos-registry-auth-rollout-<run id>-<attempt>-<nonce>.json`. The
 * claim token's nonce keeps two uses of the action in one job apart; without an identity, the instant.
 */
export function reportFilePath(runnerTemp: string | undefined, identity: RunIdentity | undefined, now: Date): string {
  if (!runnerTemp) throw new ReportFileError('RUNNER_TEMP is not set (a GitHub runner sets it for every job)');
  if (!isAbsolute(runnerTemp)) throw new ReportFileError(`RUNNER_TEMP is not an absolute path: ${JSON.stringify(runnerTemp)}`);
  const nonce = identity?.owner.split('/').pop();
  const tail = identity ? `${identity.runId}-${identity.runAttempt}-${nonce}` : now.toISOString().replace(/[:.]/g, '-');
  return join(runnerTemp, `${PREFIX}-${tail.replace(/[^A-Za-z0-9._-]/g, '_')}.json`);
}

/**
 * Writes `text` to a new file at `path` with mode 0600, readable by the runner's user only. `wx`: never
 * an existing file or a link planted there (it fails instead); fchmod: the mode exactly, whatever the umask.
 */
export function writePrivateFile(path: string, text: string): void {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ReportFileError(`cannot create ${path} in RUNNER_TEMP${code ? ` (${code})` : ''}`, path, { cause: e });
  }
  try {
    fchmodSync(fd, 0o600);
    // writeFileSync on a descriptor writes until every byte is out (writeSync may stop short)
    writeFileSync(fd, text);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ReportFileError(`cannot write ${path} in RUNNER_TEMP${code ? ` (${code})` : ''}`, path, { cause: e });
  } finally {
    closeSync(fd);
  }
}
