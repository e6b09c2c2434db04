// The settle gate's rules: which workloads a drain disrupts, and which of them are not available again yet.
//
// "Again" is against the workload's own counts just before the drain (its baseline: ready and
// available replicas, each capped at spec.replicas when judged), not against its spec: a Deployment
// with one replica Pending for days was never fully available, and waiting for that would stop every
// roll. A drain takes replicas away; the gate waits until the controller reports as many ready and
// available as it did before that drain (capped at spec, so a scale-down meanwhile lowers the bar). A
// workload without a baseline (none was read: it appeared between the pod list and the status read)
// is judged by the spec rule below, as before baselines: the safe side.
//
// Pure: pods and controller statuses in, decisions out. What "available again" means follows the
// controllers themselves (docs/settle.md has the upstream files):
// - Deployment: the deployment controller's own DeploymentComplete (pkg/controller/deployment/util/
//   deployment_util.go): observedGeneration >= generation, and updatedReplicas, replicas and
//   availableReplicas all equal spec.replicas (replicas > spec.replicas means old or surplus pods
//   still run; availableReplicas counts minReadySeconds). A Progressing condition with reason
//   ProgressDeadlineExceeded is named in the reason, but the gate still waits on the numbers.
// - ReplicaSet without a Deployment: observedGeneration >= generation, and replicas, readyReplicas
//   and availableReplicas equal spec.replicas (the ReplicaSet controller's calculateStatus counts
//   only active pods, so a terminating pod is not counted).
// - StatefulSet: observedGeneration >= generation, and replicas, readyReplicas and availableReplicas
//   equal spec.replicas.
// A ReplicaSet a Deployment controls is judged by its Deployment (the Deployment may have replaced it
// by a newer ReplicaSet meanwhile). A controller that no longer exists, or is scaled to 0, is settled:
// nothing of it can come back. The status is never read for what it does not say: an absent field is
// a zero (apps/v1 status fields are omitempty), so a status the controller has not written yet is
// unsettled, never settled.
//
// Plan mode's prediction is the same rule, not a second one: `predictUnsettled` hands `unsettled` the
// counts the controllers would report right after the drains (`afterDrains`: each workload's ready and
// available replicas less its live replicas on the drained nodes) against the baselines read now, so the
// two callers cannot drift. A live replica is what the controllers count: a pod active in the
// ReplicaSet controller's sense (controller.IsPodActive in pkg/controller/controller_utils.go: not
// Succeeded, not Failed, no deletionTimestamp) and Ready. A terminating pod is already out of its
// controller's counts, so evicting it takes nothing away, and a workload scaled to 0 is settled: the
// prediction names neither, as the apply run's gate does not wait for them.
import {
  workloadKey,
  type PodOwnerReading,
  type WorkloadBaseline,
  type WorkloadKind,
  type WorkloadRef,
  type WorkloadStatus,
} from '../core/workloads.js';

/** The controller kinds a drain's eviction makes a controller re-create (a Deployment's pods are its ReplicaSet's). */
const WAITED_KINDS: readonly string[] = ['ReplicaSet', 'StatefulSet'];

/**
 * The controllers of the pods a drain evicted, as named by the pods (ReplicaSet or StatefulSet): a pod
 * of a DaemonSet, a Job, a mirror pod or a bare pod is not waited for. `evicted` holds `namespace/name`
 * of the pods the drain evicted; a pod not in `pods` (created after the listing) is not known and skipped.
 */
export function ownersOfEvicted(pods: readonly PodOwnerReading[], evicted: ReadonlySet<string>): WorkloadRef[] {
  return uniqueRefs(pods.filter((p) => evicted.has(`${p.namespace}/${p.name}`)).flatMap(ownerOf));
}

/**
 * Which controllers a drain of `node` would disrupt, from a pod list: what kubectl drain with
 * --ignore-daemonsets evicts (not mirror pods, not DaemonSet pods, not finished pods), reduced to the
 * controllers the gate waits for. Plan mode's prediction.
 */
export function ownersDrainWouldEvict(pods: readonly PodOwnerReading[], node: string): WorkloadRef[] {
  return uniqueRefs(
    pods.filter((p) => p.nodeName === node && !p.mirror && p.phase !== 'Succeeded' && p.phase !== 'Failed').flatMap(ownerOf),
  );
}

