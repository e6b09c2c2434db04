// A drain that can never finish: the one rule apply's start check (src/pipeline/startChecks/
// unsatisfiableDrain.ts, before the claim) and plan's forecast (src/pipeline/forecast.ts) both ask, so
// plan and apply cannot disagree. Pure: the node's pods as kubectl drain's filters leave them, every
// pod of the budgets' namespaces, the PodDisruptionBudgets in; the budgets that hold the drain for good out.
//
// How the apiserver decides an eviction (kubernetes pkg/registry/core/pod/storage/eviction.go, Create):
// a pod Pending, Succeeded, Failed or being deleted is deleted without a budget (canIgnorePDB); a pod
// two budgets select gets 500 "This pod has more than one PodDisruptionBudget" every time; a pod one
// budget selects that is not Ready is deleted when the budget's policy is AlwaysAllow, or when
// currentHealthy >= desiredHealthy > 0 (IfHealthyBudget, the default); otherwise checkAndDecrement:
// 429 while status.observedGeneration < generation, 429 while status.disruptionsAllowed is 0. The
// disruption controller (pkg/controller/disruption/disruption.go) sets disruptionsAllowed =
// currentHealthy - desiredHealthy (at least 0): currentHealthy counts the selected pods that are Ready
// and not being deleted; desiredHealthy is expectedPods - maxUnavailable (expectedPods: the scale of
// the pods' controllers), or minAvailable (a number: expectedPods is then the number of pods selected;
// a percentage of the controllers' scale, rounded up).
//
// A budget whose desiredHealthy is every pod it expects (maxUnavailable 0 or "0%", minAvailable
// rounding up to expectedPods) allows an eviction only while more pods are healthy than expected: the
// drain never makes that so (it only takes pods away), and a pod that is healthy and Ready is never
// on the unhealthy path. So the drain waits until drain-timeout for nothing. Everything the rule cannot
// prove goes ahead as today (docs/refused-drains.md lists each case, both ways).
import type { PdbState } from '../core/model/cluster.js';
import type { RebootPolicy } from '../core/config.js';
import type { BlockingBudget, UnsatisfiableCase, UnsatisfiableDrain } from '../core/model/unsatisfiableDrain.js';
import type { EvidenceVerdict } from '../core/model/verdict.js';
import { compareNames } from '../core/order.js';
import type { DrainFilter } from '../core/drainFilter.js';
import type { DrainPodReading } from '../core/workloads.js';
import { isTalosAtLeast } from './evidence/talosVersion.js';
import { selectorMatches } from './quarantine.js';

const ref = (p: { namespace: string; name: string }) => `${p.namespace}/${p.name}`;

/**
 * An empty selector (`selector: {}`) selects the whole namespace for the disruption controller and,
 * since Kubernetes 1.29 (kubernetes#119732), for the eviction subresource; before, the eviction skipped
 * it. Which one a cluster runs is not read here, so such a budget never makes a drain provably stuck.
 */
function emptySelector(b: PdbState): boolean {
  const s = b.selector;
  return !!s && Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0;
}

/** The budgets whose selector selects `pod` and counts on every apiserver (present and not empty). */
function selecting(pod: { namespace: string; labels: Record<string, string> }, pdbs: readonly PdbState[]): PdbState[] {
  return pdbs.filter((b) => b.namespace === pod.namespace && !emptySelector(b) && selectorMatches(b.selector, pod.labels));
}

/** A pod the eviction subresource checks against budgets: Running and not being deleted (not canIgnorePDB). */
const checkedByBudget = (p: DrainPodReading) => p.phase === 'Running' && !p.terminating;
/** A pod the disruption controller counts healthy, and never on the unhealthy-pod path. */
const healthy = (p: DrainPodReading) => p.phase === 'Running' && p.ready && !p.terminating;

/** A percentage as IntOrString writes it ("100%"), undefined for anything else. */
function percent(v: number | string): number | undefined {
  if (typeof v !== 'string') return undefined;
  const m = /^(\d+)%$/.exec(v);
  return m ? Number(m[1]) : undefined;
}

/**
 * Which full-health case the budget's spec is, for `expected` pods (its status.expectedPods):
 * desiredHealthy as the disruption controller computes it is every expected pod. Undefined: it may
 * allow one.
 */
function fullHealthCase(b: PdbState, expected: number): UnsatisfiableCase | undefined {
  if (b.maxUnavailable !== undefined) {
    // GetScaledValueFromIntOrPercent(roundUp: true): only 0 and "0%" are zero
    return b.maxUnavailable === 0 || percent(b.maxUnavailable) === 0 ? 'max-unavailable-zero' : undefined;
  }
  if (b.minAvailable !== undefined) {
    if (typeof b.minAvailable === 'number') return b.minAvailable >= expected ? 'min-available-all' : undefined;
    const p = percent(b.minAvailable);
    return p !== undefined && Math.ceil((p * expected) / 100) >= expected ? 'min-available-all' : undefined;
  }
  return undefined;
}

