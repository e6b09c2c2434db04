// A gate's typed value in words (src/report/gates.ts): the object named (escaped onto one line, cut),
// what its test found said by type, classified cause or storage rule, and a value that carries no
// content cannot show any: every finding's words are the renderer's own vocabulary.
import { describe, expect, it } from 'vitest';
import { CEL_ERROR_CAUSES, CEL_RESULT_TYPES, STORAGE_RULES, type GateFinding, type GateValue } from '../../src/core/model/gates.js';
import { failingLine, findingText, gateLines, gateValueText } from '../../src/report/gates.js';

const failing = (finding: GateFinding, over: Partial<GateValue> = {}): GateValue => ({
  name: 'db',
  holds: false,
  kind: 'Cluster',
  selected: 1,
  failing: { count: 1, object: { kind: 'Cluster', namespace: 'db', name: 'pg' }, finding },
  ...over,
});

describe('a finding in words', () => {
  it('false, a number, a type, a storage rule', () => {
    expect(findingText({ type: 'boolean', value: false })).toBe('false');
    expect(findingText({ type: 'number', value: 3 })).toBe('returned the number 3, not a boolean');
    expect(findingText({ type: 'number' })).toBe('returned the number NaN or infinity, not a boolean');
    expect(findingText({ type: 'string' })).toBe('returned a string, not a boolean');
    expect(findingText({ type: 'map' })).toBe('returned a map, not a boolean');
    expect(findingText({ type: 'null' })).toBe('returned null, not a boolean');
    expect(findingText({ type: 'storage', rule: 'pv-failed' })).toBe('phase Failed');
    expect(findingText({ type: 'storage', rule: 'attach-error' })).toBe('status.attachError is set');
    expect(findingText({ type: 'storage', rule: 'robustness-degraded' })).toBe('robustness degraded');
  });

  it('an error by its cause, with the details the rule kept', () => {
    expect(findingText({ type: 'error', cause: 'missing-field', field: 'status' })).toBe('error: field not found: status');
    expect(findingText({ type: 'error', cause: 'missing-field' })).toBe('error: field not found');
    expect(findingText({ type: 'error', cause: 'no-overload', operator: '_>_', types: ['string', 'int'] })).toBe(
      'error: no matching overload for _>_ applied to (string, int)',
    );
    expect(findingText({ type: 'error', cause: 'type-mismatch', types: ['bool', 'string'] })).toBe(
      'error: type mismatch: expected bool, got string',
    );
    expect(findingText({ type: 'error', cause: 'conversion' })).toBe('error: a conversion failed');
  });

  it('every declared type, cause and rule has words of its own, none empty', () => {
    const all: GateFinding[] = [
      ...CEL_RESULT_TYPES.map((type) => ({ type })),
      ...CEL_ERROR_CAUSES.map((cause): GateFinding => ({ type: 'error', cause })),
      ...STORAGE_RULES.map((rule): GateFinding => ({ type: 'storage', rule })),
    ];
    const words = all.map(findingText);
    expect(words.every((w) => w && !w.includes('undefined'))).toBe(true);
    expect(new Set(words).size).toBe(all.length);
  });
});

describe('a gate value in words', () => {
  it('holds: how many it selected; fails: the first object, what it found, how many more', () => {
    expect(gateValueText({ name: 'db', holds: true, kind: 'Cluster', selected: 0 })).toBe('no Cluster selected');
    expect(gateValueText({ name: 'db', holds: true, kind: 'Volume', selected: 3 })).toBe('3 Volumes, all hold');
    expect(gateValueText(failing({ type: 'string' }))).toBe('Cluster db/pg: returned a string, not a boolean');
    const more = failing({ type: 'storage', rule: 'robustness-degraded' }, { kind: 'Volume', selected: 5 });
    more.failing = { ...more.failing!, count: 3, object: { kind: 'Volume', namespace: 'longhorn-system', name: 'pvc-1' } };
    expect(gateValueText(more)).toBe('Volume longhorn-system/pvc-1: robustness degraded (and 2 more of 5)');
    expect(gateValueText({ name: 'db', holds: false, kind: 'Cluster', unread: 'forbidden' })).toBe(
      'could not be read: the listing failed (forbidden)',
    );
  });

  it("an object's name is cluster text: folded onto one line, never cut (a cut before the masking port could split a secret)", () => {
    const v = failing({ type: 'boolean', value: false });
    const long = `a${'x'.repeat(251)}b`; // a DNS subdomain's most: 253
    v.failing = { ...v.failing!, object: { kind: 'Cluster', name: `${long}\nc` } };
    expect(gateValueText(v)).toBe(`Cluster ${long} c: false`);
  });

  it('the lines: one per gate, and the failing ones in one line', () => {
    const values = [{ name: 'storage/persistentvolumes', holds: true, kind: 'PersistentVolume', selected: 2 }, failing({ type: 'list' })];
    expect(gateLines(values)).toEqual([
      'health gate storage/persistentvolumes: holds (2 PersistentVolumes, all hold)',
      'health gate db: does not hold (Cluster db/pg: returned a list, not a boolean)',
    ]);
    expect(failingLine(values)).toBe('db: Cluster db/pg: returned a list, not a boolean');
    expect(gateLines([])).toEqual(['health gates: none to check (no gate kind is served)']);
  });
});
