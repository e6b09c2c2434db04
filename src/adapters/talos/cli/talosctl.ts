// TalosClient over the talosctl binary (pinned to the cluster's minor, 1.13.x: the output formats
// and error wrapping are the client's, see docs/talos-facts.md#t1-client-formats). It reads and reports;
// it never decides. Every call runs with TZ=UTC (ls renders LASTMOD in the client's zone) and under
// our own deadline (talosctl has none, and a hung node blocks it forever).
//
// Batch reads send all addresses in one talosctl call and attribute results by the NODE column.
// When some nodes fail, their errors are taken from talosctl's error list; when the list does not
// say which error is whose, those nodes are asked again one by one.
import { posix } from 'node:path';
import { pool, reorder, unique } from '../../../core/async.js';
import { ToolError, type FailureCause } from '../../../core/errors.js';
import type {
  CriServiceReading,
  EtcFileStatusReading,
  FileAuthReading,
  FileListing,
  Reading,
  ServicePidReading,
  TimeStatusReading,
} from '../../../core/model.js';
import type { RunResult, Runner } from '../../exec.js';
import { parseCosiYaml, etcFileStatusFrom, servicePidFrom, timeStatusFrom } from './parse/cosiYaml.js';
import { parseCriRegistryAuth } from '../criToml.js';
import { parseEtcdAlarms, parseEtcdMembers, parseEtcdStatus } from './parse/etcd.js';
import { formatGoDuration } from './parse/goDuration.js';
import { interpretLastMod, parseLsLong, type LsRow } from './parse/ls.js';
import { ParseError } from '../../parseError.js';
import { parseServiceView, unreadableCriView } from './parse/service.js';
import { classifyTalosError, classifyTalosFailure, splitTalosErrors, type TalosErrorItem } from '../talosErrors.js';
import { parseVersion } from './parse/version.js';
import { COSI, etcFileId, isMissingFile, isUnregisteredType } from '../resources.js';
import type { EtcdAlarm, EtcdMember, EtcdMemberStatus, TalosClient } from '../../types.js';

export interface TalosctlOptions {
  runner: Runner;
  talosconfig?: string;
  /** the auth patch file `patch machineconfig --patch-file` applies (the run's one patch); without it patchMachineConfig refuses */
  patchFile?: string;
  /** default `talosctl` (looked up on PATH) */
  binary?: string;
  /** our deadline for every call except reboot; default 60 s */
  callTimeoutMs?: number;
  /** `reboot --timeout` when the caller passes no positive timeout; default 30 min (talosctl's own default) */
  rebootTimeoutMs?: number;
  /** cover several paths in one directory with one `ls -l DIR` (default true) */
  listDirectories?: boolean;
  /** how many single-address retries of a batch run at once; default 4 */
  fallbackConcurrency?: number;
}

interface Call {
  nodes: string[];
  command: string;
  result: RunResult;
}

/**
 * `(D ago)` is `time.Since(ts).Round(time.Second)`: the true age at the printing moment is within
 * ±500 ms of D, and the printing moment is somewhere in the call's runner window. So an event lies in
 * [before − D − 500 ms, after − D + 500 ms]; a slow call widens the bounds rather than moving them.
 */
const AGE_ROUNDING_MS = 500;

/**
 * How long talosctl gets past its own `reboot --timeout` to report it before we kill it. Part of what
 * one node may take (src/rules/budget.ts).
 */
export const REBOOT_GRACE_MS = 60_000;

type LsOutcome = { kind: 'rows'; rows: LsRow[]; nowMs: number } | { kind: 'missing' } | { kind: 'error'; error: string };

export class Talosctl implements TalosClient {
  private readonly runner: Runner;
  private readonly binary: string;
  private readonly globals: string[];
  private readonly patchFile?: string;
  private readonly callTimeoutMs: number;
  private readonly rebootTimeoutMs: number;
  private readonly listDirectories: boolean;
  private readonly fallbackConcurrency: number;

