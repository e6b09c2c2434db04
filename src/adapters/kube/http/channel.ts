// The run's one authenticated channel to the API server: a single `kubectl proxy` child serving on a
// Unix socket in a fresh 0700 directory of the runner's temp directory. kubectl authenticates every
// request as it would its own (client certificates, bearer tokens, exec credential plugins with their
// refresh, the context, the proxy the kubeconfig names); the action speaks plain HTTP to the socket,
// and no other user of the machine can reach it (no TCP port, no token on disk). Opened on the first
// request, closed at the end of the run; a proxy that dies is noticed and re-opened once. The run's
// cancellation does not end it: a cancelled step still gives its nodes back over it, and closes it
// when it is done (docs/kube-channel.md).
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputError, ToolError } from '../../../core/errors.js';
import type { Runner, RunResult } from '../../exec.js';
import { classifyKubectlFailure, missingContext } from '../parse/kubectlErrors.js';

export interface ChannelOptions {
  runner: Runner;
  kubeconfig?: string;
  /** the `kube-context` input */
  context?: string;
  binary?: string;
  /** where the socket's own directory is made: the runner's temp directory (RUNNER_TEMP); the system's by default */
  tempDir?: string;
  /** how long the proxy may take to serve (it reads the kubeconfig; an exec plugin runs on the first request) */
  startTimeoutMs?: number;
}

/** A Unix socket's path may hold 107 bytes on Linux (sun_path); a longer temp directory falls back to the system's. */
const SOCKET_PATH_MAX = 100;

/** How many times a proxy that died is started again in one run. */
export const REOPENS = 1;

/** One running proxy. */
export interface Opened {
  socketPath: string;
  agent: Agent;
  /** false once the proxy exited */
  alive: boolean;
}

interface Running extends Opened {
  dir: string;
  stop: AbortController;
  exited: Promise<RunResult>;
}

export class KubeChannel {
  private readonly opts: ChannelOptions;
  private current?: Promise<Running>;
  /** the proxy started last, known synchronously (the process's exit handler stops it) */
  private latest?: Running;
  private reopens = 0;
  private closed = false;
  /** why the last proxy ended, for the error of a request that finds none */
  private lastEnd = '';
  /** the proxies started (the bench reports it: one per run, two if one died) */
  starts = 0;
  private readonly onExit = () => this.killNow();

  constructor(opts: ChannelOptions) {
    this.opts = opts;
  }

  /** aborted when the run is cancelled (the Runner's signal): what is in flight then gets a short grace */
  get runSignal(): AbortSignal {
    return this.opts.runner.signal;
  }

  /** when the run was cancelled (performance.now()), the start of its cleanup's window */
  get cancelledAt(): number | undefined {
    return this.opts.runner.cancelledAt;
  }

  /** The proxy's command line as the log shows it (no secret: the kubeconfig is a path). */
  describe(): string {
    return this.opts.runner.describe({ file: this.binary(), args: this.args('<socket>') });
  }

  private binary(): string {
    return this.opts.binary ?? 'kubectl';
  }

  private args(socketPath: string): string[] {
    const a: string[] = [];
    if (this.opts.kubeconfig) a.push(`--kubeconfig=${this.opts.kubeconfig}`);
    if (this.opts.context) a.push(`--context=${this.opts.context}`);
    // Only the API paths the action uses; exec/attach/port-forward stay refused as kubectl's defaults
    // refuse the first two; the Host filter stays the default (localhost only).
    return [
      ...a,
      'proxy',
      `--unix-socket=${socketPath}`,
      '--accept-paths=^/(api|apis)(/|$)|^/readyz$',
      '--reject-paths=^/api/.*/pods/.*/(exec|attach|portforward|proxy)|^/api/.*/services/.*/proxy|^/api/v1/nodes/.*/proxy',
      '--keepalive=30s',
    ];
  }

  /** The running proxy, started on first use, started again once when it died. */
  async open(): Promise<Opened> {
    if (this.closed) throw this.ended('the channel is closed');
    this.current ??= this.start();
    const cur = this.current;
    // a proxy that never served: its failure is every request's answer
    const r = await cur;
    if (r.alive) return r;
    // the proxy died after the run was cancelled: the Runner starts no process for a cancelled run
    if (this.opts.runner.signal.aborted) throw this.ended('the run was cancelled', 'cancelled');
    if (this.current === cur) {
      if (this.reopens >= REOPENS) throw this.ended(`the kubectl proxy ended and was already started again once (${this.lastEnd})`);
      this.reopens++;
      this.current = this.start();
    }
    return this.open();
  }

  private ended(why: string, kind: 'transport' | 'cancelled' = 'transport'): ToolError {
    return new ToolError({
      tool: 'kube-api',
      command: this.describe(),
      kind,
      exitCode: null,
      stderr: why,
      message: `the channel to the API server is gone: ${why}`,
    });
  }

