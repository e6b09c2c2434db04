// The pods a `kubectl drain` that failed was still waiting for, read from its stderr (the texts:
// docs/kubernetes-facts.md#k14-drain-timeout-output; kubectl's pkg/drain/drain.go writes them).
// Text in, pod references out; no I/O, no decision.

/** What a failed drain's stderr names, each pod as `namespace/name` (sorted, de-duplicated). */
export interface DrainPendingPods {
  /** pods an eviction of which a PodDisruptionBudget refused (429) at least once */
  refusedByPdb: string[];
  /** pods still on the node when the drain gave up: the eviction never went through, or the pod never terminated */
  pending: string[];
}

// `error when evicting pods/"web-1" -n "default" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.`
const PDB_REFUSAL =
  /error when evicting pods\/"([^"]+)" -n "([^"]+)" \(will retry after [^)]*\): Cannot evict pod as it would violate the pod's disruption budget/g;
// `error when evicting pods/"web-1" -n "default": global timeout reached: 8s`
const EVICTION_TIMEOUT = /error when evicting pods\/"([^"]+)" -n "([^"]+)": global timeout reached/g;
// `error when waiting for pod "cache-1" in namespace "default" to terminate: context deadline exceeded`
const TERMINATION_TIMEOUT = /error when waiting for pod "([^"]+)" in namespace "([^"]+)" to terminate/g;

function refs(text: string, re: RegExp): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(re)) out.add(`${m[2]}/${m[1]}`);
  return [...out].sort();
}

/**
 * The pods a drain's stderr names. kubectl prints a PDB refusal on every retry (5 s apart) and, when
 * its `--timeout` runs out, the pods it was still evicting or waiting for (twice: in the "pending
 * pods" line and in the final error); a drain we killed ourselves may have printed only refusals.
 */
export function parseDrainFailure(stderr: string): DrainPendingPods {
  return {
    refusedByPdb: refs(stderr, PDB_REFUSAL),
    pending: [...new Set([...refs(stderr, EVICTION_TIMEOUT), ...refs(stderr, TERMINATION_TIMEOUT)])].sort(),
  };
}

/**
 * The pods that kept the drain from finishing: those still pending when it gave up; when it printed
 * none (killed before its final report), those a PDB refused.
 */
export function blockedPods(p: DrainPendingPods): string[] {
  return p.pending.length > 0 ? p.pending : p.refusedByPdb;
}
