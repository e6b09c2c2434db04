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

/**
 * What a CEL expression made of one object, as src/core/cel.ts reads the library's answer. Internal:
 * the error's message may quote the object (`Unable to convert string '<a field's value>' to bool`), so
 * it is never shown; src/rules/gateFinding.ts turns it into a GateFinding, the only form that leaves.
 */
export type CelOutcome =
  | { type: 'boolean'; value: boolean }
  /** an int, uint or double, as a JavaScript number */
  | { type: 'number'; value: number }
  | { type: CelResultType }
  | { type: 'error'; message: string };

/** The kinds of a CEL result that is neither a boolean nor a number: the type is said, never the value. */
export const CEL_RESULT_TYPES = ['string', 'bytes', 'map', 'list', 'null', 'type', 'timestamp', 'duration', 'message'] as const;
export type CelResultType = (typeof CEL_RESULT_TYPES)[number];

/**
 * Why a CEL expression failed on an object, classified (src/rules/gateFinding.ts): the library's
 * message is never kept, as it may quote the object's content.
 */
export const CEL_ERROR_CAUSES = [
  'missing-field',
  'no-overload',
  'type-mismatch',
  'conversion',
  'index-out-of-range',
  'division-by-zero',
  'overflow',
  'regex',
  'duplicate-key',
  'other',
] as const;
export type CelErrorCause = (typeof CEL_ERROR_CAUSES)[number];

/** The built-in storage gates' rules (src/rules/gates.ts), one per way an object fails them. */
export const STORAGE_RULES = [
  'pv-failed',
  'pvc-lost',
  'attach-error',
  'detach-error',
  'robustness-degraded',
  'robustness-faulted',
] as const;
export type StorageRule = (typeof STORAGE_RULES)[number];

/**
 * Why one object does not satisfy a gate, typed: the type of what the expression returned (its value
 * only for a boolean or a number), a classified error, or the storage rule it broke. Never the
 * content of a cluster object (docs/gates.md "What a gate's value says"); the renderers
 * (src/report/gates.ts) turn it into words.
 */
export type GateFinding =
  /** the boolean `false` */
  | { type: 'boolean'; value: false }
  /** a number (absent: not finite) */
  | { type: 'number'; value?: number }
  | { type: CelResultType }
  | {
      type: 'error';
      cause: CelErrorCause;
      /** missing-field: the field's name, only when the expression itself spells it */
      field?: string;
      /** no-overload: the operator or function, as the library names it (`_>_`, `size`) */
      operator?: string;
      /** no-overload: the operands' types; type-mismatch: the type expected, then the type found */
      types?: string[];
    }
  | { type: 'storage'; rule: StorageRule };

/** The object a gate's value names: its identity, never its content. */
export interface GateObjectRef {
  kind: string;
  namespace?: string;
  name: string;
}

/**
 * What one gate is now, as data: holds or not, how many objects it selected, the first one that fails
 * it and why (typed), or why it could not be read. The words a person reads are src/report/gates.ts's.
 */
export interface GateValue {
  name: string;
  holds: boolean;
  /** the kind the gate reads */
  kind: string;
  /** how many objects it selected; absent when the listing could not be read */
  selected?: number;
  /** the selected objects that fail it: how many, the first (by listing order) and why */
  failing?: { count: number; object: GateObjectRef; finding: GateFinding };
  /** the listing failed: its classified cause (a FailureCause, src/core/errors.ts), never the tool's words */
  unread?: string;
}
