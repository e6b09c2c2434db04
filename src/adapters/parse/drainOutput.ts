// Which pods a `kubectl drain` evicted, from its own output, whether it succeeded, failed or was killed.
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