  private start(): Promise<Running> {
    const base =
      this.opts.tempDir && join(this.opts.tempDir, 'kube-XXXXXX', 'x'.repeat(16)).length < SOCKET_PATH_MAX ? this.opts.tempDir : tmpdir();
    reapOrphans(base);
    // mkdtemp makes the directory 0700: only this user can reach the socket inside it
    const dir = mkdtempSync(join(base, 'kube-'));
    // whose channel this is: a later channel ends the proxy of a step that was killed (reapOrphans)
    writeFileSync(join(dir, OWNER_FILE), String(process.pid), { mode: 0o600 });
    const socketPath = join(dir, `${randomBytes(6).toString('hex')}.sock`);
    const stop = new AbortController();
    const args = this.args(socketPath);
    this.starts++;
    if (this.starts === 1) process.once('exit', this.onExit);
    return new Promise<Running>((resolve, reject) => {
      let ready = false;
      let out = '';
      const running: Running = {
        socketPath,
        dir,
        agent: new Agent({ keepAlive: true, maxSockets: 32 }),
        alive: true,
        stop,
        exited: undefined as never,
      };
      const timer = setTimeout(() => {
        if (ready) return;
        stop.abort();
      }, this.opts.startTimeoutMs ?? 30_000);
      this.latest = running;
      running.exited = this.opts.runner.run({
        file: this.binary(),
        args,
        signal: stop.signal,
        // the cancelled step's cleanup (its releases, its Events, the Lease) is sent over it; close() ends it
        outlivesCancel: true,
        onStdout: (chunk) => {
          if (ready) return;
          out += chunk;
          if (/Starting to serve on /.test(out)) {
            ready = true;
            clearTimeout(timer);
            // kubectl listens with umask 077 (pkg/proxy ListenUnix); 0600 says it plainly
            try {
              chmodSync(socketPath, 0o600);
            } catch {
              /* the directory is 0700 either way */
            }
            resolve(running);
          }
        },
      });
      void running.exited.then((res) => {
        clearTimeout(timer);
        running.alive = false;
        running.agent.destroy();
        rmSync(dir, { recursive: true, force: true });
        this.lastEnd = res.aborted
          ? 'stopped'
          : `exit ${String(res.exitCode)}${res.signal ? ` (${res.signal})` : ''}: ${lastLine(res.stderr)}`;
        if (!ready) reject(this.startFailure(args, res));
      });
    });
  }

  /** The proxy did not start: the kubeconfig's words (a missing context is the input's error, as before). */
  private startFailure(args: string[], res: RunResult): Error {
    const name = res.exitCode === 1 ? missingContext(res.stderr) : undefined;
    const said = `(kubectl: ${lastLine(res.stderr)})`;
    if (name !== undefined) {
      return this.opts.context
        ? new InputError('kube-context', `the kubeconfig has no context ${JSON.stringify(this.opts.context)} ${said}`)
        : new InputError(
            'kubeconfig',
            `its current-context ${JSON.stringify(name)} names no context of the kubeconfig ${said}; set kube-context, or fix the kubeconfig`,
          );
    }
    const command = this.opts.runner.describe({ file: this.binary(), args });
    const missing = res.exitCode === 127 && /ENOENT/.test(res.stderr);
    // aborted by our start timer, not by the run's cancellation or our close
    const timedOut = res.aborted && !this.closed && !this.opts.runner.signal.aborted;
    return new ToolError({
      tool: 'kubectl',
      command,
      kind: timedOut ? 'timeout' : res.aborted ? 'cancelled' : missing ? 'usage' : classifyKubectlFailure(res.stderr),
      exitCode: res.exitCode,
      stderr: timedOut ? `kubectl proxy did not serve within ${this.opts.startTimeoutMs ?? 30_000} ms\n${res.stderr}` : res.stderr,
      message: missing ? `${this.binary()} not found on PATH (install kubectl)` : undefined,
    });
  }

  /** Stops the proxy and removes its directory; waits for it to exit. */
  async close(): Promise<void> {
    this.closed = true;
    process.removeListener('exit', this.onExit);
    const cur = this.current;
    if (!cur) return;
    const r = await cur.catch(() => undefined);
    if (!r) return;
    r.stop.abort();
    await r.exited;
  }

  /** process exit: the child is signalled synchronously (an orphaned proxy would outlive the step) */
  private killNow(): void {
    const r = this.latest;
    if (!r?.alive) return;
    r.stop.abort();
    rmSync(r.dir, { recursive: true, force: true });
  }
}

/** In a channel's directory: the pid of the step process that started its proxy. */
const OWNER_FILE = 'owner';

/**
 * The proxies of steps that were killed without a chance to stop them (SIGKILL, as the runner's last
 * resort on Linux kills the step's process alone: docs/kube-channel.md): a channel directory in `base`
 * whose owner process is gone. Its proxy, found by the socket path on its command line (Linux's /proc;
 * elsewhere none is found), is ended and the directory removed. A directory without an owner file, or
 * whose owner still runs (or whose pid was reused), is left alone.
 */
export function reapOrphans(base: string): number {
  let ended = 0;
  let entries: string[];
  try {
    entries = readdirSync(base).filter((e) => e.startsWith('kube-'));
  } catch {
    return 0;
  }
  for (const e of entries) {
    const dir = join(base, e);
    let owner: number;
    try {
      owner = Number(readFileSync(join(dir, OWNER_FILE), 'utf8'));
    } catch {
      continue;
    }
    if (!Number.isInteger(owner) || owner <= 0 || owner === process.pid || running(owner)) continue;
    for (const pid of servingIn(dir)) {
      try {
        process.kill(pid, 'SIGTERM');
        ended++;
      } catch {
        /* gone already */
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
  return ended;
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    // EPERM: it runs, as another user
    return (e as { code?: string }).code === 'EPERM';
  }
  // a zombie (killed, its parent has not collected it yet) runs no more
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** The processes whose command line serves a socket in `dir` (`--unix-socket=<dir>/…`), from /proc. */
function servingIn(dir: string): number[] {
  const pids: number[] = [];
  let procs: string[];
  try {
    procs = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return pids;
  }
  const flag = `--unix-socket=${dir}/`;
  for (const d of procs) {
    try {
      if (
        readFileSync(`/proc/${d}/cmdline`, 'utf8')
          .split('\0')
          .some((a) => a.startsWith(flag))
      )
        pids.push(Number(d));
    } catch {
      /* gone, or not ours to read */
    }
  }
  return pids;
}

function lastLine(text: string): string {
  return text.trim().split('\n').filter(Boolean).slice(-1)[0] ?? '';
}