/**
 * Whether the budget, by itself, can allow no eviction for good: its status is the controller's answer
 * to its current spec, that answer is 0, every pod it expects is healthy, its spec wants every one,
 * and its unhealthy-pod policy cannot let a pod that turns unready through. Needs no pod list: the
 * start check asks this first and lists the pods only when some budget passes.
 */
export function budgetMayNeverAllow(b: PdbState): boolean {
  if (!b.selector || emptySelector(b)) return false;
  if (b.generation === undefined || b.observedGeneration === undefined || b.observedGeneration < b.generation) return false;
  const expected = b.expectedPods;
  if (expected === undefined || expected <= 0) return false;
  // AlwaysAllow evicts a pod that turns unready: a crash of the pod would let the drain through
  if (b.unhealthyPodEvictionPolicy !== undefined && b.unhealthyPodEvictionPolicy !== 'IfHealthyBudget') return false;
  const s = b.status;
  return s.disruptionsAllowed === 0 && s.currentHealthy === expected && s.desiredHealthy >= expected && !!fullHealthCase(b, expected);
}

/** Whether two budgets of one namespace could select one pod (then the pods decide): the check lists them only then. */
export function budgetsMayOverlap(pdbs: readonly PdbState[]): boolean {
  const perNamespace = new Map<string, number>();
  for (const b of pdbs) if (b.selector && !emptySelector(b)) perNamespace.set(b.namespace, (perNamespace.get(b.namespace) ?? 0) + 1);
  return [...perNamespace.values()].some((n) => n > 1);
}

/** Whether the budgets alone leave anything for the rule to find (no pod list needed to say no). */
export function mayBeUnsatisfiable(pdbs: readonly PdbState[]): boolean {
  return pdbs.some(budgetMayNeverAllow) || budgetsMayOverlap(pdbs);
}

/**
 * The rule. `filter`: kubectl drain's filters over the node's pods (src/core/drainFilter.ts: DaemonSet,
 * mirror and finished pods are never evicted); `pods`: every pod of the budgets' namespaces (a budget
 * selects across nodes); `pdbs`: every budget. Undefined: the drain may finish (or may fail for another
 * reason: that is not this rule's to say).
 */
export function unsatisfiableDrain(
  node: string,
  filter: DrainFilter,
  pods: readonly DrainPodReading[],
  pdbs: readonly PdbState[],
): UnsatisfiableDrain | undefined {
  const held = new Map<string, BlockingBudget>();
  const hold = (key: string, make: () => BlockingBudget, pod: string) => {
    const b = held.get(key) ?? make();
    b.pods.push(pod);
    held.set(key, b);
  };
  for (const p of filter.evict) {
    if (!checkedByBudget(p)) continue;
    const budgets = selecting(p, pdbs);
    if (budgets.length > 1) {
      const names = budgets.map(ref).sort(compareNames);
      hold(`several:${names.join(',')}`, () => ({ case: 'several-budgets', budgets: names, pods: [] }), ref(p));
      continue;
    }
    if (budgets.length === 0 || !healthy(p)) continue;
    const b = budgets[0];
    if (!budgetMayNeverAllow(b)) continue;
    // the pods it selects now, wherever they run: every one healthy, as many as the controller expects
    const selected = pods.filter((x) => x.namespace === b.namespace && selectorMatches(b.selector, x.labels));
    if (selected.length !== b.expectedPods || !selected.every(healthy)) continue;
    const c = fullHealthCase(b, b.expectedPods)!;
    hold(
      `budget:${ref(b)}`,
      () => ({
        case: c,
        budgets: [ref(b)],
        spec: b.maxUnavailable !== undefined ? `maxUnavailable: ${b.maxUnavailable}` : `minAvailable: ${b.minAvailable}`,
        status: { ...b.status, expectedPods: b.expectedPods! },
        pods: [],
      }),
      ref(p),
    );
  }
  if (held.size === 0) return undefined;
  const blocking = [...held.values()]
    .map((b) => ({ ...b, pods: [...b.pods].sort(compareNames) }))
    .sort((a, b) => compareNames(a.budgets.join(','), b.budgets.join(',')));
  return { node, blocking };
}

/**
 * Whether the node's roll certainly drains it, before anything is sent: `reboot: always`, or the
 * evidence read before the claim says reboot and the node's Talos does not restart cri by itself
 * (>= 1.14: the reboot, and so the drain, may be skipped after the patch). A roll that may skip the
 * drain is never refused for it. Plan asks it with the verdict it shows, the start check with the one it reads.
 */
export function drainIsCertain(reboot: RebootPolicy, evidence: EvidenceVerdict | undefined): boolean {
  if (reboot === 'always') return true;
  if (!evidence || evidence.verdict !== 'reboot') return false;
  return isTalosAtLeast(evidence.values.talosVersion ?? '', 1, 14) !== true;
}
