// The workloads the settle gate waits for, as the adapters read them and the rule judges them.

/** The controller kinds the settle gate waits for (Jobs, DaemonSets, mirror and bare pods are not waited for). */
export type WorkloadKind = 'Deployment' | 'ReplicaSet' | 'StatefulSet';

export interface WorkloadRef {
  kind: WorkloadKind;
  namespace: string;
  name: string;
}

/** `Kind namespace/name`: how a workload is named in logs, errors and the summary. */
export function workloadName(w: WorkloadRef): string {
  return `${w.kind} ${w.namespace}/${w.name}`;
}

export function workloadKey(w: WorkloadRef): string {
  return `${w.kind}/${w.namespace}/${w.name}`;
}

/** A pod as the settle gate needs it: where it runs and who controls it. */
export interface PodOwnerReading {
  namespace: string;
  name: string;
  nodeName: string;
  /** Pending, Running, Succeeded, Failed, Unknown */
  phase: string;
  /** the ownerReference with `controller: true` */
  controller?: { kind: string; name: string };
  /** carries `kubernetes.io/config.mirror` (a static pod's mirror: drain skips it) */
  mirror: boolean;
  /** has a `metadata.deletionTimestamp`: on its way out, no longer counted by its controller */
  terminating: boolean;
  /** its Ready condition is True */
  ready: boolean;
}

/** A pod as kubectl drain's filters judge it (src/rules/drainForecast.ts): the settle gate's reading and a little more. */
export interface DrainPodReading extends PodOwnerReading {
  /** the controller ownerReference's apiVersion (`apps/v1` for a DaemonSet drain recognises) */
  controllerApiVersion?: string;
  /** declares an emptyDir volume (local storage) */
  emptyDir: boolean;
  labels: Record<string, string>;
}

/** The flags the action drains with (src/adapters/kube/kubectl.ts): --ignore-daemonsets --delete-emptydir-data, never --force. */
export const ACTION_DRAIN_FLAGS = { ignoreDaemonSets: true, deleteEmptyDirData: true, force: false } as const;
export type DrainFlags = { ignoreDaemonSets: boolean; deleteEmptyDirData: boolean; force: boolean };

/**
 * The apiserver's answer to one dry-run eviction: allowed (201; or the pod is gone, which drain counts as
 * evicted), blocked by a PodDisruptionBudget (429, its message), or anything else (an error, its message).
 */
export type EvictionAnswer =
  { kind: 'allowed' } | { kind: 'gone' } | { kind: 'blocked'; message: string } | { kind: 'error'; message: string };

/**
 * A controller's spec and status as the apiserver returns them. The status fields are `omitempty`
 * int32s in apps/v1 (a zero is absent from the JSON): the parser reads an absent one as 0.
 */
export interface WorkloadStatus extends WorkloadRef {
  generation: number;
  /** spec.replicas (the apiserver defaults it to 1) */
  specReplicas: number;
  observedGeneration: number;
  replicas: number;
  readyReplicas: number;
  availableReplicas: number;
  /** Deployments only */
  updatedReplicas: number;
  /** Deployments only */
  unavailableReplicas: number;
  /** the ReplicaSet's controlling Deployment, when one */
  ownerDeployment?: string;
  /** Deployments: the Progressing condition's reason (`ProgressDeadlineExceeded` when the rollout is stuck) */
  progressingReason?: string;
}

/**
 * A workload's own counts as read just before a drain that evicts its pods: what the settle gate waits
 * to see again after it (each capped at the then `spec.replicas`), so a workload already degraded
 * before the drain (a replica Pending for days) is back when it is back to how it was, not to its spec.
 */
export interface WorkloadBaseline {
  ready: number;
  available: number;
}
