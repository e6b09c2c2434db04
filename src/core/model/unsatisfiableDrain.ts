// A drain that can never finish, as data: which PodDisruptionBudget (or which pair of them) holds
// which pods of the node, by which case of the rule (src/rules/unsatisfiableDrain.ts, docs/refused-drains.md).
// The unsatisfiable-drain start check's finding value and plan's forecast of it. Plain data, no I/O.

/**
 * The cases of the rule, each one way the eviction subresource refuses a pod's eviction for as long
 * as nobody but the drain acts:
 * - `max-unavailable-zero`: `maxUnavailable: 0` (or "0%"), every pod it selects healthy;
 * - `min-available-all`: `minAvailable` (a number or a percentage) that rounds up to every pod it expects, every one healthy;
 * - `several-budgets`: two or more budgets select the pod (the eviction subresource answers 500 to each eviction).
 */
export const UNSATISFIABLE_CASES = ['max-unavailable-zero', 'min-available-all', 'several-budgets'] as const;
export type UnsatisfiableCase = (typeof UNSATISFIABLE_CASES)[number];

/** One budget (or set of budgets) that holds pods of the node for good. */
export interface BlockingBudget {
  case: UnsatisfiableCase;
  /** `namespace/name` of the budget; several for `several-budgets`, sorted */
  budgets: string[];
  /** the budget's spec as written, one line (`maxUnavailable: 0`, `minAvailable: 100%`); absent for `several-budgets` */
  spec?: string;
  /** the budget's status as read (absent for `several-budgets`) */
  status?: { disruptionsAllowed: number; currentHealthy: number; desiredHealthy: number; expectedPods: number };
  /** `namespace/name` of the node's pods the drain would evict that it holds, sorted */
  pods: string[];
}

/** The node's drain can never finish: every budget that makes it so. */
export interface UnsatisfiableDrain {
  node: string;
  blocking: BlockingBudget[];
}
