// Files on the nodes through talosctl: `ls -l` of each path, or of their directory when several share
// one (one call instead of several), a symlinked entry followed by an `ls -l` of the path itself, and
// LASTMOD turned into an instant within its printed precision (parse/ls.ts).
import { posix } from 'node:path';
import { unique } from '../../../core/async.js';
import type { FileListing, Reading } from '../../../core/model/readings.js';
import { ParseError } from '../../parseError.js';
import { isMissingFile } from '../resources.js';
import type { TalosctlCalls } from './calls.js';
import { interpretLastMod, parseLsLong, type LsRow } from './parse/ls.js';

type LsOutcome = { kind: 'rows'; rows: LsRow[]; nowMs: number } | { kind: 'missing' } | { kind: 'error'; error: string };

export class TalosctlFiles {
  constructor(
    private readonly calls: TalosctlCalls,
    private readonly opts: { /** cover several paths in one directory with one `ls -l DIR` */ listDirectories: boolean },
  ) {}

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
      if (this.opts.listDirectories && group.length > 1) {
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
    return this.calls.batch<LsOutcome>(
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
        return { kind: 'error', error: this.calls.failed(call, node, cause, message).error };
      },
    );
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
