// The structure rules of src/ (src/README.md, docs/architecture.md "How the structure is checked") as
// code: each source file's imports read with the TypeScript compiler's own pre-processor (static,
// type-only, re-exports and dynamic imports alike), the graph built over src/, and each rule a function
// from that graph (or a file's syntax tree) to the list of what breaks it, every entry naming the file,
// the line and the import. Pure, so __tests__/repo/structure.test.ts can prove each check fails on a small
// graph made to break it before trusting it on the real one.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import ts from 'typescript';

/** The folders of src/, lowest first: a file imports from its own folder or one to its left. */
export const LAYERS = ['core', 'rules', 'adapters', 'report', 'pipeline', 'fences', 'action', 'entries'] as const;
export type Layer = (typeof LAYERS)[number];

/** One import of one file: `to` a path under src/ (`core/errors.ts`), or the module named as written (`node:fs`). */
export interface Import {
  from: string;
  to: string;
  line: number;
  /** `to` is a file of src/ */
  internal: boolean;
}

/** Every src/ file (its path under src/) with its imports. */
export type Graph = Map<string, Import[]>;

/** The folder a file under src/ belongs to: its first directory, or `entries` for the files at the top. */
export function layerOf(file: string): Layer | undefined {
  const [head, ...rest] = file.split('/');
  if (rest.length === 0) return 'entries';
  return (LAYERS as readonly string[]).includes(head) ? (head as Layer) : undefined;
}

/** The imports of one file's text, resolved against the set of files of src/ (`.js` specifiers name `.ts` files). */
export function importsOf(file: string, text: string, files: ReadonlySet<string>): Import[] {
  const info = ts.preProcessFile(text, true, true);
  return info.importedFiles.map((ref) => {
    const line = text.slice(0, ref.pos).split('\n').length;
    if (!ref.fileName.startsWith('.')) return { from: file, to: ref.fileName, line, internal: false };
    const joined = posix.normalize(posix.join(posix.dirname(file), ref.fileName));
    const candidates = [joined.replace(/\.js$/, '.ts'), `${joined}.ts`, `${joined}/index.ts`, joined];
    const to = candidates.find((c) => files.has(c)) ?? joined;
    return { from: file, to, line, internal: true };
  });
}

/** The graph of src/ as it is on disk. */
export function readGraph(srcDir: string): { graph: Graph; texts: Map<string, string> } {
  const texts = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.ts')) texts.set(relative(srcDir, p).split('\\').join('/'), readFileSync(p, 'utf8'));
    }
  };
  walk(srcDir);
  const files = new Set(texts.keys());
  const graph: Graph = new Map([...texts].map(([file, text]) => [file, importsOf(file, text, files)]));
  return { graph, texts };
}

const where = (i: Import): string => `src/${i.from}:${i.line} imports ${i.internal ? `src/${i.to}` : `'${i.to}'`}`;

/** Imports that run back up the layers (types and dynamic imports included), or into no layer at all. */
export function upwardImports(graph: Graph): string[] {
  const out: string[] = [];
  for (const imports of graph.values()) {
    for (const i of imports) {
      if (!i.internal) continue;
      const from = layerOf(i.from);
      const to = layerOf(i.to);
      if (!from || !to) {
        out.push(`${where(i)}: ${!from ? i.from : i.to} is in no folder of the layers (${LAYERS.join(' < ')})`);
        continue;
      }
      if (LAYERS.indexOf(to) > LAYERS.indexOf(from)) out.push(`${where(i)}: ${from}/ may not import ${to}/ (${LAYERS.join(' < ')})`);
    }
  }
  return out;
}

/** Every import cycle, each named by its files in the order the imports run, back to the first. */
export function importCycles(graph: Graph): string[] {
  const edges = new Map<string, string[]>();
  for (const [file, imports] of graph) {
    edges.set(file, [...new Set(imports.filter((i) => i.internal && graph.has(i.to)).map((i) => i.to))].sort());
  }
  // Tarjan's strongly connected components: a component of more than one file, or a file importing itself, holds a cycle
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      components.push(component.sort());
    }
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  const out: string[] = [];
  for (const component of components) {
    const first = component[0];
    if (component.length === 1 && !(edges.get(first) ?? []).includes(first)) continue;
    out.push(
      `import cycle: ${cycleThrough(first, new Set(component), edges)
        .map((f) => `src/${f}`)
        .join(' → ')}`,
    );
  }
  return out.sort();
}

