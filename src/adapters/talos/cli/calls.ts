// How talosctl is run and its failures read, for every call of the CLI adapter (talosctl.ts,
// files.ts): one process per call, all addresses in `--nodes`, under our own deadline (talosctl has
// none, and a hung node blocks it forever) and with TZ=UTC (ls renders LASTMOD in the client's zone).
// Batch reads attribute results by the NODE column; when some nodes fail, their errors are taken from
// talosctl's error list, and when the list does not say which error is whose, those nodes are asked
// again one by one. Failures are classified once, here (talosErrors.ts).
import { pool, reorder, unique } from '../../../core/async.js';
import { ToolError, type FailureCause } from '../../../core/errors.js';
import type { RunResult, Runner } from '../../exec.js';
import { ParseError } from '../../parseError.js';
import { classifyTalosFailure, splitTalosErrors, type TalosErrorItem } from '../talosErrors.js';

export interface Call {
  nodes: string[];
  command: string;
  result: RunResult;
}

export interface TalosctlCallsOptions {
  runner: Runner;
  binary: string;
  /** the global flags before `--nodes` (`--talosconfig F`) */
  globals: string[];
  /** our deadline for a call that names none */
  callTimeoutMs: number;
  /** how many single-address retries of a batch run at once */
  fallbackConcurrency: number;
}

export class TalosctlCalls {
  private readonly runner: Runner;
  private readonly binary: string;
  private readonly globals: string[];
  private readonly callTimeoutMs: number;
  private readonly fallbackConcurrency: number;

  constructor(opts: TalosctlCallsOptions) {
    this.runner = opts.runner;
    this.binary = opts.binary;
    this.globals = opts.globals;
    this.callTimeoutMs = opts.callTimeoutMs;
    this.fallbackConcurrency = opts.fallbackConcurrency;
  }

  async call(nodes: string[], args: string[], timeoutMs = this.callTimeoutMs): Promise<Call> {
    // talosctl splits --nodes on commas: such an address would silently become two nodes
    const bad = nodes.find((n) => n === '' || /[,\s]/.test(n));
    if (bad !== undefined) throw new Error(`invalid Talos node address ${JSON.stringify(bad)}`);
    const full = [...this.globals, '--nodes', nodes.join(','), ...args];
    const result = await this.runner.run({
      file: this.binary,
      args: full,
      // TZ: `ls -l` renders LASTMOD in the client's zone. NO_COLOR: the multi-error formatter would
      // colour its text if it ever believed it had a terminal.
      env: { TZ: 'UTC', NO_COLOR: '1' },
      timeoutMs,
    });
    return { nodes, command: this.runner.describe({ file: this.binary, args: full }), result };
  }