  constructor(opts: TalosctlOptions) {
    this.runner = opts.runner;
    this.binary = opts.binary ?? 'talosctl';
    this.globals = opts.talosconfig ? ['--talosconfig', opts.talosconfig] : [];
    this.patchFile = opts.patchFile;
    this.callTimeoutMs = opts.callTimeoutMs ?? 60_000;
    this.rebootTimeoutMs = opts.rebootTimeoutMs ?? 30 * 60_000;
    this.listDirectories = opts.listDirectories ?? true;
    this.fallbackConcurrency = Math.max(1, opts.fallbackConcurrency ?? 4);
  }

  // ---------------------------------------------------------------------------------------------
  // batch reads
  // ---------------------------------------------------------------------------------------------

  async version(addresses: string[]): Promise<Map<string, Reading<string>>> {
    return this.batch<Reading<string>>(
      addresses,
      ['version'],
      (stdout) => new Map(parseVersion(stdout).map((v) => [v.node, { ok: true, value: v.tag }])),
      (node, message, cause, call) => this.failed(call, node, cause, message),
    );
  }

  async criService(addresses: string[]): Promise<Map<string, Reading<CriServiceReading>>> {
    return this.batch<Reading<CriServiceReading>>(
      addresses,
      ['service', 'cri'],
      (stdout, call) => {
        const out = new Map<string, Reading<CriServiceReading>>();
        for (const v of parseServiceView(stdout)) {
          if (v.id !== 'cri') throw new ParseError('service', `expected service cri, got ${JSON.stringify(v.id)}`);
          const unreadable = unreadableCriView(v);
          if (unreadable !== undefined) {
            out.set(v.node, this.failed(call, v.node, 'unparseable', `unparseable output: ${unreadable}`));
            continue;
          }
          out.set(v.node, {
            ok: true,
            value: {
              state: v.state,
              health: v.health,
              lastHealthMessage: v.lastHealthMessage,
              // talosctl printed each age at some runner instant in [before, after], rounded to the second
              events: v.events.map((ev) => ({
                state: ev.state,
                message: ev.message,
                at: {
                  earliestMs: call.result.startedAtMs - ev.agoMs - AGE_ROUNDING_MS,
                  latestMs: call.result.endedAtMs - ev.agoMs + AGE_ROUNDING_MS,
                  via: 'cli' as const,
                  text: `${ev.ageText} ago`,
                },
              })),
              // the "(D ago)" ages were computed by talosctl somewhere inside this window
              clientBeforeMs: call.result.startedAtMs,
              clientAfterMs: call.result.endedAtMs,
            },
          });
        }
        return out;
      },
      (node, message, cause, call) => this.failed(call, node, cause, message),
    );
  }

  async servicePids(addresses: string[]): Promise<Map<string, Reading<ServicePidReading> | undefined>> {
    return this.batch<Reading<ServicePidReading> | undefined>(
      addresses,
      ['get', COSI.servicePid.cliName, COSI.servicePid.id, '-o', 'yaml'],
      (stdout) => new Map(parseCosiYaml(stdout).map((r) => [r.node, { ok: true, value: servicePidFrom(expectId(r, COSI.servicePid.id)) }])),
      (node, message, cause, call) => (isUnregisteredType(message) ? undefined : this.failed(call, node, cause, message)),
      true,
    );
  }

  async timeStatus(addresses: string[]): Promise<Map<string, Reading<TimeStatusReading>>> {
    return this.batch<Reading<TimeStatusReading>>(
      addresses,
      ['get', COSI.timeStatus.cliName, COSI.timeStatus.id, '-o', 'yaml'],
      (stdout) => new Map(parseCosiYaml(stdout).map((r) => [r.node, { ok: true, value: timeStatusFrom(expectId(r, COSI.timeStatus.id)) }])),
      (node, message, cause, call) => this.failed(call, node, cause, message),
      true,
    );
  }

