// plan mode's drain forecast: which pods `kubectl drain` of a node would evict, which it would refuse
// before evicting anything, and, from the apiserver's answers to dry-run evictions of the former, what
// would block it now. Pure: pods, DaemonSets, PDBs and answers in, the forecast out.
//
// The filters are kubectl's own, in its order, each short-circuiting as filterPods does
// (kubernetes/kubectl pkg/drain/filters.go makeFilters, pkg/drain/drain.go filterPods):
// - skipDeletedFilter: only with --skip-wait-for-delete-timeout, which the action never passes;
// - daemonSetFilter: a pod whose controller is an apps/v1 DaemonSet is left alone with
//   --ignore-daemonsets, unless it finished (then deleted); when its DaemonSet is missing the GET's
//   error refuses the drain (`daemonsets.apps "x" not found`), or the pod is deleted under --force;
// - mirrorPodFilter: a mirror pod (`kubernetes.io/config.mirror`) is skipped;
// - localStorageFilter: an emptyDir pod not finished is refused without --delete-emptydir-data;
// - unreplicatedFilter: a pod not finished without a controller is refused without --force.
// A refusal is printed as `cannot delete <message>: ns/pod, …` and fails the drain before any
// eviction. Which PDBs cover a pod follows the eviction subresource (kubernetes pkg/registry/core/pod/
// storage/eviction.go getPodDisruptionBudgets): same namespace, a selector that is present and matches
// the pod's labels. An empty selector (`selector: {}`) matches every pod of the namespace, as policy/v1
// defines it: the disruption controller counts it so since Kubernetes 1.21 (kubernetes#99290) and the
// eviction subresource honours it since 1.29 (kubernetes#119732; before, it skipped such a budget).
// The forecast follows today's apiserver; on an older one it names a budget that would not block.
import type { PdbState } from '../core/model/cluster.js';
import type { DrainForecast } from '../core/model/record.js';
import { compareNames } from '../core/order.js';
import type { DrainPodReading, EvictionAnswer } from '../core/workloads.js';
import { selectorMatches } from './quarantine.js';
import { unsatisfiableDrain } from './unsatisfiableDrain.js';

// kubectl's filters themselves live in core (src/core/drainFilter.ts): the HTTP drain
// (src/adapters/kube/http/drain.ts) applies the same ones before it evicts.
export { DAEMONSET_FATAL, LOCAL_STORAGE_FATAL, UNMANAGED_FATAL, filterDrainPods, type DrainFilter } from '../core/drainFilter.js';
import type { DrainFilter } from '../core/drainFilter.js';

const podName = (p: { namespace: string; name: string }) => `${p.namespace}/${p.name}`;

/** The PDBs the eviction subresource checks for `pod`: its namespace's whose selector selects its labels (an empty one every pod, an absent one none). */
export function budgetsCovering(pod: DrainPodReading, pdbs: readonly PdbState[]): PdbState[] {
  return pdbs.filter((b) => b.namespace === pod.namespace && selectorMatches(b.selector, pod.labels));
}

/**
 * The node's forecast: the filter's verdict, and the answer to each dry-run eviction (by `namespace/name`;
 * a pod without one is an error: it was not asked). Blocked pods are named with the PDBs covering them.
 * With `refusal` (the node, every pod, and whether its roll certainly drains it), also whether apply
 * would refuse the node before its claim: the same rule its start check asks (src/rules/unsatisfiableDrain.ts).
 */
export function drainForecast(
  filter: DrainFilter,
  answers: ReadonlyMap<string, EvictionAnswer>,
  pdbs: readonly PdbState[],
  refusal?: { node: string; pods: readonly DrainPodReading[]; drainIsCertain: boolean },
): DrainForecast {
  const blocked: DrainForecast['blocked'] = [];
  const errors: DrainForecast['errors'] = [];
  const named = new Map<string, PdbState>();
  for (const p of filter.evict) {
    const a = answers.get(podName(p)) ?? { kind: 'error', message: 'no dry-run eviction was sent' };
    if (a.kind === 'blocked') {
      const covering = budgetsCovering(p, pdbs);
      for (const b of covering) named.set(podName(b), b);
      blocked.push({ pod: podName(p), budgets: covering.map(podName), message: a.message });
    } else if (a.kind === 'error') {
      errors.push({ pod: podName(p), message: a.message });
    }
  }
  const budgets = [...named.values()].sort((a, b) => compareNames(podName(a), podName(b))).map((b) => ({ pdb: podName(b), ...b.status }));
  const unsatisfiable = refusal?.drainIsCertain ? unsatisfiableDrain(refusal.node, filter, refusal.pods, pdbs) : undefined;
  return {
    ok: filter.refusals.length === 0 && blocked.length === 0 && errors.length === 0,
    evictions: filter.evict.length,
    blocked,
    budgets,
    refusals: filter.refusals,
    errors,
    ...(unsatisfiable ? { unsatisfiable } : {}),
  };
}

/** The forecast when it could not be made (the pod list failed). */
export function unknownForecast(why: string): DrainForecast {
  return { ok: false, evictions: 0, blocked: [], budgets: [], refusals: [], errors: [], unknown: why };
}
