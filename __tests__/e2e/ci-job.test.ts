// The CI job that runs the action through `uses: ./` (.github/workflows/ci.yml, job `action`), run
// here step by step as the runner would: its `run:` steps in bash with their env and $GITHUB_OUTPUT,
// its `uses: ./` steps as the bundle with their `with:` inputs (and their post steps at the job's end,
// last first), `${{ steps.<id>.outputs.<name> }}` replaced by what the earlier steps wrote. Only the
// set-up steps (checkout, Node, npm ci) are not run: this checkout has them done.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseFileCommands, repoRoot, runAction } from '../../runner/runAction.js';
import { listening, readReport, requireKubectl } from './helpers.js';

interface Step {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  with?: Record<string, string>;
  env?: Record<string, string>;
}

const workflow = parseYaml(readFileSync(join(repoRoot, '.github', 'workflows', 'ci.yml'), 'utf8')) as {
  jobs: Record<string, { steps: Step[] }>;
};
const job = workflow.jobs.action;
/** the set-up steps this checkout has already done, by what they are */
const isSetUp = (s: Step) =>
  s.uses?.startsWith('actions/checkout@') || s.uses?.startsWith('actions/setup-node@') || /^npm ci\b/.test(s.run ?? '');

/** `${{ steps.<id>.outputs.<name> }}`, the one expression the job may use, so that this test can run it */
function expand(text: string, outputs: Record<string, Record<string, string>>): string {
  return text.replace(/\$\{\{\s*(.*?)\s*\}\}/g, (_, expr: string) => {
    const m = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expr);
    if (!m) throw new Error(`the job uses \${{ ${expr} }}, which this test cannot evaluate: keep to steps.<id>.outputs.<name>`);
    const value = outputs[m[1]]?.[m[2]];
    if (value === undefined) throw new Error(`\${{ ${expr} }}: no such output yet`);
    return value;
  });
}

beforeAll(() => requireKubectl());

describe('CI: the action through uses: ./ against the twin', () => {
  it('the job exists, builds nothing, and runs ./ as a plan then an apply', () => {
    expect(job, 'ci.yml has no job `action`').toBeDefined();
    const own = job.steps.filter((s) => s.uses === './');
    expect(own.map((s) => s.with?.mode)).toEqual(['plan', 'apply']);
    expect(job.steps.some((s) => /npm run build|ncc/.test(s.run ?? ''))).toBe(false);
    // every step is either a set-up step or one this test runs
    expect(job.steps.filter((s) => !isSetUp(s)).every((s) => s.uses === './' || s.run !== undefined)).toBe(true);
  });

  it('its steps pass when run as the runner runs them', async () => {
    const temp = mkdtempSync(join(process.env.RAR_RUNNER_TMP ?? tmpdir(), 'ci-job-'));
    const outputs: Record<string, Record<string, string>> = {};
    const posts: Array<Record<string, string>> = [];
    let twinPid: number | undefined;
    try {
      for (const [i, step] of job.steps.entries()) {
        if (isSetUp(step)) continue;
        const id = step.id ?? `step-${i}`;
        if (step.uses === './') {
          const inputs = Object.fromEntries(Object.entries(step.with ?? {}).map(([k, v]) => [k, expand(String(v), outputs)]));
          const run = await runAction({ inputs });
          expect(run.exitCode, `${step.name}:\n${run.stdout}\n${run.stderr}`).toBe(0);
          // the report file each step writes is held to its schema, as every test's is (readReport)
          if (run.outputs['report-file']) readReport(run.outputs['report-file']);
          outputs[id] = run.outputs;
          posts.unshift(run.state);
          continue;
        }
        const outputFile = join(temp, `output-${i}`);
        writeFileSync(outputFile, '');
        const env = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, expand(String(v), outputs)]));
        // a `run:` step without `shell:` runs as `bash -e {0}` on Linux (GitHub's workflow syntax, jobs.<id>.steps[*].shell)
        const r = spawnSync('bash', ['--noprofile', '--norc', '-e', '-c', step.run!], {
          cwd: repoRoot,
          encoding: 'utf8',
          env: { ...process.env, ...env, GITHUB_OUTPUT: outputFile, RUNNER_TEMP: temp, GITHUB_ACTIONS: 'true' },
          timeout: 120_000,
        });
        expect(r.status, `${step.name}:\n${r.stdout}\n${r.stderr}`).toBe(0);
        outputs[id] = parseFileCommands(readFileSync(outputFile, 'utf8'));
        if (id === 'twin') twinPid = Number(outputs.twin.pid);
      }
      // the post steps, last first, with the twin still up (the runner ends it with the job)
      for (const state of posts) {
        const post = await runAction({ entry: join(repoRoot, 'dist', 'cleanup.js'), inputs: {}, state });
        expect(post.exitCode, post.stdout).toBe(0);
      }
      expect(twinPid).toBeGreaterThan(0);
      const port = Number(/:(\d+)$/.exec(outputs.twin.url)?.[1]);
      expect(await listening(port)).toBe(true);
      process.kill(twinPid!, 'SIGTERM');
      for (let t = 0; t < 100 && alive(twinPid!); t++) await new Promise((r) => setTimeout(r, 100));
      expect(alive(twinPid!)).toBe(false);
      expect(await listening(port)).toBe(false);
      twinPid = undefined;
    } finally {
      if (twinPid !== undefined && alive(twinPid)) process.kill(twinPid, 'SIGKILL');
      rmSync(temp, { recursive: true, force: true });
    }
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