  async etcFileStatus(addresses: string[], paths: string[]): Promise<Map<string, Map<string, Reading<EtcFileStatusReading>>>> {
    const nodes = unique(addresses);
    const out = new Map(nodes.map((n) => [n, new Map<string, Reading<EtcFileStatusReading>>()]));
    const perPath = await Promise.all(
      unique(paths).map(async (path): Promise<[string, Map<string, Reading<EtcFileStatusReading>>]> => {
        const id = etcFileId(path);
        if (id === undefined) {
          return [
            path,
            new Map(nodes.map((n) => [n, { ok: false, error: `${path} is not a file under /etc, so it has no EtcFileStatus` }])),
          ];
        }
        const readings = await this.batch<Reading<EtcFileStatusReading>>(
          nodes,
          ['get', COSI.etcFileStatus.cliName, id, '-o', 'yaml'],
          (stdout) => new Map(parseCosiYaml(stdout).map((r) => [r.node, { ok: true, value: etcFileStatusFrom(expectId(r, id)) }])),
          (node, message, cause, call) => this.failed(call, node, cause, message),
          true,
        );
        return [path, readings];
      }),
    );
    for (const [path, readings] of perPath) for (const n of nodes) out.get(n)!.set(path, readings.get(n)!);
    return out;
  }

  async listFiles(addresses: string[], paths: string[]): Promise<Map<string, Map<string, Reading<FileListing>>>> {
    const nodes = unique(addresses);
    const out = new Map(nodes.map((n) => [n, new Map<string, Reading<FileListing>>()]));
    const byDir = new Map<string, string[]>();
    for (const p of unique(paths)) {
      const dir = posix.dirname(p);
      byDir.set(dir, [...(byDir.get(dir) ?? []), p]);
    }
    const jobs: Array<Promise<void>> = [];
    for (const [dir, group] of byDir) {
      if (this.listDirectories && group.length > 1) {
        jobs.push(
          this.listDirectory(nodes, dir, group).then((res) => {
            for (const n of nodes) for (const p of group) out.get(n)!.set(p, res.get(n)!.get(p)!);
          }),
        );
      } else {
        for (const p of group) {
          jobs.push(
            this.listPath(nodes, p).then((res) => {
              for (const n of nodes) out.get(n)!.set(p, res.get(n)!);
            }),
          );
        }
      }
    }
    await Promise.all(jobs);
    // keep the caller's path order in every per-node map
    for (const n of nodes) {
      const m = out.get(n)!;
      out.set(n, new Map(unique(paths).map((p) => [p, m.get(p)!])));
    }
    return out;
  }

  private async listPath(nodes: string[], path: string): Promise<Map<string, Reading<FileListing>>> {
    const outcomes = await this.ls(nodes, path);
    const out = new Map<string, Reading<FileListing>>();
    for (const n of nodes) {
      const o = outcomes.get(n)!;
      if (o.kind === 'missing') out.set(n, { ok: true, value: { path, exists: false } });
      else if (o.kind === 'error') out.set(n, { ok: false, error: o.error });
      else if (o.rows.some((r) => r.name === '.')) out.set(n, { ok: false, error: `ls -l ${path} on ${n}: it is a directory, not a file` });
      else if (o.rows.length !== 1) out.set(n, { ok: false, error: `ls -l ${path} on ${n}: expected one row, got ${o.rows.length}` });
      else out.set(n, listing(n, path, o.rows[0], o.nowMs));
    }
    return out;
  }

  private async listDirectory(nodes: string[], dir: string, paths: string[]): Promise<Map<string, Map<string, Reading<FileListing>>>> {
    const outcomes = await this.ls(nodes, dir);
    const out = new Map(nodes.map((n) => [n, new Map<string, Reading<FileListing>>()]));
    // A symlinked entry shows the link's own mtime; `ls -l` of the path itself resolves it.
    const followUp = new Map<string, string[]>();
    for (const n of nodes) {
      const o = outcomes.get(n)!;
      const m = out.get(n)!;
      for (const p of paths) {
        if (o.kind === 'missing') m.set(p, { ok: true, value: { path: p, exists: false } });
        else if (o.kind === 'error') m.set(p, { ok: false, error: o.error });
        else if (!o.rows.some((r) => r.name === '.' && r.mode.startsWith('d'))) {
          m.set(p, { ok: false, error: `ls -l ${dir} on ${n}: ${dir} is not a directory` });
        } else {
          const row = o.rows.find((r) => r.name === posix.basename(p));
          if (!row) m.set(p, { ok: true, value: { path: p, exists: false } });
          else if (row.mode.startsWith('L')) followUp.set(p, [...(followUp.get(p) ?? []), n]);
          else m.set(p, listing(n, p, row, o.nowMs));
        }
      }
    }
    for (const [p, ns] of followUp) {
      const res = await this.listPath(ns, p);
      for (const n of ns) out.get(n)!.set(p, res.get(n)!);
    }
    return out;
  }

