// The fakes' applier must itself follow docs/kubernetes-facts.md#k5-json-patch-semantics, or the rule and pipeline tests that
// run patches through it (__tests__/rules/claimApply.test.ts, FakeKube) prove nothing.
import { describe, expect, it } from 'vitest';
import type { JsonPatchOp } from '../../src/core/model/patch.js';
import { applyJsonPatch, normalize, PatchRejected } from './jsonPatch.js';

const doc = {
  metadata: { name: 'n', labels: { 'x/y': 'a', 'a~b': 'c' } },
  spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] },
};

describe('applyJsonPatch follows the apiserver', () => {
  const rows: Array<{ name: string; ops: JsonPatchOp[]; ok: boolean; doc?: unknown }> = [
    { name: 'escape ~1 addresses a key with /', ops: [{ op: 'test', path: '/metadata/labels/x~1y', value: 'a' }], ok: true },
    { name: 'escape ~0 addresses a key with ~', ops: [{ op: 'test', path: '/metadata/labels/a~0b', value: 'c' }], ok: true },
    { name: 'add below a missing parent fails', ops: [{ op: 'add', path: '/metadata/annotations/k', value: 'v' }], ok: false },
    { name: 'add of a whole missing map works', ops: [{ op: 'add', path: '/metadata/annotations', value: { k: 'v' } }], ok: true },
    { name: 'remove of a missing key fails', ops: [{ op: 'remove', path: '/metadata/labels/nope' }], ok: false },
    { name: 'replace of a missing key acts like add (v4)', ops: [{ op: 'replace', path: '/metadata/labels/new', value: 'v' }], ok: true },
    { name: 'test of a missing key with null passes', ops: [{ op: 'test', path: '/metadata/labels/nope', value: null }], ok: true },
    { name: 'test of a missing key with a value fails', ops: [{ op: 'test', path: '/metadata/labels/nope', value: '' }], ok: false },
    {
      name: 'test whose parent is missing fails even with null',
      ops: [{ op: 'test', path: '/metadata/annotations/k', value: null }],
      ok: false,
    },
    { name: 'test false on an absent bool fails (omitempty)', ops: [{ op: 'test', path: '/spec/unschedulable', value: false }], ok: false },
    { name: 'test null on an absent bool passes', ops: [{ op: 'test', path: '/spec/unschedulable', value: null }], ok: true },
    { name: 'test of an existing value with null fails', ops: [{ op: 'test', path: '/metadata/name', value: null }], ok: false },
    { name: 'arrays compare in order', ops: [{ op: 'test', path: '/spec/taints', value: [{ effect: 'NoSchedule', key: 'k' }] }], ok: true },
    {
      name: 'arrays with an extra element differ',
      ops: [
        {
          op: 'test',
          path: '/spec/taints',
          value: [
            { key: 'k', effect: 'NoSchedule' },
            { key: 'j', effect: 'NoSchedule' },
          ],
        },
      ],
      ok: false,
    },
    {
      name: 'objects with an extra key differ',
      ops: [{ op: 'test', path: '/spec/taints/0', value: { key: 'k', effect: 'NoSchedule', value: 'v' } }],
      ok: false,
    },
    { name: 'add into an array past its end fails', ops: [{ op: 'add', path: '/spec/taints/2', value: {} }], ok: false },
  ];
  it.each(rows)('$name', ({ ops, ok }) => {
    if (ok) expect(() => applyJsonPatch(doc, ops)).not.toThrow();
    else expect(() => applyJsonPatch(doc, ops)).toThrow(PatchRejected);
  });

  it('is atomic: a failing op leaves nothing written and the input untouched', () => {
    const before = structuredClone(doc);
    expect(() =>
      applyJsonPatch(doc, [
        { op: 'add', path: '/metadata/labels/z', value: '1' },
        { op: 'test', path: '/metadata/name', value: 'other' },
      ]),
    ).toThrow(PatchRejected);
    expect(doc).toEqual(before);
  });

  it('normalizes like the server: unschedulable=false and an empty taint list disappear', () => {
    const out = applyJsonPatch(doc, [
      { op: 'add', path: '/spec/unschedulable', value: false },
      { op: 'remove', path: '/spec/taints/0' },
    ]);
    // spec is a struct on the server: it stays as {} (so `test /spec/unschedulable null` still finds its parent)
    expect(out).toEqual({ metadata: doc.metadata, spec: {} });
    expect(() => applyJsonPatch(out, [{ op: 'test', path: '/spec/unschedulable', value: null }])).not.toThrow();
    expect(normalize({ a: { b: '', c: [], d: {}, e: null, f: 0 } })).toEqual({ a: { f: 0 } });
  });
});
