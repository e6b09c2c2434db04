// The health gates' rules (src/rules/gates.ts): each storage condition (the rule, never the object's
// message), CEL over one object (a missing field is an error value, never true), selection by kind,
// namespace and label selector, and "every selected object must satisfy, none selected holds". The
// value is data: the first failing object and a typed finding (src/rules/gateFinding.ts, its own tests).
import { describe, expect, it } from 'vitest';
import type { GateObject, GateSpec } from '../../src/core/model/gates.js';
import { compileCel } from '../../src/core/cel.js';
import { gateTest as ruleTest, judgeGate, STORAGE_GATES, storageFinding, unreadGates } from '../../src/rules/gates.js';

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
    for (const p of ['Pending', 'Available', 'Bound', 'Released']) expect(storageFinding(pv(p))).toBeUndefined();
    expect(storageFinding(pv('Failed'))).toEqual({ type: 'storage', rule: 'pv-failed' });
    // the reclaimer's message is the controller's text and may quote anything: the rule is said, not it
    const failed = obj('', 'PersistentVolume', 'pv-1', { status: { phase: 'Failed', message: 'rbd: map failed: key=AQD3pVdlq==' } });
    expect(storageFinding(failed)).toEqual({ type: 'storage', rule: 'pv-failed' });
  });
  it('a PersistentVolumeClaim is unhealthy when Lost only', () => {
    for (const p of ['Pending', 'Bound']) expect(storageFinding(pvc(p))).toBeUndefined();
    expect(storageFinding(pvc('Lost'))).toEqual({ type: 'storage', rule: 'pvc-lost' });
  });
  it('a VolumeAttachment is unhealthy while its status carries an attach or a detach error (the rule is said, not its message)', () => {
    expect(storageFinding(va({ attached: true }))).toBeUndefined();
    expect(
      storageFinding(va({ attached: false, attachError: { time: '2026-01-01T00:00:00Z', message: 'rpc error: token=s3cr3t' } })),
    ).toEqual({
      type: 'storage',
      rule: 'attach-error',
    });
    expect(storageFinding(va({ attached: true, detachError: { message: 'node gone' } }))).toEqual({
      type: 'storage',
      rule: 'detach-error',
    });
    expect(storageFinding(va({ attached: true, detachError: {} }))).toEqual({ type: 'storage', rule: 'detach-error' });
  });
  it('a Longhorn volume is unhealthy when degraded or faulted; healthy and unknown (detached) hold', () => {
    expect(storageFinding(lh('healthy'))).toBeUndefined();
    expect(storageFinding(lh('unknown'))).toBeUndefined();
    expect(storageFinding(lh('degraded'))).toEqual({ type: 'storage', rule: 'robustness-degraded' });
    expect(storageFinding(lh('faulted'))).toEqual({ type: 'storage', rule: 'robustness-faulted' });
  });
  it('a storage gate judges only its own kind, and names the first failing object and how many more', () => {
    const g = storage('storage/longhorn-volumes');
    const objects = [pv('Failed'), lh('healthy'), lh('degraded'), { ...lh('faulted'), name: 'pvc-x' }];
    expect(judgeGate(g, gateTest(g), objects)).toEqual({
      name: 'storage/longhorn-volumes',
      holds: false,
      kind: 'Volume',
      selected: 3,
      failing: {
        count: 2,
        object: { kind: 'Volume', namespace: 'longhorn-system', name: 'pvc-degraded' },
        finding: { type: 'storage', rule: 'robustness-degraded' },
      },
    });
    expect(judgeGate(g, gateTest(g), [lh('healthy')])).toEqual({ name: g.name, holds: true, kind: 'Volume', selected: 1 });
  });
  it('a cluster-scoped object is named without a namespace; an unread listing gives each gate its classified cause', () => {
    const g = storage('storage/persistentvolumes');
    expect(judgeGate(g, gateTest(g), [pv('Failed')]).failing?.object).toEqual({ kind: 'PersistentVolume', name: 'pv-Failed' });
    expect(unreadGates([g], 'forbidden')).toEqual([{ name: g.name, holds: false, kind: 'PersistentVolume', unread: 'forbidden' }]);
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
    expect(t(cr(false))).toEqual({ type: 'boolean', value: false });
  });
  it('a missing field is an error value, not true (and not a silent false)', () => {
    const t = gateTest(gate());
    expect(t(cr(undefined))).toEqual({ type: 'error', cause: 'missing-field', field: 'status' });
    expect(judgeGate(gate(), t, [cr(undefined)]).holds).toBe(false);
  });
  it('an expression that is not a boolean does not hold, and says its type, never its value', () => {
    const secret = obj('example.com', 'Cluster', 'a', { status: { dsn: 'postgres://app:s3cr3t@pg/app' } });
    const t = gateTest(gate({ expression: 'self.status.dsn' }));
    expect(t(secret)).toEqual({ type: 'string' });
    expect(judgeGate(gate({ expression: 'self.status.dsn' }), t, [secret])).toEqual({
      name: 'db',
      holds: false,
      kind: 'Cluster',
      selected: 1,
      failing: { count: 1, object: { kind: 'Cluster', name: 'a' }, finding: { type: 'string' } },
    });
  });
  it('lists, numbers and macros work over the object as JSON', () => {
    const t = gateTest(
      gate({ expression: "self.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True') && self.spec.replicas >= 2" }),
    );
    const o = (replicas: number, s: string) =>
      obj('example.com', 'Cluster', 'a', { spec: { replicas }, status: { conditions: [{ type: 'Ready', status: s }] } });
    expect(t(o(3, 'True'))).toBeUndefined();
    expect(t(o(1, 'True'))).toEqual({ type: 'boolean', value: false });
    expect(t(o(3, 'False'))).toEqual({ type: 'boolean', value: false });
  });
  it('every selected object must satisfy it; the namespace and the selector choose them; none selected holds', () => {
    const objects = [cr(true, 'db'), cr(false, 'other'), cr(false, 'db', { app: 'cache' })];
    expect(judgeGate(gate(), gateTest(gate()), objects).holds).toBe(false);
    expect(judgeGate(gate({ namespace: 'db' }), gateTest(gate()), objects).holds).toBe(false);
    const chosen = gate({ namespace: 'db', selector: 'app=pg' });
    expect(judgeGate(chosen, gateTest(chosen), objects)).toEqual({ name: 'db', holds: true, kind: 'Cluster', selected: 1 });
    const none = gate({ namespace: 'nowhere' });
    expect(judgeGate(none, gateTest(none), objects)).toEqual({ name: 'db', holds: true, kind: 'Cluster', selected: 0 });
  });
});