  private async ls(nodes: string[], target: string): Promise<Map<string, LsOutcome>> {
    return this.batch<LsOutcome>(
      nodes,
      ['ls', '-l', target],
      (stdout, call) => {
        const rows = new Map<string, LsRow[]>();
        for (const r of parseLsLong(stdout)) rows.set(r.node, [...(rows.get(r.node) ?? []), r]);
        return new Map([...rows].map(([n, rs]) => [n, { kind: 'rows', rows: rs, nowMs: call.result.startedAtMs }]));
      },
      (node, message, cause, call) => {
        // the server's lstat of the root fails before streaming anything: the path is not there
        if (isMissingFile(message)) return { kind: 'missing' };
        return { kind: 'error', error: this.failed(call, node, cause, message).error };
      },
    );
  }

  // ---------------------------------------------------------------------------------------------
  // single-node calls
  // ---------------------------------------------------------------------------------------------

  async readAuth(address: string, path: string): Promise<Reading<FileAuthReading>> {
    // talosctl read refuses several nodes (`command "read" is not supported with multiple nodes`)
    // The file's text holds the credential: it is compared in memory, and no message quotes it.
    const call = await this.call([address], ['read', path]);
    if (call.result.exitCode === 0 && !call.result.timedOut) {
      try {
        return { ok: true, value: { path, exists: true, auth: parseCriRegistryAuth(call.result.stdout) } };
      } catch (e) {
        // the ParseError names a line and column only; the file text holds the credential
        if (e instanceof ParseError) return { ok: false, error: `${call.command} on ${address}: unparseable: ${e.message}` };
        throw e;
      }
    }
    const first = this.errorItems(call)[0];
    if (!call.result.timedOut && first?.cause === 'not-found') return { ok: true, value: { path, exists: false, auth: {} } };
    return this.failed(call, address, this.causeOf(call), first?.message ?? '');
  }

  async patchMachineConfig(address: string): Promise<void> {
    if (this.patchFile === undefined) throw new Error('talosctl: opened without an auth patch file, so there is no patch to apply');
    const patchFile = this.patchFile;
    // Success is printed on stderr (`patched … at the node …` / `Applied configuration without a reboot`);
    // only the exit code says whether it worked.
    const call = await this.call([address], ['patch', 'machineconfig', '--mode=no-reboot', '--patch-file', patchFile]);
    if (call.result.exitCode !== 0 || call.result.timedOut) throw this.toolError(call, this.causeOf(call), address);
  }

  async reboot(address: string, timeoutMs: number): Promise<void> {
    const t = timeoutMs > 0 ? timeoutMs : this.rebootTimeoutMs;
    // talosctl parses --timeout with time.ParseDuration; whole seconds keep the flag readable in logs
    const flag = formatGoDuration(Math.ceil(t / 1000) * 1000);
    const call = await this.call([address], ['reboot', '--wait', '--timeout', flag], t + REBOOT_GRACE_MS);
    // exit 0 is talosctl's statement that the node came back Ready with a different boot id
    if (call.result.exitCode === 0 && !call.result.timedOut) return;
    let cause = this.causeOf(call);
    if (!call.result.timedOut) {
      // The tracker prints progress (`"<node>": unavailable, retrying...`) before the error, so the
      // last line, not the first, says why it failed.
      const last = call.result.stderr.trim().split('\n').filter(Boolean).slice(-1)[0] ?? '';
      const lastCause = classifyTalosError(last);
      if (lastCause !== 'unknown') cause = lastCause;
    }
    throw this.toolError(call, cause, address);
  }

