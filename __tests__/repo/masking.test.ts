// Every text leaves the action through one masking port (src/action/masked.ts): it is the only module
// that imports the runner's protocol (src/action/runnerCommands.ts, the action's own port of the part of
// @actions/core it uses), nothing imports @actions/core itself, and no other module writes to the
// process's stdout or stderr. So a new log line, annotation, output or saved state cannot be written
// unmasked, whoever adds it.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const PORT = 'src/action/masked.ts';
const PROTOCOL = 'src/action/runnerCommands.ts';

function tsFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) return tsFiles(p);
      return name.endsWith('.ts') ? [p] : [];
    });
}

const files = tsFiles(join(ROOT, 'src')).map((f) => ({ path: relative(ROOT, f), text: readFileSync(f, 'utf8') }));

describe('one masking port for every sink', () => {
  it(`nothing imports @actions/core, and only ${PORT} imports the runner protocol`, () => {
    const core = files.filter((f) => /from '@actions\/core'|import\('@actions\/core'\)|require\('@actions\/core'\)/.test(f.text));
    expect(core.map((f) => f.path)).toEqual([]);
    const protocol = files.filter((f) => /from '\.\/runnerCommands\.js'|from '[./]*\/action\/runnerCommands\.js'/.test(f.text));
    expect(protocol.map((f) => f.path)).toEqual([PORT]);
  });

  it(`no module but ${PROTOCOL} writes to stdout or stderr (console, process.stdout, process.stderr)`, () => {
    const writers = files.filter((f) => /\bconsole\.\w+\(|process\.(stdout|stderr)\.write/.test(f.text)).map((f) => f.path);
    expect(writers).toEqual([PROTOCOL]);
  });
});
