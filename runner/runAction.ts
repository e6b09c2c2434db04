// Run the bundled action exactly as a GitHub runner would: `node dist/index.js` with INPUT_*
// variables and the runner's file commands, then read back what it wrote.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface Annotation {
  kind: 'notice' | 'warning' | 'error';
  title: string;
  message: string;
}

export interface ActionRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
  summary: string;
  annotations: Annotation[];
  state: Record<string, string>;
  summaryPath: string;
}

/** Parse the runner's `name<<delimiter` file-command format (GITHUB_OUTPUT, GITHUB_STATE). */
export function parseFileCommands(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^([^<=]+)<<(.+)$/.exec(lines[i]);
    if (m) {
      const value: string[] = [];
      for (i++; i < lines.length && lines[i] !== m[2]; i++) value.push(lines[i]);
      out[m[1]] = value.join('\n');
    } else if (lines[i].includes('=')) {
      const [k, ...v] = lines[i].split('=');
      out[k] = v.join('=');
    }
  }
  return out;
}

function unescapeData(s: string): string {
  return s.replace(/%0D/g, '\r').replace(/%0A/g, '\n').replace(/%25/g, '%');
}

function unescapeProperty(s: string): string {
  return unescapeData(s).replace(/%3A/g, ':').replace(/%2C/g, ',');
}

/** Workflow commands (`::notice title=…::message`) from the action's stdout. */
export function parseAnnotations(stdout: string): Annotation[] {
  const out: Annotation[] = [];
  for (const line of stdout.split('\n')) {
    const m = /^::(notice|warning|error)( [^:]*)?::(.*)$/.exec(line);
    if (!m) continue;
    const props = Object.fromEntries(
      (m[2] ?? '')
        .trim()
        .split(',')
        .filter(Boolean)
        .map((p) => {
          const i = p.indexOf('=');
          return [p.slice(0, i), unescapeProperty(p.slice(i + 1))];
        }),
    );
    out.push({ kind: m[1] as Annotation['kind'], title: props.title ?? '', message: unescapeData(m[3]) });
  }
  return out;
}

export interface RunActionOptions {
  inputs: Record<string, string>;
  env?: Record<string, string>;
  /** the post step reads the state the main step saved */
  entry?: string;
  state?: Record<string, string>;
  /** stream the action's stdout (the demo prints it live) */
  onStdout?: (chunk: string) => void;
  /** cancel the step (SIGINT, as the runner does first) after this many ms */
  killAfterMs?: number;
  killWhen?: (stdoutSoFar: string) => boolean;
  /** cancel the step (SIGINT) when this settles (e.g. a twin hook saw the request the test waits for) */
  killOn?: Promise<unknown>;
  /**
   * `SIGKILL`: the kill is the runner's force-kill of the job, not a cancellation: the action gets no
   * signal it can handle, and its whole process group (kubectl, talosctl children included) dies at once,
   * as the runner kills a job's process tree. Default `SIGINT` to the action alone: the signal the
   * GitHub runner sends a cancelled step first (docs/kube-channel.md, "When the step is cancelled or
   * killed"); its SIGTERM 7.5 s later and its kill 2.5 s after that are not sent, so what a test sees
   * does not depend on how fast this machine finishes the step's cleanup.
   */
  killSignal?: 'SIGINT' | 'SIGKILL';
}

/**
 * A run's directory (RUNNER_TEMP, the file commands): under the test session's own directory when there
 * is one (RAR_RUNNER_TMP, made and removed by __tests__/globalSetup.ts), so a suite leaves none of its
 * thousands behind; a test may still read a run's files after the run has ended.
 */
function runnerDir(): string {
  return mkdtempSync(join(process.env.RAR_RUNNER_TMP ?? tmpdir(), 'rar-run-'));
}

export async function runAction(opts: RunActionOptions): Promise<ActionRun> {
  const dir = runnerDir();
  const outputPath = join(dir, 'output');
  const summaryPath = join(dir, 'summary.md');
  const statePath = join(dir, 'state');
  for (const p of [outputPath, summaryPath, statePath]) writeFileSync(p, '');
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    GITHUB_OUTPUT: outputPath,
    GITHUB_STEP_SUMMARY: summaryPath,
    GITHUB_STATE: statePath,
    RUNNER_TEMP: dir,
    GITHUB_ACTIONS: 'true',
    GITHUB_REPOSITORY: 'acme/platform',
    GITHUB_RUN_ID: String(1000 + Math.floor(Math.random() * 9000)),
    GITHUB_RUN_ATTEMPT: '1',
    GITHUB_SERVER_URL: 'https://github.com',
    ...opts.env,
  };
  for (const [k, v] of Object.entries(opts.state ?? {})) env[`STATE_${k}`] = v;
  for (const [k, v] of Object.entries(opts.inputs)) env[`INPUT_${k.replace(/ /g, '_').toUpperCase()}`] = v;
  const entry = opts.entry ?? join(repoRoot, 'dist', 'index.js');
  return new Promise((resolvePromise, reject) => {
    const group = opts.killSignal === 'SIGKILL';
    // its own process group when it is to be force-killed, so the kill reaches its children too
    const child = spawn(process.execPath, [entry], { env, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], detached: group });
    let stdout = '';
    let stderr = '';
    let killed = false;
    const kill = () => {
      if (killed) return;
      killed = true;
      if (!group || child.pid === undefined) {
        child.kill('SIGINT');
        return;
      }
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is gone already
      }
    };
    child.stdout.on('data', (b: Buffer) => {
      const s = b.toString('utf8');
      stdout += s;
      opts.onStdout?.(s);
      if (opts.killWhen?.(stdout)) kill();
    });
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
    const timer = opts.killAfterMs ? setTimeout(kill, opts.killAfterMs) : undefined;
    opts.killOn?.then(kill, kill);
    child.on('error', reject);
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      resolvePromise({
        exitCode: code,
        stdout,
        stderr,
        outputs: parseFileCommands(readFileSync(outputPath, 'utf8')),
        summary: readFileSync(summaryPath, 'utf8'),
        annotations: parseAnnotations(stdout),
        state: parseFileCommands(readFileSync(statePath, 'utf8')),
        summaryPath,
      });
    });
  });
}
