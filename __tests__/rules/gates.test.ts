// The health gates' rules (src/rules/gates.ts): each storage condition, CEL over one object (a missing
// field is an error value, never true), selection by kind, namespace and label selector, and "every
// selected object must satisfy, none selected holds".
import { describe, expect, it } from 'vitest';
import type { GateObject, GateSpec } from '../../src/core/model/gates.js';
import { compileCel } from '../../src/core/cel.js';
import { failingLine, gateTest as ruleTest, judgeGate, STORAGE_GATES, storageProblem } from '../../src/rules/gates.js';

const gateTest = (spec: GateSpec) => ruleTest(spec, compileCel);

const obj = (
  group: string,
  kind: string,
  name: string,
  object: Record<string, unknown>,
  namespace?: string,
  labels: Record<string, string> = {},
): GateObject => ({
  group,
  kind,
  name,
  labels,
  object,
  ...(namespace ? { namespace } : {}),
});
const pv = (phase: string) => obj('', 'PersistentVolume', `pv-${phase}`, { status: { phase } });
const pvc = (phase: string) => obj('', 'PersistentVolumeClaim', `c-${phase}`, { status: { phase } }, 'apps');
const va = (status: Record<string, unknown>) => obj('storage.k8s.io', 'VolumeAttachment', 'csi-1', { status });
const lh = (robustness: string) => obj('longhorn.io', 'Volume', `pvc-${robustness}`, { status: { robustness } }, 'longhorn-system');
const storage = (name: string) => STORAGE_GATES.find((g) => g.name === name)!;

describe('storage rules', () => {
  it('a PersistentVolume is unhealthy in phase Failed only', () => {
    for (const p of ['Pending', 'Available', 'Bound', 'Released']) expect(storageProblem(pv(p))).toBeUndefined();
    expect(storageProblem(pv('Failed'))).toBe('phase Failed');
  });
  it('a PersistentVolumeClaim is unhealthy when Lost only', () => {
    for (const p of ['Pending', 'Bound']) expect(storageProblem(pvc(p))).toBeUndefined();
    expect(storageProblem(pvc('Lost'))).toBe('phase Lost');
  });
  it('a VolumeAttachment is unhealthy while its status carries an attach or a detach error', () => {
    expect(storageProblem(va({ attached: true }))).toBeUndefined();
    expect(storageProblem(va({ attached: false, attachError: { time: '2026-01-01T00:00:00Z', message: 'rpc error: timed out' } }))).toBe(
      'attach error: rpc error: timed out',
    );
    expect(storageProblem(va({ attached: true, detachError: { message: 'node gone' } }))).toBe('detach error: node gone');
  });
  it('a Longhorn volume is unhealthy when degraded or faulted; healthy and unknown (detached) hold', () => {
    expect(storageProblem(lh('healthy'))).toBeUndefined();
    expect(storageProblem(lh('unknown'))).toBeUndefined();
    expect(storageProblem(lh('degraded'))).toBe('robustness degraded');
    expect(storageProblem(lh('faulted'))).toBe('robustness faulted');
  });
  it('a storage gate judges only its own kind, and names the first failing object and how many more', () => {
    const g = storage('storage/longhorn-volumes');
    const objects = [pv('Failed'), lh('healthy'), lh('degraded'), { ...lh('faulted'), name: 'pvc-x' }];
    expect(judgeGate(g, gateTest(g), objects)).toEqual({
      name: 'storage/longhorn-volumes',
      holds: false,
      value: 'Volume longhorn-system/pvc-degraded: robustness degraded (and 1 more of 3)',
    });
    expect(judgeGate(g, gateTest(g), [lh('healthy')])).toEqual({ name: g.name, holds: true, value: '1 Volume, all hold' });
  });
});

const cr = (ready: unknown, ns = 'db', labels: Record<string, string> = { app: 'pg' }) =>
  obj('example.com', 'Cluster', `c-${String(ready)}-${ns}`, ready === undefined ? { spec: {} } : { status: { ready } }, ns, labels);
const gate = (over: Partial<GateSpec> = {}): GateSpec => ({
  name: 'db',
  kind: 'Cluster',
  group: 'example.com',
  expression: 'self.status.ready == true',
  ...over,
});

describe('CEL gates', () => {
  it('an object satisfies the gate only when the expression is the boolean true', () => {
    const t = gateTest(gate());
    expect(t(cr(true))).toBeUndefined();
    expect(t(cr(false))).toBe('false');
  });
  it('a missing field is an error value, not true (and not a silent false)', () => {
    const t = gateTest(gate());
    expect(t(cr(undefined))).toMatch(/^error: .*status/);
    expect(judgeGate(gate(), t, [cr(undefined)]).holds).toBe(false);
  });
  it('an expression that is not a boolean does not hold, and says what it was', () => {
    expect(gateTest(gate({ expression: 'self.metadata.name' }))(obj('example.com', 'Cluster', 'a', { metadata: { name: 'a' } }))).toBe(
      'not a boolean: "a"',
    );
  });
  it('lists, numbers and macros work over the object as JSON', () => {
    const t = gateTest(
      gate({ expression: "self.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True') && self.spec.replicas >= 2" }),
    );
    const o = (replicas: number, s: string) =>
      obj('example.com', 'Cluster', 'a', { spec: { replicas }, status: { conditions: [{ type: 'Ready', status: s }] } });
    expect(t(o(3, 'True'))).toBeUndefined();
    expect(t(o(1, 'True'))).toBe('false');
    expect(t(o(3, 'False'))).toBe('false');
  });
  it('every selected object must satisfy it; the namespace and the selector choose them; none selected holds', () => {
    const objects = [cr(true, 'db'), cr(false, 'other'), cr(false, 'db', { app: 'cache' })];
    expect(judgeGate(gate(), gateTest(gate()), objects).holds).toBe(false);
    expect(judgeGate(gate({ namespace: 'db' }), gateTest(gate()), objects).holds).toBe(false);
    const chosen = gate({ namespace: 'db', selector: 'app=pg' });
    expect(judgeGate(chosen, gateTest(chosen), objects)).toEqual({ name: 'db', holds: true, value: '1 Cluster, all hold' });
    const none = gate({ namespace: 'nowhere' });
    expect(judgeGate(none, gateTest(none), objects)).toEqual({ name: 'db', holds: true, value: 'no Cluster selected' });
  });
  it('the failing line names each gate that does not hold with its value', () => {
    expect(
      failingLine([
        { name: 'a', holds: true, value: 'x' },
        { name: 'b', holds: false, value: 'Cluster db/c: false' },
      ]),
    ).toBe('b: Cluster db/c: false');
  });
});
