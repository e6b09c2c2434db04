// The health gates' rules (docs/gates.md): given the objects one listing found and the gates, which
// hold, which do not, and why, as data (GateValue; src/report/gates.ts says it in words). Pure: objects
// in, values out. A value names the first failing object (kind, namespace, name) and a typed finding,
// never the object's content (src/rules/gateFinding.ts, docs/gates.md "What a gate's value says").
//
// A gate holds when every object it selects (its kind, its namespace, its label selector) satisfies
// it; a gate that selects no object holds ("no object violates it": a cluster without a PVC has no
// lost PVC). A CEL gate is satisfied by an object only when its expression evaluates to the boolean
// `true`: false, another type, or an error (a missing field: `field not found`) is not, and the error's
// classified cause is the gate's value, so a typo in a field name holds the roll back rather than waving it through.
// The object is bound as `self`, as Kubernetes binds it in a CRD's x-kubernetes-validations rules
// (src/core/cel.ts).
//
// The built-in storage gates (`storage-gate`), each from the kind's own API types:
// - PersistentVolume: `status.phase` is not `Failed` (core/v1 PersistentVolumePhase: VolumeFailed,
//   "used for PersistentVolumes that failed to be correctly recycled or deleted after being released").
// - PersistentVolumeClaim: `status.phase` is not `Lost` (core/v1 ClaimLost: "the claim lost its
//   underlying PersistentVolume").
// - VolumeAttachment (storage.k8s.io/v1): neither `status.attachError` nor `status.detachError` is set
//   (VolumeAttachmentStatus: "the last error encountered during attach/detach operation, if any";
//   the external-attacher clears it once the operation succeeds).
// - Longhorn Volume (longhorn.io/v1beta2): `status.robustness` is not `degraded` nor `faulted`
//   (longhorn-manager k8s/pkg/apis/longhorn/v1beta2/volume.go VolumeRobustness; `unknown` is a
//   detached volume's and holds).
import { matchesLabels, parseLabelSelector } from '../core/labelSelector.js';
import type { CelOutcome, GateFinding, GateKind, GateObject, GateSpec, GateValue } from '../core/model/gates.js';
import { celFinding } from './gateFinding.js';

/** The built-in storage gates, in the order they are checked and shown. */
export const STORAGE_GATES: readonly GateSpec[] = [
  { name: 'storage/persistentvolumes', group: '', kind: 'PersistentVolume' },
  { name: 'storage/persistentvolumeclaims', group: '', kind: 'PersistentVolumeClaim' },
  { name: 'storage/volumeattachments', group: 'storage.k8s.io', kind: 'VolumeAttachment' },
  { name: 'storage/longhorn-volumes', group: 'longhorn.io', kind: 'Volume' },
];

const field = (o: Record<string, unknown>, ...path: string[]): unknown =>
  path.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), o);

/**
 * The storage rule a storage object breaks, or undefined when it is fine. The rule is said, never the
 * object's words: a PV's `status.message`, an attach error's `message` are the controller's or the CSI
 * driver's text and may quote anything (a Ceph key in a failed recycle, a token in an RPC error), so
 * they stay in the cluster, where `kubectl describe` shows them to whoever may read them.
 */
export function storageFinding(o: GateObject): GateFinding | undefined {
  const status = (k: string) => field(o.object, 'status', k);
  const rule = (r: Extract<GateFinding, { type: 'storage' }>['rule']): GateFinding => ({ type: 'storage', rule: r });
  switch (`${o.group}/${o.kind}`) {
    case '/PersistentVolume':
      return status('phase') === 'Failed' ? rule('pv-failed') : undefined;
    case '/PersistentVolumeClaim':
      return status('phase') === 'Lost' ? rule('pvc-lost') : undefined;
    case 'storage.k8s.io/VolumeAttachment': {
      const set = (k: string) => {
        const e = status(k);
        return e !== null && typeof e === 'object';
      };
      if (set('attachError')) return rule('attach-error');
      return set('detachError') ? rule('detach-error') : undefined;
    }
    case 'longhorn.io/Volume': {
      const r = status('robustness');
      return r === 'degraded' ? rule('robustness-degraded') : r === 'faulted' ? rule('robustness-faulted') : undefined;
    }
    default:
      return undefined;
  }
}

/** A gate's test of one object: undefined when it is satisfied, else why not (typed). */
export type ObjectTest = (o: GateObject) => GateFinding | undefined;

/**
 * The test of a gate: a built-in storage rule, or its CEL expression as `compile` (src/core/cel.ts's
 * compileCel, loaded by the caller only when a gate has one) compiles it once.
 */
export function gateTest(spec: GateSpec, compile?: (expression: string) => (object: Record<string, unknown>) => CelOutcome): ObjectTest {
  const expression = spec.expression;
  if (expression === undefined) return storageFinding;
  if (!compile) throw new Error(`gate "${spec.name}" has an expression but no CEL compiler was given`);
  const test = compile(expression);
  return (o) => celFinding(test(o.object), expression);
}

const sameKind = (a: GateKind, b: GateKind) => a.group === b.group && a.kind === b.kind;

/** The objects `spec` selects: its kind, its namespace when given, its label selector when given. */
export function selectedBy(spec: GateSpec, objects: readonly GateObject[]): GateObject[] {
  const selector = spec.selector ? parseLabelSelector(spec.selector) : undefined;
  return objects.filter(
    (o) =>
      sameKind(o, spec) &&
      (spec.namespace === undefined || o.namespace === spec.namespace) &&
      (!selector || matchesLabels(selector, o.labels)),
  );
}

/** One gate's value over one listing: holds when no selected object fails its test; else the first that fails, and why. */
export function judgeGate(spec: GateSpec, test: ObjectTest, objects: readonly GateObject[]): GateValue {
  const mine = selectedBy(spec, objects);
  let first: { o: GateObject; finding: GateFinding } | undefined;
  let count = 0;
  for (const o of mine) {
    const finding = test(o);
    if (finding === undefined) continue;
    count++;
    first ??= { o, finding };
  }
  const value = { name: spec.name, kind: spec.kind, selected: mine.length };
  if (!first) return { ...value, holds: true };
  const { kind, namespace, name } = first.o;
  return {
    ...value,
    holds: false,
    failing: { count, object: { kind, ...(namespace ? { namespace } : {}), name }, finding: first.finding },
  };
}

/** Every gate's value when the listing itself failed: none holds, each with the failure's classified cause. */
export function unreadGates(specs: readonly GateSpec[], cause: string): GateValue[] {
  return specs.map((s) => ({ name: s.name, holds: false, kind: s.kind, unread: cause }));
}
