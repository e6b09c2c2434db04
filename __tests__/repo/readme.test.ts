// What the README tells a user to run must work as shown.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../runner/runAction.js';
import { requireKubectl } from '../e2e/helpers.js';

const run = promisify(execFile);
const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
const scripts = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** Every `npm …` command the README shows in a code block or inline code. */
function npmCommands(): string[] {
  const found = new Set<string>();
  for (const m of readme.matchAll(/npm (?:run [\w:-]+(?: -- [^`\n#]*)?|test|ci)\b/g)) found.add(m[0].trim());
  return [...found];
}

beforeAll(() => requireKubectl());

describe('README', () => {
  it('shows the two first-screen commands', () => {
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(firstBlock).toMatch(/^npm ci && npm run demo\b/m);
    expect(firstBlock).toMatch(/^npm ci && npm test\b/m);
  });

  it('names only npm scripts that exist', () => {
    const missing = npmCommands()
      .map((c) => /^npm run ([\w:-]+)/.exec(c)?.[1])
      .filter((s): s is string => !!s && !(s in scripts));
    expect(missing).toEqual([]);
    expect(scripts.test).toBeTruthy();
  });

  it('`npm run demo -- --mode plan` works as the README says: read-only, the sections it shows', async () => {
    expect(readme).toContain('npm run demo -- --mode plan');
    const { stdout } = await run('npm', ['run', '--silent', 'demo', '--', '--mode', 'plan'], { cwd: repoRoot, timeout: 120_000 });
    for (const section of ['── annotations', '── outputs', '── cluster afterwards', '── job summary']) {
      expect(stdout).toContain(section);
      expect(readme).toContain(section);
    }
    expect(stdout).toMatch(/result: planned/);
    expect(stdout).toMatch(/worker-3: planned skip/);
    expect(stdout).toMatch(/worker-1: planned reboot/);
  });

  // The demo's reboots are real boots (a node answers with its new boot id before machined
  // has written its CRI files and before cri runs), the action polls at its default interval, and
  // every node still ends verified and released.
  it('`npm run demo` rolls every node, its reboots answering before cri and their CRI files are there', async () => {
    const { stdout } = await run('npm', ['run', '--silent', 'demo'], { cwd: repoRoot, timeout: 180_000 });
    expect(stdout).toMatch(/finished in [\d.]+ s, exit code 0;/);
    expect(stdout).toMatch(/result: processed/);
    expect(stdout).toMatch(/after the reboot .*; reading it again until it is final/);
    const after = stdout.slice(stdout.indexOf('── cluster afterwards'));
    for (const n of ['cp-1', 'cp-2', 'cp-3', 'worker-1', 'worker-2', 'worker-3']) {
      expect(after).toMatch(new RegExp(`^  ${n} .*verified=ghcr\\.io@2026-11-30\\.1 containerd`, 'm'));
    }
    expect(after).not.toMatch(/CLAIMED/);
  });

  it('the demo rejects an unknown scenario with the list of known ones', async () => {
    const err = await run('npm', ['run', '--silent', 'demo', '--', '--scenario', 'nope'], { cwd: repoRoot, timeout: 60_000 }).then(
      () => undefined,
      (e: { stderr: string; code: number }) => e,
    );
    expect(err?.code).toBe(2);
    for (const name of ['default', 'churn', 'pdb', 'etcd-alarm', 'talos-1.14']) expect(err?.stderr).toContain(name);
    // every non-default scenario the demo knows is one the README offers
    for (const name of ['churn', 'pdb', 'etcd-alarm', 'talos-1.14']) expect(readme).toContain(`--scenario ${name}`);
  });
});
