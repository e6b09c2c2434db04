// The health gates' rules (docs/gates.md): given the objects one listing found and the gates, which
// hold, which do not, and the value a person reads. Pure: objects in, values out.
//
// A gate holds when every object it selects (its kind, its namespace, its label selector) satisfies
// it; a gate that selects no object holds ("no object violates it": a cluster without a PVC has no
// lost PVC). A CEL gate is satisfied by an object only when its expression evaluates to the boolean
// `true`: false, another type, or an error (a missing field: `no such key`) is not, and the error is
// the gate's value, so a typo in a field name holds the roll back rather than waving it through.
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
import type { GateKind, GateObject, GateSpec, GateValue } from '../core/model/gates.js';

/** The built-in storage gates, in the order they are checked and shown. */
export const STORAGE_GATES: readonly GateSpec[] = [
  { name: 'storage/persistentvolumes', group: '', kind: 'PersistentVolume' },
  { name: 'storage/persistentvolumeclaims', group: '', kind: 'PersistentVolumeClaim' },
  { name: 'storage/volumeattachments', group: 'storage.k8s.io', kind: 'VolumeAttachment' },
  { name: 'storage/longhorn-volumes', group: 'longhorn.io', kind: 'Volume' },
];

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const field = (o: Record<string, unknown>, ...path: string[]): unknown =>
  path.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), o);

/** Why a storage object is unhealthy (one line), or undefined when it is fine. */
export function storageProblem(o: GateObject): string | undefined {
  const status = (k: string) => field(o.object, 'status', k);
  switch (`${o.group}/${o.kind}`) {
    case '/PersistentVolume':
      return status('phase') === 'Failed' ? `phase Failed${reasonOf(o)}` : undefined;
    case '/PersistentVolumeClaim':
      return status('phase') === 'Lost' ? 'phase Lost' : undefined;
    case 'storage.k8s.io/VolumeAttachment': {
      const err = (k: string) => {
        const e = status(k);
        return e && typeof e === 'object' ? (str((e as Record<string, unknown>).message) ?? '(no message)') : undefined;
      };
      const attach = err('attachError');
      const detach = err('detachError');
      if (attach !== undefined) return `attach error: ${attach}`;
      return detach !== undefined ? `detach error: ${detach}` : undefined;
    }
    case 'longhorn.io/Volume': {
      const r = status('robustness');
      return r === 'degraded' || r === 'faulted' ? `robustness ${r}` : undefined;
    }
    default:
      return undefined;
  }
}

function reasonOf(o: GateObject): string {
  const m = str(field(o.object, 'status', 'message'));
  return m ? ` (${m})` : '';
}

/** A gate's test of one object: undefined when it is satisfied, else the reason (one line). */
export type ObjectTest = (o: GateObject) => string | undefined;

/**
 * The test of a gate: a built-in storage rule, or its CEL expression as `compile` (src/core/cel.ts's
 * compileCel, loaded by the caller only when a gate has one) compiles it once.
 */
export function gateTest(
  spec: GateSpec,
  compile?: (expression: string) => (object: Record<string, unknown>) => string | undefined,
): ObjectTest {
  if (spec.expression === undefined) return storageProblem;
  if (!compile) throw new Error(`gate "${spec.name}" has an expression but no CEL compiler was given`);
  const test = compile(spec.expression);
  return (o) => test(o.object);
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

const where = (o: GateObject) => `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;

/** One gate's value over one listing: holds when no selected object fails its test. */
export function judgeGate(spec: GateSpec, test: ObjectTest, objects: readonly GateObject[]): GateValue {
  const mine = selectedBy(spec, objects);
  const failing: Array<{ o: GateObject; why: string }> = [];
  for (const o of mine) {
    const why = test(o);
    if (why !== undefined) failing.push({ o, why });
  }
  if (failing.length === 0) {
    return {
      name: spec.name,
      holds: true,
      value: mine.length === 0 ? `no ${spec.kind} selected` : `${count(mine.length, spec.kind)}, all hold`,
    };
  }
  const first = `${where(failing[0].o)}: ${failing[0].why}`;
  const more = failing.length > 1 ? ` (and ${failing.length - 1} more of ${mine.length})` : '';
  return { name: spec.name, holds: false, value: `${first}${more}` };
}

const count = (n: number, kind: string) => `${n} ${kind}${n === 1 ? '' : 's'}`;

/** Every gate's value when the listing itself failed: none holds, each says why. */
export function unreadGates(specs: readonly GateSpec[], error: string): GateValue[] {
  return specs.map((s) => ({ name: s.name, holds: false, value: `could not be read: ${error}` }));
}

/** The gates that do not hold, one line each (`name: value`), for a log line or a stop's message. */
export function failingLine(values: readonly GateValue[]): string {
  return values
    .filter((v) => !v.holds)
    .map((v) => `${v.name}: ${v.value}`)
    .join('; ');
}