function ownerOf(p: PodOwnerReading): WorkloadRef[] {
  const c = p.controller;
  if (!c || !WAITED_KINDS.includes(c.kind)) return [];
  return [{ kind: c.kind as WorkloadKind, namespace: p.namespace, name: c.name }];
}

export function uniqueRefs(refs: readonly WorkloadRef[]): WorkloadRef[] {
  const seen = new Map<string, WorkloadRef>();
  for (const r of refs) if (!seen.has(workloadKey(r))) seen.set(workloadKey(r), r);
  return [...seen.values()];
}

/** A workload the gate still waits for, and why, in the controller's own numbers. */
export interface Unsettled {
  workload: WorkloadRef;
  why: string;
}

/**
 * The workload each ref is judged as: a ReplicaSet controlled by a Deployment is its Deployment.
 * A ref whose controller no longer exists stays as it is (and is settled: see unsettled).
 */
export function resolveOwners(refs: readonly WorkloadRef[], statuses: readonly WorkloadStatus[]): WorkloadRef[] {
  const byKey = new Map(statuses.map((s) => [workloadKey(s), s]));
  return uniqueRefs(
    refs.map((r) => {
      const s = byKey.get(workloadKey(r));
      if (r.kind === 'ReplicaSet' && s?.ownerDeployment) return { kind: 'Deployment', namespace: r.namespace, name: s.ownerDeployment };
      return r;
    }),
  );
}

/**
 * Of `refs`, those not yet available again (each with why), judged from the controllers' `statuses`:
 * against their baseline (keyed by the workload each ref is judged as, workloadKey) when one was read
 * before the drain, otherwise by the spec rule (notAvailable).
 */
export function unsettled(
  refs: readonly WorkloadRef[],
  statuses: readonly WorkloadStatus[],
  baselines: ReadonlyMap<string, WorkloadBaseline> = new Map(),
): Unsettled[] {
  const byKey = new Map(statuses.map((s) => [workloadKey(s), s]));
  const out: Unsettled[] = [];
  for (const workload of resolveOwners(refs, statuses)) {
    const s = byKey.get(workloadKey(workload));
    if (!s) continue; // deleted meanwhile: nothing of it can come back
    const baseline = baselines.get(workloadKey(workload));
    const why = baseline ? notBackToBaseline(s, baseline) : notAvailable(s);
    if (why) out.push({ workload, why });
  }
  return out;
}

/** A workload's baseline as read before a drain: the ref a pod named, the workload it is judged as, and its counts. */
export interface RefBaseline {
  ref: WorkloadRef;
  /** workloadKey of the workload `ref` is judged as (a ReplicaSet's Deployment) */
  judged: string;
  baseline: WorkloadBaseline;
}

/**
 * The baseline of each of `refs` (the controllers a drain will evict pods of), from statuses read just
 * before the drain: the counts of the workload it is judged as. A ref whose workload is not in
 * `statuses` gets none (then the spec rule judges it).
 */
export function baselinesOf(refs: readonly WorkloadRef[], statuses: readonly WorkloadStatus[]): RefBaseline[] {
  const byKey = new Map(statuses.map((s) => [workloadKey(s), s]));
  return uniqueRefs(refs).flatMap((ref) => {
    const judged = workloadKey(resolveOwners([ref], statuses)[0]);
    const s = byKey.get(judged);
    return s ? [{ ref, judged, baseline: { ready: s.readyReplicas, available: s.availableReplicas } }] : [];
  });
}

/**
 * Two baselines of one workload (two drains that evicted its pods, the later read while the earlier
 * one's replicas may still have been coming back): the higher of each count, so neither drain's
 * replicas are forgotten.
 */
export function mergeBaselines(a: WorkloadBaseline | undefined, b: WorkloadBaseline): WorkloadBaseline {
  return a ? { ready: Math.max(a.ready, b.ready), available: Math.max(a.available, b.available) } : b;
}

/**
 * Why `s` is not back to `baseline` (its counts before the drain, each capped at spec.replicas), or
 * undefined when it is: observed generation current, and ready and available replicas at least as
 * many as before. Scaled to 0: settled.
 */
