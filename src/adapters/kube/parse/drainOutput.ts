// What a `kubectl drain`'s own output says about its pods: which it evicted (the settle gate), whether it
// succeeded, failed or was killed; and, when it failed, which it was still waiting for (the quarantine;
// the texts: docs/kubernetes-facts.md#k14-drain-timeout-output). Text in, pod references out; no I/O.
//
// kubectl drain (k8s.io/kubectl pkg/drain/drain.go, pkg/cmd/drain/drain.go) prints, per pod:
// - stdout `evicting pod NS/P` each time it POSTs the eviction (again on every retry);
// - stderr `error when evicting pods/"P" -n "NS" (will retry after 5s): …` when that POST was refused
//   (429: a PodDisruptionBudget), and `error when evicting pods/"P" -n "NS": …` for any other refusal
//   or for the global timeout (`global timeout reached`, which is no POST: it is checked before one);
// - stdout `pod/P evicted` once an accepted eviction's pod is gone (`pod/P deleted` without eviction
//   support);
// - stderr `error when waiting for pod "P" in namespace "NS" to terminate: …` when the drain ended
//   while an accepted eviction's pod was still terminating.
// A pod counts as evicted when it is gone, still terminating from an accepted eviction, or when it had
// more `evicting pod` lines than refusals and the drain did not end on an error of its eviction (the
// last one was accepted, or was in flight when the drain was killed: counting it can only make the
// gate wait for a controller that is available anyway). kubectl prints `evicting pod` again before
// it notices its global timeout, so a pod the timeout ended on is never counted from that line.

const EVICTING = /^evicting pod ([^/\s]+)\/(\S+)$/;
const GONE = /^pod\/(\S+) (?:evicted|deleted)$/;
const REFUSED = /error when evicting pods\/"([^"]+)" -n "([^"]+)"(.*)$/;
const TERMINATING = /error when waiting for pod "([^"]+)" in namespace "([^"]+)" to terminate/g;

/** `namespace/name` of every pod the drain evicted (see above), in first-seen order. */
export function drainEvicted(stdout: string, stderr: string): string[] {
  const posts = new Map<string, number>();
  const namespacesOf = new Map<string, Set<string>>();
  const evicted = new Set<string>();
  for (const line of stdout.split('\n').map((l) => l.trim())) {
    const e = EVICTING.exec(line);
    if (e) {
      const key = `${e[1]}/${e[2]}`;
      posts.set(key, (posts.get(key) ?? 0) + 1);
      if (!namespacesOf.has(e[2])) namespacesOf.set(e[2], new Set());
      namespacesOf.get(e[2])!.add(e[1]);
      continue;
    }
    const g = GONE.exec(line);
    // `pod/P evicted` has no namespace: it is the pod of that name an `evicting pod` line named
    if (g) for (const ns of namespacesOf.get(g[1]) ?? []) evicted.add(`${ns}/${g[1]}`);
  }
  const refused = new Map<string, number>();
  /** pods the drain ended on with an error of their eviction (the timeout, a refusal it does not retry) */
  const failed = new Set<string>();
  for (const line of stderr.split('\n')) {
    const r = REFUSED.exec(line);
    if (r) {
      const key = `${r[2]}/${r[1]}`;
      if (r[3].startsWith(' (will retry')) refused.set(key, (refused.get(key) ?? 0) + 1);
      else failed.add(key);
    }
    for (const t of line.matchAll(TERMINATING)) evicted.add(`${t[2]}/${t[1]}`);
  }
  for (const [key, n] of posts) if (n > (refused.get(key) ?? 0) && !failed.has(key)) evicted.add(key);
  return [...posts.keys(), ...evicted].filter((k, i, all) => evicted.has(k) && all.indexOf(k) === i);
}

// --- a drain that failed: the pods it was still waiting for ---------------------------------------

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
    pending: [...new Set([...refs(stderr, EVICTION_TIMEOUT), ...refs(stderr, TERMINATING)])].sort(),
  };
}

/**
 * The pods that kept the drain from finishing: those still pending when it gave up; when it printed
 * none (killed before its final report), those a PDB refused.
 */
export function blockedPods(p: DrainPendingPods): string[] {
  return p.pending.length > 0 ? p.pending : p.refusedByPdb;
}