  /**
   * One talosctl call for all addresses; per-node results from `parse`, per-node failures through
   * `fail`. `ordered`: talosctl lists the failing nodes' errors without names but in `--nodes`
   * order (`get`), so they can be matched to the nodes that returned nothing.
   */
  async batch<R>(
    addresses: string[],
    args: string[],
    parse: (stdout: string, call: Call) => Map<string, R>,
    fail: (node: string, message: string, cause: FailureCause, call: Call) => R,
    ordered = false,
  ): Promise<Map<string, R>> {
    const nodes = unique(addresses);
    const out = new Map<string, R>();
    if (nodes.length === 0) return out;
    const call = await this.call(nodes, args);
    const { result } = call;

    let parseFailure: string | undefined;
    if (!result.timedOut && !result.aborted) {
      try {
        const parsed = parse(result.stdout, call);
        const stray = [...parsed.keys()].filter((n) => !nodes.includes(n));
        if (stray.length > 0) parseFailure = `output names nodes that were not asked: ${stray.join(', ')}`;
        else for (const [n, v] of parsed) out.set(n, v);
      } catch (e) {
        if (!(e instanceof ParseError)) throw e;
        parseFailure = e.message;
        out.clear();
      }
    }

    let missing = nodes.filter((n) => !out.has(n));
    if (missing.length === 0) return reorder(out, nodes);

    if (!result.timedOut && !result.aborted && parseFailure === undefined) {
      const report = splitTalosErrors(result.stderr, nodes);
      const named = new Map<string, TalosErrorItem[]>();
      const unnamed: TalosErrorItem[] = [];
      for (const item of report.items) {
        if (item.node === undefined) unnamed.push(item);
        else if (missing.includes(item.node)) named.set(item.node, [...(named.get(item.node) ?? []), item]);
        // an error named for a node that did answer (e.g. an unreadable directory entry) does not fail it
      }
      for (const [n, items] of named) out.set(n, fail(n, joinMessages(items), items[0].cause, call));
      missing = missing.filter((n) => !out.has(n));
      const isList = report.form === 'multi' || report.form === 'stream';
      if (missing.length > 0 && isList && unnamed.length > 0) {
        if (ordered && unnamed.length === missing.length) {
          missing.forEach((n, i) => out.set(n, fail(n, unnamed[i].message, unnamed[i].cause, call)));
        } else if (missing.length === 1) {
          out.set(missing[0], fail(missing[0], joinMessages(unnamed), unnamed[0].cause, call));
        } else if (unnamed.length === missing.length && unnamed.every((u) => u.message === unnamed[0].message)) {
          // the same error for every silent node (e.g. the same lstat failure): who got which does not matter
          for (const n of missing) out.set(n, fail(n, unnamed[0].message, unnamed[0].cause, call));
        }
      }
      missing = missing.filter((n) => !out.has(n));
      if (missing.length === 0) return reorder(out, nodes);
    }

    if (nodes.length > 1) {
      // attribution impossible (the whole call failed, timed out, or said nothing about these nodes): ask each alone
      const singles = await pool(missing, this.fallbackConcurrency, (n) => this.batch([n], args, parse, fail, ordered));
      missing.forEach((n, i) => out.set(n, singles[i].get(n)!));
      return reorder(out, nodes);
    }

    const node = nodes[0];
    if (parseFailure !== undefined) {
      out.set(node, fail(node, `unparseable output: ${parseFailure}`, 'unparseable', call));
    } else if (result.timedOut || result.aborted || result.exitCode !== 0) {
      const items = this.errorItems(call);
      out.set(node, fail(node, joinMessages(items), this.causeOf(call), call));
    } else {
      out.set(node, fail(node, 'talosctl succeeded but printed no result for this node', 'unparseable', call));
    }
    return out;
  }

  errorItems(call: Call): TalosErrorItem[] {
    return splitTalosErrors(call.result.stderr, call.nodes).items;
  }

  causeOf(call: Call): FailureCause {
    const r = call.result;
    if (r.timedOut) return 'timeout';
    if (r.aborted) return 'unknown';
    return classifyTalosFailure(r);
  }

  private describeFailure(call: Call, cause: FailureCause, message: string): string {
    const r = call.result;
    if (r.timedOut) return `no answer within ${r.durationMs} ms; talosctl was stopped`;
    if (r.aborted) return 'cancelled';
    if (r.exitCode === 127 && /ENOENT/.test(r.stderr)) return `${this.binary} not found (install talosctl 1.13.x or put it on PATH)`;
    const text = message.trim() || r.stderr.trim().split('\n').filter(Boolean).slice(-1)[0] || `exit ${r.exitCode}`;
    return `${cause}: ${text}`;
  }

  failed(call: Call, node: string, cause: FailureCause, message: string): { ok: false; error: string } {
    return { ok: false, error: `${call.command} failed for ${node} (${this.describeFailure(call, cause, message)})` };
  }

  toolError(call: Call, cause: FailureCause, node: string, message?: string): ToolError {
    const r = call.result;
    const detail =
      message ??
      this.describeFailure(
        call,
        cause,
        this.errorItems(call)
          .map((i) => i.message)
          .join('; '),
      );
    return new ToolError({
      tool: 'talosctl',
      command: call.command,
      kind: cause,
      exitCode: r.exitCode,
      stderr: r.stderr,
      node,
      message: `${call.command} failed (${detail})`,
    });
  }

  unparseable(call: Call, node: string, why: string): ToolError {
    return this.toolError(call, 'unparseable', node, `unparseable output: ${why}`);
  }

  parseOrThrow<T>(call: Call, node: string, fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      if (e instanceof ParseError) throw this.unparseable(call, node, e.message);
      throw e;
    }
  }
}

function joinMessages(items: TalosErrorItem[]): string {
  return items.map((i) => i.message.trim()).join('; ');
}
