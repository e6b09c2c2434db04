// 4. Start-up and size: from spawning `node dist/index.js` (inputs that fail at once: no auth-patch)
// to its first stdout line, median of N; `node -e` printing one line as the floor; the bytes of dist/.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { repoRoot } from '../runner/runAction.js';
import { median, round } from './lib.js';

export interface StartupResult {
  startupMs: number | null;
  startupRunsMs: number[];
  /** the same measurement for `node -e "console.log(1)"`: what Node itself costs on this machine */
  nodeBaselineMs: number | null;
  firstLine: string;
  distBytes: number | null;
  distFiles: Record<string, number>;
  distBuiltAt: string | null;
}

function firstLineMs(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ ms: number; line: string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let buf = '';
    let done = false;
    child.stdout.on('data', (b: Buffer) => {
      if (done) return;
      buf += b.toString('utf8');
      const nl = buf.indexOf('\n');
      if (nl >= 0) {
        done = true;
        resolve({ ms: performance.now() - t0, line: buf.slice(0, nl) });
      }
    });
    child.on('error', reject);
    child.on('close', () => {
      if (!done) reject(new Error(`${args.join(' ')} printed no line`));
    });
  });
}

function dirBytes(dir: string, out: Record<string, number>, prefix = ''): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) total += dirBytes(p, out, `${prefix}${e.name}/`);
    else {
      const size = statSync(p).size;
      out[`${prefix}${e.name}`] = size;
      total += size;
    }
  }
  return total;
}

export async function benchStartup(runs: number, progress: (msg: string) => void): Promise<StartupResult> {
  const dist = join(repoRoot, 'dist');
  const entry = join(dist, 'index.js');
  const distFiles: Record<string, number> = {};
  const distBytes = existsSync(dist) ? dirBytes(dist, distFiles) : null;
  if (!existsSync(entry)) {
    progress('start-up: dist/index.js is missing (run `npm run build`), skipped');
    return { startupMs: null, startupRunsMs: [], nodeBaselineMs: null, firstLine: '', distBytes, distFiles, distBuiltAt: null };
  }
  const dir = mkdtempSync(join(tmpdir(), 'rar-bench-start-'));
  try {
    const output = join(dir, 'output');
    writeFileSync(output, '');
    // As a runner starts it: file commands present, the inputs as INPUT_* variables; auth-patch missing.
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      GITHUB_ACTIONS: 'true',
      GITHUB_OUTPUT: output,
      GITHUB_STATE: join(dir, 'state'),
      GITHUB_STEP_SUMMARY: join(dir, 'summary'),
      RUNNER_TEMP: dir,
      INPUT_MODE: 'apply',
      INPUT_REVISION: '2026-11-30.1',
    };
    for (const k of Object.keys(env)) if (k.startsWith('INPUT_AUTH')) delete env[k];
    // one unmeasured run each: the page cache
    await firstLineMs([entry], env, dir);
    await firstLineMs(['-e', 'console.log(1)'], env, dir);
    const action: number[] = [];
    const baseline: number[] = [];
    let line = '';
    for (let i = 0; i < runs; i++) {
      const r = await firstLineMs([entry], env, dir);
      action.push(r.ms);
      line = r.line;
      baseline.push((await firstLineMs(['-e', 'console.log(1)'], env, dir)).ms);
    }
    const res: StartupResult = {
      startupMs: round(median(action)),
      startupRunsMs: action.map((x) => Math.round(x)),
      nodeBaselineMs: round(median(baseline)),
      firstLine: line.slice(0, 160),
      distBytes,
      distFiles,
      distBuiltAt: statSync(entry).mtime.toISOString(),
    };
    progress(`start-up: ${res.startupMs} ms (node itself ${res.nodeBaselineMs} ms); dist ${distBytes} bytes`);
    return res;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
