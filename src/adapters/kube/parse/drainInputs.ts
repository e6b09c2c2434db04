// `kubectl get pods,daemonsets.apps,poddisruptionbudgets.policy -A -o json` (one List of the three
// kinds) → what plan's drain forecast judges: every pod as drain's filters read it, the DaemonSets
// that exist, the PDBs with their selector and status. Text in, model values out; no I/O.
import type { PdbState } from '../../../core/model/cluster.js';
import type { DrainPodReading } from '../../../core/workloads.js';
import { ParseError } from '../../parseError.js';
import { parsePdbsAndPods } from './pdbJson.js';
import { drainPodFromItem, listItems } from './workloadJson.js';

export const DRAIN_INPUT_KINDS = 'pods,daemonsets.apps,poddisruptionbudgets.policy';

export function drainInputsFromList(raw: unknown): { pods: DrainPodReading[]; daemonSets: string[]; pdbs: PdbState[] } {
  const format = `kubectl get ${DRAIN_INPUT_KINDS} -o json`;
  const items = listItems(format, raw);
  const pods: DrainPodReading[] = [];
  const daemonSets: string[] = [];
  for (const item of items) {
    const meta = (item.metadata ?? {}) as Record<string, unknown>;
    if (item.kind === 'Pod') pods.push(drainPodFromItem(format, item));
    else if (item.kind === 'DaemonSet') daemonSets.push(`${String(meta.namespace)}/${String(meta.name)}`);
    else if (item.kind !== 'PodDisruptionBudget') throw new ParseError(format, `unexpected kind ${JSON.stringify(item.kind)}`);
  }
  return { pods, daemonSets, pdbs: parsePdbsAndPods(raw).pdbs };
}
