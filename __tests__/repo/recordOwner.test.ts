// A node's DecisionRecord has one writer: its NodeRun (the file named nodeRun.ts, wherever it lives).
// Every other module reads the record or calls a NodeRun method that says what happened; a field
// written from elsewhere splits the record's truth across files again. The compiler enforces most of
// this (NodeRun hands out a read-only view); this test also catches a record a module builds and then
// edits (plan mode, a helper that takes a DecisionRecord), by scanning src/ for writes to the fields
// the model declares.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const SRC = join(ROOT, 'src');
const OWNER = 'nodeRun.ts';

function tsFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) return tsFiles(p);
      return name.endsWith('.ts') ? [p] : [];
    });
}

/** The fields of `interface DecisionRecord`, read from the file that declares it (found by content, not path). */
function recordFields(files: string[]): string[] {
  for (const file of files) {
    const m = /export interface DecisionRecord \{([\s\S]*?)\n\}/.exec(readFileSync(file, 'utf8'));
    if (m) return [...m[1].matchAll(/^ {2}(\w+)\??:/gm)].map((f) => f[1]);
  }
  return [];
}

const MUTATORS = 'push|pop|shift|unshift|splice|sort|reverse|fill|copyWithin';

/** Lines of `text` that write one of `fields` on something named like a record (`record.x =`, `run.record.steps.push(`, `delete r.record.x`). */
function recordWrites(text: string, fields: string[]): string[] {
  const f = fields.join('|');
  const target = String.raw`\b\w*[rR]ecord\s*\.\s*(?:${f})\b`;
  const write = new RegExp(
    String.raw`${target}\s*(?:(?:[-+*/%?|&]|\*\*|\?\?|\|\||&&)?=(?!=)|\.\s*(?:${MUTATORS})\s*\(|\[[^\]]*\]\s*=(?!=))|\bdelete\s+[\w.]*?${target}`,
  );
  return text
    .split('\n')
    .map((line, i) => ({ line: line.trim(), n: i + 1 }))
    .filter(({ line }) => !line.startsWith('//') && !line.startsWith('*') && write.test(line))
    .map(({ line, n }) => `${n}: ${line}`);
}

describe('the DecisionRecord has one writer', () => {
  const files = tsFiles(SRC);
  const fields = recordFields(files);

  it('finds the fields of the record, and the scan recognizes each kind of write', () => {
    expect(fields).toEqual(expect.arrayContaining(['outcome', 'reason', 'steps', 'evidence', 'proof', 'claim', 'nextStep']));
    const writes = [
      "run.record.outcome = 'failed';",
      'record.reason += x;',
      'this.record.nextStep ??= s;',
      'run.record.steps.push(s);',
      'record.claim = { attempts: 1, conflicts: [] };',
      'delete run.record.proofUndecided;',
      'decisionRecord.steps[0] = s;',
    ];
    for (const w of writes) expect(recordWrites(w, fields), w).toHaveLength(1);
    const reads = ["if (run.record.outcome === 'failed') x();", 'const r = run.record.reason;', 'f(record.steps.length)'];
    for (const r of reads) expect(recordWrites(r, fields), r).toHaveLength(0);
  });

  it(`no module but ${OWNER} writes a DecisionRecord field`, () => {
    const owner = files.filter((f) => basename(f) === OWNER);
    expect(owner, `exactly one ${OWNER} under src/`).toHaveLength(1);
    const outside = files
      .filter((f) => basename(f) !== OWNER)
      .flatMap((f) => recordWrites(readFileSync(f, 'utf8'), fields).map((w) => `${relative(ROOT, f)}:${w}`));
    expect(outside).toEqual([]);
    // the owner does write it: the scan is not blind
    expect(recordWrites(readFileSync(owner[0], 'utf8'), fields).length).toBeGreaterThan(0);
  });
});
