// `talosctl ls [-l] PATH` (client v1.13.8 list.go + server List/archiver.Walker). The header goes
// out before any result, so a failing node still leaves it on stdout; stream errors are collected
// with helpers.AppendErrors' formatter and make the exit code 1.
import { humanizeBytes, humanizeTimeMark, lsTimeMark, streamMultiError, grpcError } from '../format.js';
import type { NodeRuntime } from '../state.js';
import type { CommandContext } from './context.js';
import { flag } from './context.js';

export interface Entry {
  rel: string;
  dir: boolean;
  size: number;
  mtimeMs: number;
  mode: string;
  label: string;
}

export function walk(rt: NodeRuntime, root: string, maxDepth: number, types: Set<string>): Entry[] | undefined {
  const tree = rt.listing();
  const rootEntry = tree.get(root);
  if (!rootEntry) return undefined;
  const sizeOf = (path: string): number => {
    const e = tree.get(path);
    if (!e) return 0;
    if (!e.dir) return Buffer.byteLength(e.file?.content ?? '');
    // tmpfs directory size grows with its entries
    return (children(path).length + 2) * 20;
  };
  const children = (dir: string): string[] => {
    const prefix = dir === '/' ? '/' : `${dir}/`;
    return [...tree.keys()].filter((p) => p !== dir && p.startsWith(prefix) && !p.slice(prefix.length).includes('/')).sort();
  };
  const out: Entry[] = [];
  const keep = (dir: boolean) => types.size === 0 || (dir ? types.has('d') : types.has('f'));
  const add = (path: string, rel: string) => {
    const e = tree.get(path);
    if (!e || !keep(e.dir)) return;
    out.push({ rel, dir: e.dir, size: sizeOf(path), mtimeMs: e.mtimeMs, mode: e.mode, label: e.label });
  };
  if (!rootEntry.dir) {
    add(root, root.slice(root.lastIndexOf('/') + 1));
    return out;
  }
  add(root, '.');
  const visit = (dir: string, depth: number) => {
    for (const child of children(dir)) {
      const rel = root === '/' ? child.slice(1) : child.slice(root.length + 1);
      add(child, rel);
      // archiver.atMaxDepth: the root is always entered, deeper directories while depth < max
      if (tree.get(child)?.dir && (maxDepth < 0 || depth < maxDepth)) visit(child, depth + 1);
    }
  };
  visit(root, 1);
  return out;
}

export function lsCommand(ctx: CommandContext): number {
  const long = flag(ctx, 'long', false);
  const recurse = flag(ctx, 'recurse', false);
  const depth = flag(ctx, 'depth', 1);
  const humanize = flag(ctx, 'humanize', false);
  if (recurse && depth !== 1) {
    ctx.out.fail('only one of flags --recurse and --depth can be specified at the same time');
    return 1;
  }
  const types = new Set<string>();
  for (const t of flag<string[]>(ctx, 'type', [])) {
    for (const ch of t) {
      if (ch === 'f' || ch === 'd') types.add(ch);
      else if (ch === 'l' || ch === 'L') types.add('l');
      else {
        ctx.out.fail(`invalid file type: ${ch}`);
        return 1;
      }
    }
  }
  let root = ctx.req.args[0] ?? '/';
  if (!root.startsWith('/')) root = `/${root}`;
  root = root.replace(/\/+$/, '');
  if (root === '') root = '/';
  // ListRequest{Recurse: depth > 1 || recurse, RecursionDepth: depth}; the server walks 0 levels
  // deep without Recurse, all levels with -r.
  const maxDepth = recurse ? -1 : depth > 1 ? depth : 0;

  const errs: string[] = [];
  let t = long ? 'NODE\tMODE\tUID\tGID\tSIZE(B)\tLASTMOD\tLABEL\tNAME\n' : 'NODE\tNAME\n';
  for (const node of ctx.req.nodes) {
    const a = ctx.reach(node);
    if (!a.ok) {
      errs.push(a.error);
      continue;
    }
    const entries = walk(a.rt, root, maxDepth, types);
    if (!entries) {
      errs.push(grpcError('Unknown', `lstat ${root}: no such file or directory`));
      continue;
    }
    for (const e of entries) {
      if (!long) {
        t += `${node}\t${e.rel}\n`;
        continue;
      }
      const sec = Math.floor(e.mtimeMs / 1000);
      const size = humanize ? humanizeBytes(e.size) : String(e.size);
      const when = humanize ? humanizeTimeMark(sec) : lsTimeMark(sec);
      t += `${node}\t${e.mode}\t0\t0\t${size}\t${when}\t${e.label}\t${e.rel}\n`;
    }
  }
  ctx.out.table(t);
  if (errs.length) {
    ctx.out.fail(streamMultiError(errs));
    return 1;
  }
  return 0;
}
