// kubectl drain's pod filters (kubernetes/kubectl pkg/drain/filters.go makeFilters, pkg/drain/drain.go
// filterPods), in its order, each short-circuiting as filterPods does: which pods of a node a drain
// evicts and which it refuses before evicting anything. Pure data in and out; one home, read by plan's
// forecast (src/rules/drainForecast.ts, where the filters are described one by one) and by the drain
// itself (src/adapters/kube/http/drain.ts), so the forecast and the drain cannot disagree.
import type { DrainFlags, DrainPodReading } from './workloads.js';

// kubectl's own texts (filters.go)
export const DAEMONSET_FATAL = 'DaemonSet-managed Pods (use --ignore-daemonsets to ignore)';
export const LOCAL_STORAGE_FATAL = 'Pods with local storage (use --delete-emptydir-data to override)';
export const UNMANAGED_FATAL = 'Pods that declare no controller (use --force to override)';

export interface DrainFilter {
  /** the pods the drain would evict */
  evict: DrainPodReading[];
  /** the pods it would refuse, each with kubectl's reason (`cannot delete …`) */
  refusals: Array<{ pod: string; reason: string }>;
}

type Status = { delete: true } | { delete: false; error?: string };
const OK: Status = { delete: true };
const SKIP: Status = { delete: false };

const podName = (p: { namespace: string; name: string }) => `${p.namespace}/${p.name}`;
const finished = (p: DrainPodReading) => p.phase === 'Succeeded' || p.phase === 'Failed';

/**
 * kubectl drain's pod filters for the pods of `node` (`spec.nodeName`), with `flags`. `daemonSets`:
 * `namespace/name` of every DaemonSet that exists (daemonSetFilter GETs the pod's one).
 */
export function filterDrainPods(
  pods: readonly DrainPodReading[],
  node: string,
  daemonSets: ReadonlySet<string>,
  flags: DrainFlags,
): DrainFilter {
  const filters: Array<(p: DrainPodReading) => Status> = [
    (p) => daemonSetFilter(p, daemonSets, flags),
    (p) => (p.mirror ? SKIP : OK),
    (p) => (!p.emptyDir || finished(p) || flags.deleteEmptyDirData ? OK : { delete: false, error: LOCAL_STORAGE_FATAL }),
    (p) => (finished(p) || p.controller || flags.force ? OK : { delete: false, error: UNMANAGED_FATAL }),
  ];
  const out: DrainFilter = { evict: [], refusals: [] };
  for (const p of pods.filter((x) => x.nodeName === node)) {
    let status: Status = OK;
    for (const f of filters) {
      status = f(p);
      if (!status.delete) break;
    }
    if (status.delete) out.evict.push(p);
    else if (status.error) out.refusals.push({ pod: podName(p), reason: `cannot delete ${status.error}` });
  }
  return out;
}

function daemonSetFilter(p: DrainPodReading, daemonSets: ReadonlySet<string>, flags: DrainFlags): Status {
  const c = p.controller;
  if (!c || c.kind !== 'DaemonSet' || p.controllerApiVersion !== 'apps/v1') return OK;
  if (finished(p)) return OK;
  if (!daemonSets.has(`${p.namespace}/${c.name}`)) {
    // the GET's NotFound error text, as client-go prints it
    return flags.force ? OK : { delete: false, error: `daemonsets.apps "${c.name}" not found` };
  }
  return flags.ignoreDaemonSets ? SKIP : { delete: false, error: DAEMONSET_FATAL };
}