  async etcdStatus(address: string): Promise<EtcdMemberStatus[]> {
    const call = await this.call([address], ['etcd', 'status']);
    if (call.result.exitCode !== 0 || call.result.timedOut) throw this.toolError(call, this.causeOf(call), address);
    const rows = this.parseOrThrow(call, address, () => parseEtcdStatus(call.result.stdout));
    const mine = rows.filter((r) => r.node === undefined || r.node === address);
    if (mine.length === 0) throw this.unparseable(call, address, `no member status for ${address}`);
    return mine.map((r) => ({ node: r.node ?? address, memberId: r.memberId, learner: r.learner, errors: r.errors }));
  }

  async etcdAlarms(address: string): Promise<EtcdAlarm[]> {
    const call = await this.call([address], ['etcd', 'alarm', 'list']);
    if (call.result.exitCode !== 0 || call.result.timedOut) throw this.toolError(call, this.causeOf(call), address);
    const rows = this.parseOrThrow(call, address, () => parseEtcdAlarms(call.result.stdout));
    return rows.map((r) => ({ node: r.node ?? address, memberId: r.memberId, alarm: r.alarm }));
  }

  async etcdMembers(address: string): Promise<EtcdMember[]> {
    // `etcd members` asks the node's own etcd (QueryLocal); the list is etcd's, one row per member
    const call = await this.call([address], ['etcd', 'members']);
    if (call.result.exitCode !== 0 || call.result.timedOut) throw this.toolError(call, this.causeOf(call), address);
    const rows = this.parseOrThrow(call, address, () => parseEtcdMembers(call.result.stdout));
    const mine = rows.filter((r) => r.node === undefined || r.node === address);
    // a running etcd always lists itself: no row for this node is no answer from it
    if (mine.length === 0) throw this.unparseable(call, address, `no etcd members listed by ${address}`);
    return mine.map((r) => ({ id: r.id, name: r.hostname, peerUrls: r.peerUrls, clientUrls: r.clientUrls, learner: r.learner }));
  }

  // ---------------------------------------------------------------------------------------------
  // machinery
  // ---------------------------------------------------------------------------------------------

  private async call(nodes: string[], args: string[], timeoutMs = this.callTimeoutMs): Promise<Call> {
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
  private async batch<R>(
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

  private errorItems(call: Call): TalosErrorItem[] {
    return splitTalosErrors(call.result.stderr, call.nodes).items;
  }

  private causeOf(call: Call): FailureCause {
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

  private failed(call: Call, node: string, cause: FailureCause, message: string): { ok: false; error: string } {
    return { ok: false, error: `${call.command} failed for ${node} (${this.describeFailure(call, cause, message)})` };
  }

  private toolError(call: Call, cause: FailureCause, node: string, message?: string): ToolError {
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

  private unparseable(call: Call, node: string, why: string): ToolError {
    return this.toolError(call, 'unparseable', node, `unparseable output: ${why}`);
  }

  private parseOrThrow<T>(call: Call, node: string, fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      if (e instanceof ParseError) throw this.unparseable(call, node, e.message);
      throw e;
    }
  }
}

function listing(node: string, path: string, row: LsRow, nowMs: number): Reading<FileListing> {
  if (row.mode.startsWith('d')) return { ok: false, error: `ls -l ${path} on ${node}: it is a directory, not a file` };
  try {
    const lm = interpretLastMod(row.lastMod, nowMs);
    const mtime = { earliestMs: lm.mtimeMs, latestMs: lm.mtimeMs + lm.precisionMs - 1, via: 'cli' as const, text: row.lastMod };
    return { ok: true, value: { path, exists: true, lastModText: row.lastMod, mtime } };
  } catch (e) {
    if (e instanceof ParseError) return { ok: false, error: `ls -l ${path} on ${node}: unparseable: ${e.message}` };
    throw e;
  }
}

function expectId<T extends { metadata: { id: string; type: string } }>(r: T, id: string): T {
  if (r.metadata.id !== id)
    throw new ParseError('get -o yaml', `expected ${r.metadata.type} ${JSON.stringify(id)}, got ${JSON.stringify(r.metadata.id)}`);
  return r;
}

function joinMessages(items: TalosErrorItem[]): string {
  return items.map((i) => i.message.trim()).join('; ');
}
