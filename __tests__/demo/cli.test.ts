// `npm run demo`'s command line, as a person types it: --help, and the mistakes it names (exit 2, no
// stack trace), all before a twin is started.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../runner/runAction.js';
import { SCENARIOS } from '../../demo/scenarios.js';
import { actionInputNames, parseDemoArgs, UsageError } from '../../demo/options.js';

/** `npm run demo -- …` without npm: node with tsx's loader, as the package script runs it. */
function demo(...args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'demo', 'demo.ts'), ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('demo: the command line', () => {
  it('--help prints the options and one line per scenario, and exits 0', () => {
    const r = demo('--help');
    expect(r.status, r.stderr).toBe(0);
    for (const option of ['--scenario', '--keep', '--input', '--verbose', '--mode']) expect(r.stdout).toContain(option);
    const scenarioLines = r.stdout.slice(r.stdout.indexOf('scenarios:')).split('\n');
    for (const name of Object.keys(SCENARIOS)) expect(scenarioLines.filter((l) => l.startsWith(`  ${name} `))).toHaveLength(1);
  });

  it('an unknown option is named, exit 2, no stack trace', () => {
    const r = demo('--kep');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("'--kep'");
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });

  // the other mistakes take the same way out (UsageError → exit 2) as the unknown option: checked in-process
  const parse =
    (...argv: string[]) =>
    () =>
      parseDemoArgs(argv, SCENARIOS, actionInputNames());

  it('an unknown scenario is named with the known ones', () => {
    expect(parse('--scenario', 'pdbb')).toThrow(UsageError);
    expect(parse('--scenario', 'pdbb')).toThrow(/^--scenario pdbb: no such scenario \(known: default, .*pdb, /);
  });

  it('--input with a name action.yml does not declare is named; a declared one overrides, mode included', () => {
    expect(parse('--input', 'drain-timout=10s')).toThrow(/^--input drain-timout: not an input of action\.yml/);
    expect(parse('--input', 'drain-timeout')).toThrow(/expected NAME=VALUE/);
    const opts = parseDemoArgs(
      ['--input', 'drain-timeout=10s', '--input', 'mode=plan', '--input', 'nodes=a=b'],
      SCENARIOS,
      actionInputNames(),
    );
    expect(opts).toMatchObject({ mode: 'plan', scenario: 'plan', inputs: { 'drain-timeout': '10s', mode: 'plan', nodes: 'a=b' } });
  });
});