/** One cycle from `start` back to it, inside its component (a breadth-first search for the shortest). */
function cycleThrough(start: string, component: ReadonlySet<string>, edges: ReadonlyMap<string, string[]>): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of edges.get(v) ?? []) {
      if (!component.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(cameFrom.get(path[0])!);
        return [...path, start];
      }
      if (!cameFrom.has(w)) {
        cameFrom.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

/** Imports of `to` from any file but `allowed` (e.g. the runner protocol, imported by the masking port alone). */
export function onlyImporter(graph: Graph, to: string, allowed: string): string[] {
  const out: string[] = [];
  for (const imports of graph.values())
    for (const i of imports) if (i.internal && i.to === to && i.from !== allowed) out.push(`${where(i)}: only src/${allowed} may`);
  return out;
}

/** Imports from files under `fromDir` of files under `toDir` (e.g. an adapter importing a rule: an adapter never decides). */
export function forbiddenImports(graph: Graph, fromDir: string, toDir: string, why: string): string[] {
  const out: string[] = [];
  for (const [file, imports] of graph) {
    if (!file.startsWith(`${fromDir}/`)) continue;
    for (const i of imports) if (i.internal && i.to.startsWith(`${toDir}/`)) out.push(`${where(i)}: ${why}`);
  }
  return out;
}

/** Imports from files under `dir` of anything outside it (e.g. core/model/ imports only core/model/). */
export function importsLeaving(graph: Graph, dir: string, why: string): string[] {
  const out: string[] = [];
  for (const [file, imports] of graph) {
    if (!file.startsWith(`${dir}/`)) continue;
    for (const i of imports) if (!i.internal || !i.to.startsWith(`${dir}/`)) out.push(`${where(i)}: ${why}`);
  }
  return out;
}

/**
 * The files of the start checks (docs/start-checks.md): each check's own file under `dir` (all but
 * the list, `list`), and the rules/ and report/ files a check imports (its rule, its words).
 */
export function startCheckFiles(graph: Graph, dir: string, list: string): Set<string> {
  const out = new Set<string>();
  for (const [file, imports] of graph) {
    if (!file.startsWith(`${dir}/`) || file === list) continue;
    out.add(file);
    for (const i of imports) if (i.internal && (i.to.startsWith('rules/') || i.to.startsWith('report/'))) out.add(i.to);
  }
  return out;
}

/** `file`'s imports of any file of `forbidden` (e.g. the scheduler importing one start check instead of the list). */
export function importsOfAny(graph: Graph, file: string, forbidden: ReadonlySet<string>, why: string): string[] {
  return (graph.get(file) ?? []).filter((i) => i.internal && forbidden.has(i.to)).map((i) => `${where(i)}: ${why}`);
}

/** Files longer than `max` lines, as `src/FILE: N lines (at most MAX)`: a file that long does more than one job. */
export function longFiles(texts: ReadonlyMap<string, string>, max: number): string[] {
  return [...texts]
    .map(([file, text]) => [file, text.split('\n').length - (text.endsWith('\n') ? 1 : 0)] as const)
    .filter(([, lines]) => lines > max)
    .map(([file, lines]) => `src/${file}: ${lines} lines (at most ${max})`);
}

/** Imports of the named modules (`node:fs` or `fs` alike) from files under one of `dirs`. */
export function moduleImports(graph: Graph, dirs: readonly string[], modules: readonly string[], why: string): string[] {
  const names = new Set(modules.flatMap((m) => [m, `node:${m}`]));
  const out: string[] = [];
  for (const [file, imports] of graph) {
    if (!dirs.some((d) => file.startsWith(`${d}/`))) continue;
    for (const i of imports) if (!i.internal && names.has(i.to)) out.push(`${where(i)}: ${why}`);
  }
  return out;
}

/** Where a file's syntax matches `find`, as `src/FILE:LINE: WHAT`. */
function syntaxHits(file: string, text: string, find: (node: ts.Node, source: ts.SourceFile) => string | undefined): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    const what = find(node, source);
    if (what) out.push(`src/${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}: ${what}`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

const isProcessEnv = (node: ts.Node): boolean =>
  ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'process' && node.name.text === 'env';

/** `process.env` read outside the files allowed to (a path, or a folder ending in `/`). */
export function envReaders(texts: ReadonlyMap<string, string>, allowed: readonly string[]): string[] {
  const ok = (file: string) => allowed.some((a) => (a.endsWith('/') ? file.startsWith(a) : file === a));
  // only a file whose text says `process.env` is parsed, to tell a read from a comment or a string
  return [...texts]
    .filter(([file, text]) => !ok(file) && text.includes('process.env'))
    .flatMap(([file, text]) => syntaxHits(file, text, (n) => (isProcessEnv(n) ? 'reads process.env' : undefined)));
}

const isRegExp = (n: ts.Node | undefined): boolean =>
  !!n &&
  (n.kind === ts.SyntaxKind.RegularExpressionLiteral ||
    (ts.isNewExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'RegExp'));

/**
 * Text parsed in files under `dirs`: `JSON.parse`, or a regular expression matched (`.match`,
 * `.matchAll`, `.exec`, `.test`). A regular expression that only rewrites text it builds (a pod name
 * made safe with `.replace`) parses nothing.
 */
export function textParsing(texts: ReadonlyMap<string, string>, dirs: readonly string[]): string[] {
  return [...texts]
    .filter(([file]) => dirs.some((d) => file.startsWith(`${d}/`)))
    .flatMap(([file, text]) =>
      syntaxHits(file, text, (n, source) => {
        if (!ts.isCallExpression(n) || !ts.isPropertyAccessExpression(n.expression)) return undefined;
        const { expression: receiver, name } = n.expression;
        if (ts.isIdentifier(receiver) && receiver.text === 'JSON' && name.text === 'parse') return 'JSON.parse';
        if (['match', 'matchAll', 'exec', 'test'].includes(name.text) && (isRegExp(receiver) || isRegExp(n.arguments[0])))
          return `text matched with a regular expression (${n.getText(source).slice(0, 60)})`;
        return undefined;
      }),
    );
}

/** A small graph from `{ file: [imported files] }`, for the checker's own tests. */
export function graphOf(spec: Record<string, string[]>): Graph {
  return new Map(
    Object.entries(spec).map(([from, tos]) => [from, tos.map((to, k) => ({ from, to, line: k + 1, internal: to.endsWith('.ts') }))]),
  );
}

export const SRC = join(import.meta.dirname, '..', '..', 'src');
