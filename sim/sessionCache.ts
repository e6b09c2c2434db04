// A test session's cache of things that are the same for every worker and costly to make: the twins'
// certificates (openssl, a spawn each) and the report schema's compiled validator (ajv, 0.4 s of CPU).
// The suite's globalSetup names the directory (RAR_TEST_SESSION_CACHE, under the session's directory,
// removed with it); outside a test session nothing is cached and each process makes its own.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = (): string | undefined => process.env.RAR_TEST_SESSION_CACHE || undefined;

/** The cached text of `file`, when the session has one. */
export function readSessionCache(file: string): string | undefined {
  const d = dir();
  const p = d ? join(d, file) : undefined;
  return p && existsSync(p) ? readFileSync(p, 'utf8') : undefined;
}

/**
 * Leaves `text` as `file` for the session's other workers. Written whole, then renamed: a reader never
 * sees half a file; two workers that both missed write equivalent texts, and either is right for a reader.
 */
export function writeSessionCache(file: string, text: string): void {
  const d = dir();
  if (!d) return;
  mkdirSync(d, { recursive: true });
  const tmp = join(d, `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`);
  writeFileSync(tmp, text);
  renameSync(tmp, join(d, file));
}