export function notBackToBaseline(s: WorkloadStatus, baseline: WorkloadBaseline): string | undefined {
  const want = s.specReplicas;
  if (want === 0) return undefined;
  if (s.observedGeneration < s.generation) {
    return `its controller has not observed generation ${s.generation} yet (observed ${s.observedGeneration})`;
  }
  const counts: Array<[string, number, number]> = [
    ['ready', s.readyReplicas, Math.min(baseline.ready, want)],
    ['available', s.availableReplicas, Math.min(baseline.available, want)],
  ];
  const short = counts.filter(([, n, target]) => n < target);
  if (short.length === 0) return undefined;
  const targets = new Set(short.map(([, , t]) => t));
  const text =
    targets.size === 1
      ? `${short.map(([what, n]) => `${what} ${n}`).join(', ')} of ${short[0][2]}`
      : short.map(([what, n, t]) => `${what} ${n} of ${t}`).join(', ');
  const below = short.some(([, , t]) => t < want);
  const stuck = s.progressingReason === 'ProgressDeadlineExceeded' ? '; its rollout exceeded its progress deadline' : '';
  return `${text} ${below ? `(as many as before the drain; ${want} desired)` : 'desired'}${stuck}`;
}

/** A pod its controller counts among its ready replicas (see the top of this file): active and Ready. */
export function liveReplica(p: PodOwnerReading): boolean {
  return p.ready && !p.terminating && p.phase !== 'Succeeded' && p.phase !== 'Failed';
}

/**
 * The controllers' counts right after drains of `nodes`, predicted from `statuses` read now: each
 * workload (as judged: a ReplicaSet's Deployment) loses its live replicas on those nodes from its
 * ready and available counts, never below 0. Everything else is as read.
 */
export function afterDrains(
  statuses: readonly WorkloadStatus[],
  pods: readonly PodOwnerReading[],
  nodes: readonly string[],
): WorkloadStatus[] {
  const lost = new Map<string, number>();
  for (const n of nodes) {
    for (const p of pods.filter((x) => x.nodeName === n && liveReplica(x))) {
      for (const judged of resolveOwners(ownerOf(p), statuses)) lost.set(workloadKey(judged), (lost.get(workloadKey(judged)) ?? 0) + 1);
    }
  }
  return statuses.map((s) => {
    const n = lost.get(workloadKey(s)) ?? 0;
    return n === 0 ? s : { ...s, readyReplicas: Math.max(0, s.readyReplicas - n), availableReplicas: Math.max(0, s.availableReplicas - n) };
  });
}

/**
 * Plan mode: the workloads the gate would wait for after drains of `nodes`, judged by `unsettled`, the
 * gate's own rule, on the counts `afterDrains` predicts against the baselines the drains would read now.
 */
export function predictUnsettled(
  pods: readonly PodOwnerReading[],
  statuses: readonly WorkloadStatus[],
  nodes: readonly string[],
): Unsettled[] {
  const refs = uniqueRefs(nodes.flatMap((n) => ownersDrainWouldEvict(pods, n)));
  const baselines = new Map<string, WorkloadBaseline>();
  for (const b of baselinesOf(refs, statuses)) baselines.set(b.judged, mergeBaselines(baselines.get(b.judged), b.baseline));
  return unsettled(refs, afterDrains(statuses, pods, nodes), baselines);
}

/** Why `s` is not fully available, or undefined when it is. */
export function notAvailable(s: WorkloadStatus): string | undefined {
  const want = s.specReplicas;
  if (want === 0) return undefined;
  if (s.observedGeneration < s.generation) {
    return `its controller has not observed generation ${s.generation} yet (observed ${s.observedGeneration})`;
  }
  const counts: Array<[string, number]> =
    s.kind === 'Deployment'
      ? [
          ['updated', s.updatedReplicas],
          ['available', s.availableReplicas],
          ['replicas', s.replicas],
        ]
      : [
          ['ready', s.readyReplicas],
          ['available', s.availableReplicas],
          ['replicas', s.replicas],
        ];
  const off = counts.filter(([, n]) => n !== want);
  if (off.length === 0) return undefined;
  const stuck = s.progressingReason === 'ProgressDeadlineExceeded' ? '; its rollout exceeded its progress deadline' : '';
  return `${off.map(([what, n]) => `${what} ${n}`).join(', ')} of ${want} desired${stuck}`;
}
