// Data read from the cluster that the pure rules judge: the run Lease, the PodDisruptionBudgets and pod
// labels that name what blocked a drain, etcd's members, status and alarms. Defined here, low, so the
// rules need no adapter; the adapters re-export what their callers use (src/adapters/types.ts).
// Plain data, no I/O.

/** A coordination.k8s.io/v1 Lease, as far as the run lock reads it. */
export interface LeaseState {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  /** empty when free */
  holderIdentity: string;
  leaseDurationSeconds?: number;
  /** MicroTime strings as stored (RFC 3339 with 6 fractional digits) */
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** A Kubernetes label selector (`matchLabels` and `matchExpressions`), as a PodDisruptionBudget carries it. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

/** A policy/v1 PodDisruptionBudget, as far as naming what blocked a drain needs it. */
export interface PdbState {
  namespace: string;
  name: string;
  /** undefined: the PDB has no selector (it selects nothing) */
  selector?: LabelSelector;
  status: { disruptionsAllowed: number; currentHealthy: number; desiredHealthy: number };
  /**
   * optional, what the unsatisfiable-drain rule (src/rules/unsatisfiableDrain.ts) reads besides:
   * `spec.minAvailable` / `spec.maxUnavailable` as written (a number or a percentage like "100%"),
   * `spec.unhealthyPodEvictionPolicy`, `metadata.generation`, `status.observedGeneration`,
   * `status.expectedPods`. Absent when not written (a reader that needs one then knows nothing).
   */
  minAvailable?: number | string;
  maxUnavailable?: number | string;
  unhealthyPodEvictionPolicy?: string;
  generation?: number;
  observedGeneration?: number;
  expectedPods?: number;
}

/** A pod's name and labels (what a PDB selector is matched against). */
export interface PodLabels {
  namespace: string;
  name: string;
  labels: Record<string, string>;
}

export interface EtcdMemberStatus {
  /** the NODE column (the address we asked) */
  node: string;
  memberId: string;
  learner: boolean;
  errors: string;
}

export interface EtcdAlarm {
  node: string;
  memberId: string;
  alarm: string;
}

/**
 * One entry of etcd's member list (`talosctl etcd members`, MachineService.EtcdMemberList): etcd's own
 * record of who votes, independent of the Kubernetes Nodes (docs/talos-facts.md#t18-etcd-membership).
 */
export interface EtcdMember {
  /** 16 lower-case hex digits, as `etcd status` and `etcd remove-member` write it */
  id: string;
  /** the member's name (on Talos the machine's hostname); '' while the member has not started */
  name: string;
  peerUrls: string[];
  clientUrls: string[];
  learner: boolean;
}
