// The tiers of the suite (__tests__/tiers.ts) as vitest itself lists them: a name that matches no file
// would leave a case out of every tier without a word, and a tier the config did not honour would make
// `npm test` or CI's Node 20 pass run something other than what docs/testing.md says.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../runner/runAction.js';
import { COMPAT, EXTENDED_E2E, TWIN_TESTS } from '../tiers.js';

const run = promisify(execFile);

/** The files `vitest list` names for a tier, relative to the repository. */
async function listed(tier: string): Promise<string[]> {
  // a clean environment for the inner vitest: the outer one's worker variables would change what it does
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST')));
  const { stdout } = await run(process.execPath, ['node_modules/vitest/vitest.mjs', 'list', '--filesOnly', '--json'], {
    cwd: repoRoot,
    env: { ...env, RAR_TEST_TIER: tier },
  });
  return (JSON.parse(stdout) as Array<{ file: string }>).map((f) => relative(repoRoot, f.file)).sort();
}

const folder = (glob: string) => glob.replace(/\/\*\*$/, '');

describe('the suite’s tiers', () => {
  it('every file a tier names exists, and every folder holds tests', () => {
    for (const file of EXTENDED_E2E) expect(existsSync(join(repoRoot, file)), file).toBe(true);
    for (const entry of [...TWIN_TESTS, ...COMPAT]) {
      if (entry.endsWith('/**')) {
        const dir = join(repoRoot, folder(entry));
        expect(existsSync(dir) && readdirSync(dir, { recursive: true }).some((f) => String(f).endsWith('.test.ts')), entry).toBe(true);
      } else expect(existsSync(join(repoRoot, entry)), entry).toBe(true);
    }
  });

  it('vitest runs every file for all, all but the extended ones for core (npm test), the compat files for compat', async () => {
    const [all, core, compat] = await Promise.all([listed('all'), listed('core'), listed('compat')]);
    // every folder of the twin's own tests is in TWIN_TESTS: a new sim-* folder would otherwise join npm test
    const extended = all.filter((f) => EXTENDED_E2E.includes(f) || TWIN_TESTS.some((g) => f.startsWith(`${folder(g)}/`)));
    expect(extended.length).toBe(EXTENDED_E2E.length + all.filter((f) => /^__tests__\/sim-/.test(f)).length);
    expect(core).toEqual(all.filter((f) => !extended.includes(f)));
    const inCompat = (f: string) => COMPAT.some((g) => (g.endsWith('/**') ? f.startsWith(`${folder(g)}/`) : f === g));
    expect(compat).toEqual(all.filter(inCompat));
    // what CI's Node 20 pass runs is also in what a developer runs
    expect(compat.filter((f) => !core.includes(f))).toEqual([]);
    // and the core tier still sees the action end to end
    expect(core.filter((f) => f.startsWith('__tests__/e2e/')).length).toBeGreaterThan(20);
  });

  it('an unknown tier is refused by name before any test runs', async () => {
    const err = await listed('fast').then(
      () => undefined,
      (e: { stderr?: string }) => e,
    );
    expect(err?.stderr).toContain('RAR_TEST_TIER must be one of all, core, compat; got "fast"');
  });
});
