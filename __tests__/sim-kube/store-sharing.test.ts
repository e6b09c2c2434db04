// The twin's write path shares instead of copying where nobody can tell (sim/kube/store.ts, api.ts,
// mergepatch.ts): a caller's answer is still its own, a stored object changes only by a write, a no-op
// write is still found by the canonical encoding, and the store keeps a handed-over object only when a
// JSON round trip would give it back unchanged.
import { describe, expect, it } from 'vitest';
import { Api } from '../../sim/kube/api.js';
import { canonical } from '../../sim/kube/json.js';
import { applyStrategicMergePatch } from '../../sim/kube/mergepatch.js';
import { isPlainJson } from '../../sim/kube/plainJson.js';
import { R } from '../../sim/kube/resources.js';
import { sameJson } from '../../sim/kube/sameJson.js';
import { Store } from '../../sim/kube/store.js';

function twin(): { store: Store; api: Api } {
  const store = new Store();
  const api = new Api(store);
  api.create(R.namespaces, '', { metadata: { name: 'kube-node-lease' } });
  api.create(R.nodes, '', {
    metadata: { name: 'n1', labels: { a: '1' }, annotations: { x: 'y' } },
    spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] },
    status: { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: '2026-12-01T10:00:00Z' }] },
  });
  return { store, api };
}

const stored = (store: Store) => JSON.stringify(store.peek(R.nodes, '', 'n1'));

describe('answers are the caller’s own', () => {
  it('mutating the answer of a PATCH of each type, a PUT, a GET or a LIST leaves the stored object as it was', () => {
    const { store, api } = twin();
    const answers = [
      api.patch(R.nodes, '', 'n1', undefined, 'json', '[{"op":"add","path":"/metadata/labels/b","value":"2"}]').body,
      api.patch(R.nodes, '', 'n1', undefined, 'merge', '{"metadata":{"labels":{"c":"3"}}}').body,
      api.patch(R.nodes, '', 'n1', 'status', 'strategic', '{"status":{"conditions":[{"type":"Ready","status":"False"}]}}').body,
      api.update(R.nodes, '', 'n1', undefined, { ...api.mustGet(R.nodes, '', 'n1'), spec: { unschedulable: true } }).body,
    ];
    const before = stored(store);
    for (const a of [...answers, api.mustGet(R.nodes, '', 'n1')]) {
      a.metadata.labels.mutated = 'yes';
      a.spec.taints = [];
      a.status.conditions[0].status = 'Mutated';
    }
    for (const item of api.list(R.nodes, '', {}).items) item.metadata = {};
    expect(stored(store)).toBe(before);
    expect(store.peek(R.nodes, '', 'n1').metadata.labels).toEqual({ a: '1', b: '2', c: '3' });
  });

  it('a write’s answer carries the new resourceVersion and equals the stored object', () => {
    const { store, api } = twin();
    const w = api.patch(R.nodes, '', 'n1', undefined, 'merge', '{"metadata":{"labels":{"c":"3"}}}');
    expect(w.body.metadata.resourceVersion).toBe(String(store.revision));
    expect(JSON.stringify(w.body)).toBe(stored(store));
    expect(w.body).toBe(w.body);
  });

  it('a strategic merge patch writes to neither the document nor the patch', () => {
    const doc = { a: { b: [{ name: 'x', v: 1 }], c: 'keep' }, d: ['s'] };
    const docText = JSON.stringify(doc);
    const out = applyStrategicMergePatch(doc, '{"a":{"b":[{"name":"x","v":2}],"c":null},"d":["t"]}', {
      'a.b': { strategy: 'merge', key: 'name' },
      d: { strategy: 'merge' },
    });
    expect(JSON.stringify(doc)).toBe(docText);
    expect(out).toEqual({ a: { b: [{ name: 'x', v: 2 }] }, d: ['s', 't'] });
  });
});

describe('the no-op rule compares canonical encodings', () => {
  it('a write equal apart from key order keeps the resourceVersion; any difference bumps it', () => {
    const { store, api } = twin();
    const rv = store.revision;
    api.patch(R.nodes, '', 'n1', undefined, 'merge', '{"metadata":{"labels":{"a":"1"}}}');
    expect(store.revision).toBe(rv);
    api.patch(R.nodes, '', 'n1', undefined, 'merge', '{"metadata":{"labels":{"a":"2"}}}');
    expect(store.revision).toBe(rv + 1);
  });

  it('sameJson agrees with canonical() on JSON values and on the values canonical() encodes oddly', () => {
    const fn = () => 1;
    const pairs: Array<[unknown, unknown]> = [
      [
        { a: 1, b: [1, 2] },
        { b: [1, 2], a: 1 },
      ],
      [{ a: 1 }, { a: 1, b: undefined }],
      [{ a: 1 }, { a: 2 }],
      [{ a: 1 }, { b: 1 }],
      [
        [1, 2],
        [1, 2, 3],
      ],
      [0, -0],
      ['1', 1],
      [null, false],
      [[undefined], [null]],
      [[NaN], [null]],
      [{ a: Infinity }, { a: null }],
      [{ a: new Date(0) }, { a: {} }],
      [{ a: fn }, { a: () => 2 }],
      [{ a: fn }, { a: 'x' }],
      [undefined, null],
      [{ constructor: 1 }, {}],
      [Object.assign(Object.create(null), { a: 1 }), { a: 1 }],
    ];
    for (const [a, b] of pairs) expect(sameJson(a, b), `${canonical(a)} vs ${canonical(b)}`).toBe(canonical(a) === canonical(b));
  });
});

describe('a handed-over object is kept only when the JSON round trip would not change it', () => {
  it('isPlainJson: JSON values yes; -0, NaN, undefined, holes, Dates, functions, toJSON, other prototypes no', () => {
    expect(isPlainJson({ a: [1, 'x', true, null, { b: 1.5 }] })).toBe(true);
    const odd = [
      { a: -0 },
      { a: NaN },
      { a: Infinity },
      { a: undefined },
      new Array(3) as unknown[],
      [undefined],
      { a: new Date(0) },
      { a: () => 1 },
      { toJSON: () => 1 },
      Object.create(null),
      Object.assign([1], { extra: 2 }),
      { a: 1n },
      { a: Symbol('s') },
    ];
    odd.forEach((v, i) => expect(isPlainJson(v), `value ${i}`).toBe(false));
  });

  it('a handed-over object with a value the round trip changes is stored as its round trip', () => {
    const { store } = twin();
    const obj = JSON.parse(stored(store));
    obj.metadata.labels = { a: '1', gone: undefined };
    obj.spec = { podCIDR: 'x', weight: -0 };
    store.update(R.nodes, obj, true);
    const kept = store.peek(R.nodes, '', 'n1');
    expect(kept).not.toBe(obj);
    expect(Object.keys(kept.metadata.labels)).toEqual(['a']);
    expect(Object.is(kept.spec.weight, 0)).toBe(true);
  });
});
