// How the kubectl adapter runs one command (a mechanical split of src/adapters/kube/kubectl.ts): the
// binary with the kubeconfig and context flags, its deadline, the failure classified once (ToolError),
// a missing context said as an input error, and the JSON of its answer handed to a parser.
import { InputError, ToolError } from '../../core/errors.js';
import type { Runner, RunResult } from '../exec.js';
import { ParseError } from '../parseError.js';
import { classifyKubectlFailure, missingContext } from './parse/kubectlErrors.js';
import type { Json } from './parse/json.js';

export interface KubectlOptions {
  runner: Runner;
  kubeconfig?: string;
  context?: string;
  binary?: string;
  /** deadline for short calls (get, patch, create, delete) */
  callTimeoutMs?: number;
  /** how long one watch request lasts before it is re-opened (`timeoutSeconds`); 300 by default */
  watchSeconds?: number;
}

/** The commands' side of the kubectl adapter: Kubectl (src/adapters/kube/kubectl.ts) is built on it. */
export class KubectlCommands {
  protected readonly runner: Runner;
  protected readonly binary: string;
  protected readonly globals: string[];
  protected readonly callTimeoutMs: number;
  protected readonly watchSeconds: number;
  /** the `kube-context` input, when given */
  protected readonly context?: string;

  constructor(opts: KubectlOptions) {
    this.runner = opts.runner;
    this.binary = opts.binary ?? 'kubectl';
    this.globals = [];
    if (opts.kubeconfig) this.globals.push(`--kubeconfig=${opts.kubeconfig}`);
    if (opts.context) this.globals.push(`--context=${opts.context}`);
    this.context = opts.context || undefined;
    this.callTimeoutMs = opts.callTimeoutMs ?? 60_000;
    this.watchSeconds = opts.watchSeconds ?? 300;
  }

  protected async run(
    args: string[],
    opts: { timeoutMs?: number; input?: string; node?: string; signal?: AbortSignal } = {},
  ): Promise<RunResult> {
    const res = await this.exec(args, opts);
    if (res.exitCode !== 0) throw this.missingContext(res) ?? this.failure(args, res, res.stderr, opts.node);
    return res;
  }

  /**
   * The kubeconfig lacks the context: an input error naming `kube-context` (or the kubeconfig, whose
   * current-context it is), not kubectl's words alone. The run's first read says it, before anything is
   * written, and no extra kubectl process checks the context beforehand.
   */
  protected missingContext(res: RunResult): InputError | undefined {
    const name = res.exitCode === 1 ? missingContext(res.stderr) : undefined;
    if (name === undefined) return undefined;
    const said = `(kubectl: ${res.stderr.trim().split('\n').slice(-1)[0]})`;
    return this.context !== undefined
      ? new InputError('kube-context', `the kubeconfig has no context ${JSON.stringify(this.context)} ${said}`)
      : new InputError(
          'kubeconfig',
          `its current-context ${JSON.stringify(name)} names no context of the kubeconfig ${said}; set kube-context, or fix the kubeconfig`,
        );
  }

  // Short calls also pass --request-timeout: kubectl has no client timeout by default (a hung
  // apiserver would hang it forever), and ours kills the process as a last resort.
  protected exec(
    args: string[],
    opts: { timeoutMs?: number; input?: string; signal?: AbortSignal; onStdout?: (chunk: string) => void } = {},
  ): Promise<RunResult> {
    return this.runner.run({
      file: this.binary,
      args: [...this.globals, ...args],
      timeoutMs: opts.timeoutMs ?? this.callTimeoutMs,
      input: opts.input,
      signal: opts.signal,
      onStdout: opts.onStdout,
    });
  }

  /** The failed run as a ToolError, classified from `stderr` (all of it, or the lines about one resource). */
  protected failure(args: string[], res: RunResult, stderr: string, node?: string): ToolError {
    const command = this.runner.describe({ file: this.binary, args: [...this.globals, ...args] });
    const missing = res.exitCode === 127 && /ENOENT/.test(res.stderr);
    return new ToolError({
      tool: 'kubectl',
      command,
      kind: res.timedOut
        ? 'timeout'
        : res.aborted && res.exitCode === null
          ? 'cancelled'
          : missing
            ? 'usage'
            : classifyKubectlFailure(stderr),
      exitCode: res.exitCode,
      stderr,
      node,
      message: missing ? `${this.binary} not found on PATH (install kubectl)` : undefined,
    });
  }

  protected parseJson(res: RunResult, what: string, node?: string): Json {
    try {
      return JSON.parse(res.stdout) as Json;
    } catch {
      throw new ToolError({ tool: 'kubectl', command: what, kind: 'unparseable', exitCode: 0, stderr: 'output is not JSON', node });
    }
  }

  /** JSON, then a format parser: either failing is cause 'unparseable', naming the command. */
  protected parseWith<T>(res: RunResult, what: string, parse: (raw: unknown) => T, node?: string): T {
    const raw = this.parseJson(res, what, node);
    try {
      return parse(raw);
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      throw new ToolError({ tool: 'kubectl', command: what, kind: 'unparseable', exitCode: 0, stderr: e.message, node });
    }
  }
}
