// The one place that starts processes: environment, timeouts, cancellation, timing and the record
// of every command run (the per-node log group and the benchmarks read it).
//
// A child's output is returned exactly as it printed it: the adapters parse it, and a rewritten byte
// would be a wrong reading (a node name, an owner token or a `true` that happens to equal a registered
// value). Secrets are masked where text leaves the action instead: every log line, summary, annotation,
// output, failure message and saved state goes through the shell's masking port (src/action/masked.ts),
// and a ToolError carrying a tool's stderr is masked when it is rendered there.
import { spawn } from 'node:child_process';
import { shellWord } from '../core/shell.js';

export interface RunSpec {
  /** executable name or path */
  file: string;
  args: string[];
  /** added to the inherited environment */
  env?: Record<string, string>;
  /** our own deadline; the child is killed when it passes (talosctl has no global timeout) */
  timeoutMs?: number;
  /** written to the child's stdin, then closed */
  input?: string;
  /**
   * Ends this one child (SIGTERM, SIGKILL 2 s later) when aborted; the result then says `aborted`.
   * The runner's own cancellation still ends every child (but one started with `outlivesCancel`).
   */
  signal?: AbortSignal;
  /**
   * Streams stdout as it arrives (a watch that runs until it is ended). The chunks are not kept:
   * the result's `stdout` is then empty.
   */
  onStdout?: (chunk: string) => void;
  /**
   * Not ended by the runner's cancellation, only by `signal`: the channel to the API server, which a
   * cancelled step still needs to give its nodes back within the runner's grace (docs/kube-channel.md).
   */
  outlivesCancel?: boolean;
}

export interface RunResult {
  stdout: string;
  stderr: string;
  /** null when killed by a signal */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** true when the run was cancelled through the runner's abort signal */
  aborted: boolean;
  durationMs: number;
  /** runner wall clock just before the spawn and just after the exit */
  startedAtMs: number;
  endedAtMs: number;
}

export interface CommandRecord {
  command: string;
  durationMs: number;
  exitCode: number | null;
  startedAtMs: number;
}

export type CommandListener = (record: CommandRecord) => void;

/** Runs commands; one instance per action run. */
export class Runner {
  private readonly listeners = new Set<CommandListener>();
  private readonly abort = new AbortController();
  /** the running children the cancellation ends (not those that outlive it) */
  private readonly live = new Set<ReturnType<typeof spawn>>();
  /** number of processes started (tests count the calls an adapter makes with it) */
  processCount = 0;

  onCommand(listener: CommandListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** aborted when the run is cancelled: calls that are not processes (the Talos API) end on it too */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** when the run was cancelled (performance.now()); undefined while it was not */
  get cancelledAt(): number | undefined {
    return this.#cancelledAt;
  }
  #cancelledAt: number | undefined;

  /**
   * Stop: running children get SIGTERM (SIGKILL after graceMs), new runs fail at once. A child started
   * with `outlivesCancel` is left running: its owner ends it.
   */
  cancel(graceMs = 5000): void {
    if (this.abort.signal.aborted) return;
    this.#cancelledAt = performance.now();
    this.abort.abort();
    for (const child of this.live) {
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), graceMs).unref();
    }
  }

  /** The command line as a shell would read it. No secret is ever an argument (patches go in files, inputs on stdin). */
  describe(spec: Pick<RunSpec, 'file' | 'args'>): string {
    return [spec.file, ...spec.args].map(shellWord).join(' ');
  }

  run(spec: RunSpec): Promise<RunResult> {
    const startedAtMs = Date.now();
    const t0 = performance.now();
    if (this.abort.signal.aborted || spec.signal?.aborted) {
      return Promise.resolve({
        stdout: '',
        stderr: 'cancelled before start',
        exitCode: null,
        signal: null,
        timedOut: false,
        aborted: true,
        durationMs: 0,
        startedAtMs,
        endedAtMs: startedAtMs,
      });
    }
    this.processCount++;
    return new Promise((resolve) => {
      const child = spawn(spec.file, spec.args, {
        env: { ...process.env, ...spec.env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      if (!spec.outlivesCancel) this.live.add(child);
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let timedOut = false;
      let spawnError: Error | undefined;
      const stream = spec.onStdout;
      if (stream) {
        child.stdout.setEncoding('utf8');
        child.stdout.on('data', (s: string) => stream(s));
      } else {
        child.stdout.on('data', (b: Buffer) => out.push(b));
      }
      child.stderr.on('data', (b: Buffer) => err.push(b));
      child.stdin.on('error', () => undefined);
      child.stdin.end(spec.input ?? '');
      const timer =
        spec.timeoutMs && spec.timeoutMs > 0
          ? setTimeout(() => {
              timedOut = true;
              child.kill('SIGTERM');
              setTimeout(() => child.kill('SIGKILL'), 2000).unref();
            }, spec.timeoutMs)
          : undefined;
      const end = () => {
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 2000).unref();
      };
      spec.signal?.addEventListener('abort', end, { once: true });
      child.on('error', (e) => {
        spawnError = e;
      });
      child.on('close', (code, signal) => {
        if (timer) clearTimeout(timer);
        spec.signal?.removeEventListener('abort', end);
        this.live.delete(child);
        const endedAtMs = Date.now();
        const durationMs = Math.round(performance.now() - t0);
        let stderr = Buffer.concat(err).toString('utf8');
        if (spawnError) stderr += `${stderr ? '\n' : ''}${spawnError.message}`;
        const stdout = Buffer.concat(out).toString('utf8');
        const result: RunResult = {
          stdout,
          stderr,
          exitCode: spawnError ? 127 : code,
          signal,
          timedOut,
          aborted: (!spec.outlivesCancel && this.abort.signal.aborted) || !!spec.signal?.aborted,
          durationMs,
          startedAtMs,
          endedAtMs,
        };
        const record = { command: this.describe(spec), durationMs, exitCode: result.exitCode, startedAtMs };
        for (const l of this.listeners) l(record);
        resolve(result);
      });
    });
  }
}
