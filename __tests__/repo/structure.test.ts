// The structure rules of src/ (src/README.md "Layers", docs/architecture.md "How the structure is
// checked") run as a test: the imports of every file, types and dynamic imports included, read with the
// TypeScript compiler (__tests__/repo/structure.ts); each failure names the file, the line and the import.
// Each check is first shown to fail on a small graph made to break it.
import { describe, expect, it } from 'vitest';
import {
  envReaders,
  forbiddenImports,
  graphOf,
  importCycles,
  importsLeaving,
  importsOf,
  importsOfAny,
  longFiles,
  moduleImports,
  onlyImporter,
  readGraph,
  SRC,
  startCheckFiles,
  textParsing,
  upwardImports,
} from './structure.js';

describe('the structure checker itself', () => {
  it('reads static, type-only, re-exported and dynamic imports with their lines, and resolves .js to the .ts file', () => {
    const files = new Set(['pipeline/run.ts', 'core/errors.ts', 'core/model/node.ts', 'adapters/github.ts', 'report/log.ts']);
    const text = [
      "import { a } from '../core/errors.js';",
      "import type { N } from '../core/model/node.js';",
      "export { b } from '../report/log.js';",
      "const g = await import('../adapters/github.js');",
      "import { readFileSync } from 'node:fs';",
    ].join('\n');
    expect(importsOf('pipeline/run.ts', text, files).map((i) => [i.to, i.line, i.internal])).toEqual([
      ['core/errors.ts', 1, true],
      ['core/model/node.ts', 2, true],
      ['report/log.ts', 3, true],
      ['adapters/github.ts', 4, true],
      ['node:fs', 5, false],
    ]);
  });

  it('names an import that runs back up, and a file in no layer', () => {
    const g = graphOf({ 'rules/a.ts': ['core/x.ts', 'pipeline/b.ts'], 'pipeline/b.ts': ['rules/a.ts'], 'core/x.ts': ['stray/y.ts'] });
    expect(upwardImports(g)).toEqual([
      'src/rules/a.ts:2 imports src/pipeline/b.ts: rules/ may not import pipeline/ (core < rules < adapters < report < pipeline < fences < action < entries)',
      'src/core/x.ts:1 imports src/stray/y.ts: stray/y.ts is in no folder of the layers (core < rules < adapters < report < pipeline < fences < action < entries)',
    ]);
  });

  it('names each import cycle by its files, in the order the imports run, one folder or several', () => {
    const g = graphOf({
      'report/summary.ts': ['report/summary/head.ts'],
      'report/summary/head.ts': ['report/summary.ts'],
      'core/a.ts': ['core/b.ts'],
      'core/b.ts': ['core/c.ts'],
      'core/c.ts': ['core/a.ts', 'core/d.ts'],
      'core/d.ts': [],
      'core/self.ts': ['core/self.ts'],
    });
    expect(importCycles(g)).toEqual([
      'import cycle: src/core/a.ts → src/core/b.ts → src/core/c.ts → src/core/a.ts',
      'import cycle: src/core/self.ts → src/core/self.ts',
      'import cycle: src/report/summary.ts → src/report/summary/head.ts → src/report/summary.ts',
    ]);
    expect(importCycles(graphOf({ 'core/a.ts': ['core/b.ts'], 'core/b.ts': [] }))).toEqual([]);
  });

  it('the folder rules: a sole importer, a forbidden folder, a folder that imports only itself, a module', () => {
    const g = graphOf({
      'action/masked.ts': ['action/runnerCommands.ts'],
      'action/main.ts': ['action/runnerCommands.ts'],
      'adapters/kube.ts': ['rules/claim.ts'],
      'core/model/node.ts': ['core/errors.ts', 'core/model/patch.ts'],
      'report/x.ts': ['node:fs', 'node:async_hooks'],
    });
    expect(onlyImporter(g, 'action/runnerCommands.ts', 'action/masked.ts')).toEqual([
      'src/action/main.ts:1 imports src/action/runnerCommands.ts: only src/action/masked.ts may',
    ]);
    expect(forbiddenImports(g, 'adapters', 'rules', 'an adapter never decides')).toEqual([
      'src/adapters/kube.ts:1 imports src/rules/claim.ts: an adapter never decides',
    ]);
    expect(importsLeaving(g, 'core/model', 'model only')).toEqual(['src/core/model/node.ts:1 imports src/core/errors.ts: model only']);
    expect(moduleImports(g, ['report'], ['fs'], 'no I/O')).toEqual(["src/report/x.ts:1 imports 'node:fs': no I/O"]);
  });

  it('the scheduler and the start checks: one check (its file, its rule, its words) imported by the scheduler is named, the list and the port are not', () => {
    const g = graphOf({
      'pipeline/scheduler.ts': ['core/model/startCheck.ts', 'pipeline/startChecks/windows.ts', 'rules/budget.ts', 'rules/schedule.ts'],
      'pipeline/startChecks/index.ts': ['pipeline/startChecks/windows.ts', 'pipeline/startChecks/budget.ts'],
      'pipeline/startChecks/windows.ts': ['core/model/startCheck.ts', 'rules/windows.ts', 'report/windows.ts'],
      'pipeline/startChecks/budget.ts': ['core/model/startCheck.ts', 'rules/budget.ts'],
      'pipeline/run.ts': ['pipeline/startChecks/index.ts', 'pipeline/scheduler.ts'],
    });
    const checks = startCheckFiles(g, 'pipeline/startChecks', 'pipeline/startChecks/index.ts');
    expect([...checks].sort()).toEqual([
      'pipeline/startChecks/budget.ts',
      'pipeline/startChecks/windows.ts',
      'report/windows.ts',
      'rules/budget.ts',
      'rules/windows.ts',
    ]);
    expect(importsOfAny(g, 'pipeline/scheduler.ts', checks, 'the scheduler asks the list')).toEqual([
      'src/pipeline/scheduler.ts:2 imports src/pipeline/startChecks/windows.ts: the scheduler asks the list',
      'src/pipeline/scheduler.ts:3 imports src/rules/budget.ts: the scheduler asks the list',
    ]);
    expect(importsOfAny(g, 'pipeline/run.ts', checks, 'the list only')).toEqual([]);
  });

  it('names a file over the line limit, counting its last line once', () => {
    const texts = new Map([
      ['pipeline/long.ts', 'a\nb\nc\nd\n'],
      ['pipeline/short.ts', 'a\nb\nc\n'],
      ['pipeline/noNewline.ts', 'a\nb\nc'],
    ]);
    expect(longFiles(texts, 3)).toEqual(['src/pipeline/long.ts: 4 lines (at most 3)']);
  });

  it('finds process.env outside the files allowed, and text parsing by its syntax (not in comments or strings)', () => {
    const texts = new Map([
      ['action/inputs.ts', 'const a = process.env.INPUT_X;'],
      [
        'pipeline/run.ts',
        "// JSON.parse in a comment, /x/ too\nconst s = 'JSON.parse(';\nconst v = JSON.parse(t);\nconst r = /^a+$/.test(t);\nconst n = t.replace(/[^a-z]/g, '-');\nconst e = process.env;",
      ],
    ]);
    expect(envReaders(texts, ['action/'])).toEqual(['src/pipeline/run.ts:6: reads process.env']);
    expect(textParsing(texts, ['pipeline'])).toEqual([
      'src/pipeline/run.ts:3: JSON.parse',
      'src/pipeline/run.ts:4: text matched with a regular expression (/^a+$/.test(t))',
    ]);
  });
});

