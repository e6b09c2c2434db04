// Comments and docs point only inside the repository: no path to notes kept beside it, no absolute
// path of a build machine, and every `docs/<file>.md#<anchor>` names a file and heading that exist.
// Facts the code relies on live in docs/talos-facts.md and docs/kubernetes-facts.md.
// Nothing is excluded, this file included: the patterns below are assembled so that it passes itself.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../runner/runAction.js';
import { anchorsOf } from './markdown.js';

const ROOTS = ['src', 'sim', 'demo', 'runner', 'bench', '__tests__', 'scripts', 'docs', 'README.md', 'action.yml'];
const SKIP_DIRS = new Set(['node_modules']);

const SHARED = 'shared' + '/reference';
const UP_SHARED = '..' + '/shared';
/** Absolute paths of a build or developer machine. */
const ABSOLUTE = new RegExp('(?<![\\w.~-])/(?:' + ['work', 'home', 'Users', 'root'].join('|') + ')/[\\w.-]');
/** An issue named by number: the word issue and a number, or a hash and a number (not an HTML entity like `&#39;`, not a URL fragment). */
const ISSUE = new RegExp('\\b[Ii]ssues? #?\\d+\\b|(?<![&\\w/#])#\\d+\\b');
/** `docs/<file>.md` with an optional `#anchor`, also as `../../docs/…` from a nested README. */
const DOC_POINTER = /\bdocs\/([\w.-]+\.md)(?:#([\w-]+))?/g;
/** A same-file link inside a Markdown document. */
const LOCAL_ANCHOR = /\]\(#([\w-]+)\)/g;

/** Every problem of one file; `docAnchors` gives a docs/ file's anchors, or undefined when it does not exist. */
export function problemsIn(file: string, text: string, docAnchors: (doc: string) => Set<string> | undefined): string[] {
  const problems: string[] = [];
  text.split('\n').forEach((line, i) => {
    const at = `${file}:${i + 1}`;
    if (line.includes(SHARED) || line.includes(UP_SHARED)) problems.push(`${at}: points at notes outside the repository: ${line.trim()}`);
    if (ABSOLUTE.test(line)) problems.push(`${at}: absolute machine path: ${line.trim()}`);
    if (ISSUE.test(line)) problems.push(`${at}: names an issue by number (say what it is instead): ${line.trim()}`);
    for (const m of line.matchAll(DOC_POINTER)) {
      const anchors = docAnchors(m[1]);
      if (!anchors) problems.push(`${at}: docs/${m[1]} does not exist`);
      else if (m[2] !== undefined && !anchors.has(m[2])) problems.push(`${at}: docs/${m[1]} has no heading for #${m[2]}`);
    }
    if (file.endsWith('.md')) {
      const own = anchorsOf(text);
      for (const m of line.matchAll(LOCAL_ANCHOR)) if (!own.has(m[1])) problems.push(`${at}: no heading for #${m[1]} in this file`);
    }
  });
  return problems;
}

function filesUnder(path: string): string[] {
  const abs = join(repoRoot, path);
  if (!existsSync(abs)) return [];
  if (statSync(abs).isFile()) return [abs];
  return readdirSync(abs, { withFileTypes: true }).flatMap((d) =>
    SKIP_DIRS.has(d.name) ? [] : filesUnder(relative(repoRoot, join(abs, d.name))),
  );
}

const docCache = new Map<string, Set<string> | undefined>();
function repoDocAnchors(doc: string): Set<string> | undefined {
  if (!docCache.has(doc)) {
    const p = join(repoRoot, 'docs', doc);
    docCache.set(doc, existsSync(p) ? anchorsOf(readFileSync(p, 'utf8')) : undefined);
  }
  return docCache.get(doc);
}

describe('the reference checker', () => {
  // Written in pieces, or this file would flag itself.
  const D = 'do' + 'cs/';
  const docs = (doc: string) =>
    doc === 'facts.md' ? anchorsOf('# Facts\n## T4 cri service events\n```\n## not a heading\n```\n') : undefined;

  it('reads anchors the way GitHub renders them, not from code blocks', () => {
    expect([...anchorsOf('# A b\n## T4 cri `service` events!\n## A b\n```\n## Code\n```\n<a id="x-y"></a>')]).toEqual([
      'a-b',
      't4-cri-service-events',
      'a-b-1',
      'x-y',
    ]);
  });

  it('flags each kind of pointer out of the repository, and accepts the good ones', () => {
    const bad = [
      `// see ${UP_SHARED}/design.md`,
      `// (${SHARED}/talos.md §3)`,
      '// built on /' + 'work/wt/main',
      '// iss' + 'ue 4 §1',
      '// fixed in #' + '12',
      `// ${D}facts.md#t5-missing`,
      `// ${D}gone.md`,
      `// ${D}facts.md#not-a-heading`,
    ];
    const good = [`// ${D}facts.md#t4-cri-service-events`, "'&#39;'", '// https://example.com/issues/10717', `// ${D}facts.md`];
    for (const line of bad) expect(problemsIn('x.ts', line, docs), line).toHaveLength(1);
    for (const line of good) expect(problemsIn('x.ts', line, docs), line).toEqual([]);
    expect(problemsIn('x.md', '# Top\n[up](#top) [gone](#nowhere)', docs)).toEqual(['x.md:2: no heading for #nowhere in this file']);
  });
});

describe('comments and docs point only inside the repository', () => {
  it('no file under src, sim, bench, __tests__, scripts, docs, nor README.md or action.yml points outside, or at a missing docs anchor', () => {
    const files = ROOTS.flatMap(filesUnder);
    expect(files.length).toBeGreaterThan(100);
    const problems: string[] = [];
    for (const file of files) {
      const buf = readFileSync(file);
      if (buf.includes(0)) continue; // binary
      problems.push(...problemsIn(relative(repoRoot, file), buf.toString('utf8'), repoDocAnchors));
    }
    expect(problems).toEqual([]);
  });
});
