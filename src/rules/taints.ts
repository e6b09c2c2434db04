// The taints as the claim reads them (a mechanical split of src/rules/claim.ts, which re-exports every
// name here): which taints Kubernetes' own controllers write (never compared, never a conflict), the
// boot-time lifecycle taints, and a scheduling taint's identity. Pure.
import type { NodeState, Taint } from '../core/model/node.js';

/** Added by the node lifecycle controller whenever spec.unschedulable is true: it mirrors the cordon. */
export const MIRROR_TAINT = 'node.kubernetes.io/unschedulable:NoSchedule';
/** Cluster autoscaler's soft "may delete this node" hint; it never changes where pods may run. */
export const ADVISORY_TAINT = 'DeletionCandidateOfClusterAutoscaler:PreferNoSchedule';
/**
 * The taints the node lifecycle controller writes from the node's conditions, and removes when the
 * condition clears (kubernetes:pkg/controller/nodelifecycle/node_lifecycle_controller.go,
 * nodeConditionToTaintKeyStatusMap: NoSchedule; not-ready and unreachable also NoExecute;
 * docs/kubernetes-facts.md#k15-condition-taints). They say what the kubelet reports, or that it stopped
 * reporting (a network blip of tens of seconds is enough), never that someone changed where pods may
 * run on purpose.
 */
export const CONDITION_TAINTS = {
  notReady: 'node.kubernetes.io/not-ready',
  unreachable: 'node.kubernetes.io/unreachable',
  memoryPressure: 'node.kubernetes.io/memory-pressure',
  diskPressure: 'node.kubernetes.io/disk-pressure',
  pidPressure: 'node.kubernetes.io/pid-pressure',
  networkUnavailable: 'node.kubernetes.io/network-unavailable',
} as const;
export const CONDITION_TAINT_KEYS: readonly string[] = Object.values(CONDITION_TAINTS);
/** Cilium's agent, while it is not ready on the node (at boot, or an agent restart): the CNI describing itself. */
export const CNI_AGENT_TAINT_KEY = 'node.cilium.io/agent-not-ready';

/**
 * THE one list of what Kubernetes' own controllers write to a node: the condition taints (by key, any
 * effect and value), the cordon mirror and the autoscaler's advisory taint (by key and effect, any
 * value), and the CNI agent's not-ready taint, the one lifecycle key the wait for a rebooted node
 * tolerates that is no condition taint (LIFECYCLE_TAINT_KEYS). None of them is evidence of another actor: every guard ignores them in both directions, at
 * the claim (its retry of a failed `test`, the adoption of a lost answer), before and after the drain,
 * beside the drain (its watch), before the credential patch and while waiting for the rebooted node,
 * because schedulingTaints leaves them out of what those compare. A memory-pressure taint the claim saw
 * and the drain's own evictions relieved, or an unreachable blip still on when the drain ends, is the
 * cluster describing the node, not someone working on it.
 */
export const CONTROLLER_TAINTS: ReadonlyArray<{ key: string; effect?: Taint['effect']; writer: string }> = [
  ...CONDITION_TAINT_KEYS.map((key) => ({ key, writer: 'condition taint' })),
  { key: CNI_AGENT_TAINT_KEY, writer: 'CNI agent taint' },
  { ...byKind(MIRROR_TAINT), writer: 'cordon-mirror taint' },
  { ...byKind(ADVISORY_TAINT), writer: 'autoscaler advisory taint' },
];

function byKind(kind: string): { key: string; effect: Taint['effect'] } {
  const [key, effect] = kind.split(':');
  return { key, effect };
}

/** The CONTROLLER_TAINTS entry a taint matches, if any. */
function controllerTaint(t: Taint): (typeof CONTROLLER_TAINTS)[number] | undefined {
  return CONTROLLER_TAINTS.find((c) => c.key === t.key && (c.effect === undefined || c.effect === t.effect));
}

/** Whether Kubernetes' own controllers wrote this taint (CONTROLLER_TAINTS): never another actor's. */
export function isControllerTaint(t: Taint): boolean {
  return controllerTaint(t) !== undefined;
}

/**
 * Taints Kubernetes/Cilium put on a node while it boots; expected to come and go around our reboot, and
 * gone before the node counts as back. All are controller taints (CONTROLLER_TAINTS): no guard counts them.
 */
export const LIFECYCLE_TAINT_KEYS = [CONDITION_TAINTS.notReady, CONDITION_TAINTS.unreachable, CNI_AGENT_TAINT_KEY] as const;

/** `key:effect`: how the two well-known taints are recognised, whatever value they carry. */
export function kindOf(t: Taint): string {
  return `${t.key}:${t.effect}`;
}

/**
 * A scheduling taint's identity, `key=value:effect` (`key:effect` without a value), the notation of
 * `kubectl taint`. The VALUE is part of it: a toleration with `operator: Equal` matches key, value
 * and effect, so `dedicated=batch:NoSchedule` → `dedicated=web:NoSchedule` changes which pods may run
 * on the node exactly as much as removing one taint and adding another. An absent value and an empty
 * one are the same taint: the apiserver stores neither (`omitempty`) and an Equal toleration with
 * value "" matches both. Unambiguous because the apiserver validates keys as qualified names and
 * values as label values, neither of which may contain `=` or `:`.
 */
export function taintId(t: Taint): string {
  return t.value !== undefined && t.value !== '' ? `${t.key}=${t.value}:${t.effect}` : `${t.key}:${t.effect}`;
}

/**
 * The taints someone set on purpose to decide where pods may run, as sorted, de-duplicated `taintId`
 * strings (key, value and effect). Excluded: every controller taint (CONTROLLER_TAINTS): the condition
 * taints (they follow the kubelet's reports), the cordon mirror (it follows spec.unschedulable, which is
 * compared on its own, and it appears a moment after our own cordon) and the autoscaler's advisory
 * PreferNoSchedule taint (it never blocks scheduling; its value is a timestamp the autoscaler rewrites).
 * A set comparison of this list is what "someone else changed the node's scheduling" means for the
 * claim retry and every guard, which all use it.
 */
export function schedulingTaints(taints: Taint[]): string[] {
  const ids = new Set(taints.filter((t) => !isControllerTaint(t)).map(taintId));
  return [...ids].sort();
}

/** Which of the boot-time lifecycle taints the node carries (keys, any effect), in a fixed order. */
export function lifecycleTaints(node: NodeState): string[] {
  const present = new Set(node.taints.map((t) => t.key));
  return LIFECYCLE_TAINT_KEYS.filter((k) => present.has(k));
}
