// The health gates' data (docs/gates.md): the gates a run checks before each node starts, the kinds
// they read, and what one check found. Plain data, no I/O.

/** A kind as the apiserver serves it: `group` '' for the core group. */
export interface GateKind {
  group: string;
  kind: string;
  /** undefined: the version the apiserver prefers */
  version?: string;
}

/** A kind the cluster serves, as discovery names it (what `kubectl get` is asked for). */
export interface ServedKind extends GateKind {
  /** the plural resource name (`persistentvolumes`) */
  resource: string;
  version: string;
  namespaced: boolean;
}

/** One gate: the built-in storage ones (`storage/…`) or one of the `health-gates` input. */
export interface GateSpec extends GateKind {
  name: string;
  /** only objects of this namespace; undefined: every namespace (and cluster-scoped kinds) */
  namespace?: string;
  /** a label selector's text (src/core/labelSelector.ts grammar); undefined: every object */
  selector?: string;
  /** CEL over each object (`self`); absent for a built-in gate, whose rule is src/rules/gates.ts's */
  expression?: string;
}

/** One object as listed: its kind, where it is, and the whole object for the rules. */
export interface GateObject {
  group: string;
  kind: string;
  namespace?: string;
  name: string;
  labels: Record<string, string>;
  /** the object as the apiserver answered it (JSON) */
  object: Record<string, unknown>;
}

/** What one gate is now: holds, or not, with the value shown to a person (the first object that fails, or the error). */
export interface GateValue {
  name: string;
  holds: boolean;
  /** one line: `3 objects, all hold`, `Volume longhorn-system/pvc-1: robustness degraded`, `error: no such key: status` */
  value: string;
}