describe('src/ keeps its structure', () => {
  const { graph, texts } = readGraph(SRC);

  it('reads the whole of src/', () => {
    expect(graph.size).toBeGreaterThan(150);
    expect(graph.get('pipeline/run.ts')?.some((i) => i.to === 'rules/budget.ts')).toBe(true);
  });

  it('no import runs back up the layers core < rules < adapters < report < pipeline < fences < action < entries', () => {
    expect(upwardImports(graph)).toEqual([]);
  });

  it('no import cycle, inside a folder or across folders', () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it('the folders’ own rules (src/README.md)', () => {
    expect([
      // the rules never call an adapter (the layers), and an adapter never decides
      ...forbiddenImports(graph, 'adapters', 'rules', 'an adapter never decides: nothing from rules/'),
      // the runner protocol is reached only through the masking port, so nothing is written unmasked
      ...onlyImporter(graph, 'action/runnerCommands.ts', 'action/masked.ts'),
      // the shared data imports only its own folder, one way
      ...importsLeaving(graph, 'core/model', 'core/model/ imports only other files of core/model/'),
      // plain data, pure decisions and pure renderers do no I/O
      ...moduleImports(
        graph,
        ['core', 'rules', 'report'],
        ['fs', 'fs/promises', 'child_process', 'http', 'https', 'http2', 'tls', 'dgram'],
        'core/, rules/ and report/ do no I/O',
      ),
      // the entries are one call each, into the shell
      ...[...graph]
        .filter(([file]) => !file.includes('/'))
        .flatMap(([, imports]) =>
          imports
            .filter((i) => !i.to.startsWith('action/'))
            .map((i) => `src/${i.from}:${i.line} imports ${i.to}: an entry imports only its action/ file`),
        ),
    ]).toEqual([]);
  });

  it('the scheduler imports no single start check, its rule or its words: only the list and the port (docs/start-checks.md)', () => {
    const checks = startCheckFiles(graph, 'pipeline/startChecks', 'pipeline/startChecks/index.ts');
    expect(checks.size).toBeGreaterThanOrEqual(4);
    expect(
      importsOfAny(graph, 'pipeline/scheduler.ts', checks, 'the scheduler asks the start checks through the port, never one of them'),
    ).toEqual([]);
  });

  it('no file of src/ is over 350 lines (a file that long does more than one job: split it by job)', () => {
    expect(longFiles(texts, 350)).toEqual([]);
  });

  it('only the shell reads process.env, but for exec.ts (a child’s environment) and the talosconfig lookup, as talosctl does it', () => {
    expect(envReaders(texts, ['action/', 'adapters/exec.ts', 'adapters/talos/api/talosconfig.ts'])).toEqual([]);
  });

  it('the pipeline and the fences modes never parse text (no JSON.parse, no regular expression matched): the adapters do', () => {
    expect(textParsing(texts, ['pipeline', 'fences'])).toEqual([]);
  });
});
