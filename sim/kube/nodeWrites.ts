// The twin's own record of every write to a Node, and what a test or a benchmark counts from it: how
// many nodes a roll had out at once, independently of what the action reports about itself.

/**
 * One write to a Node as the twin's store applied it, in order: what a test checks "how many nodes
 * were out at once" against, independently of what the action reports about itself.
 */
export interface NodeWrite {
  /** the store's revision of the write (a total order) */
  rv: number;
  at: number;
  node: string;
  unschedulable: boolean;
  annotations: Record<string, string>;
  labels: Record<string, string>;
  /** spec.taints as `key:effect`, in stored order */
  taints: string[];
  /** the Ready condition's status ('True', 'False', 'Unknown'; '' without one) */
  ready: string;
  deleted: boolean;
}

/**
 * From the twin's own node writes: the largest number of nodes that were out at the same moment —
 * cordoned AND carrying an owner annotation `ownerKey` (unschedulable by a roll, not by an
 * operator) — and, for each change, who they were. Replayed in store order, so a claim and a release never look simultaneous.
 */
export function outOverTime(
  writes: readonly NodeWrite[],
  ownerKey: string,
): { peak: number; moments: Array<{ rv: number; out: string[] }> } {
  const state = new Map<string, boolean>();
  let peak = 0;
  const moments: Array<{ rv: number; out: string[] }> = [];
  for (const w of writes) {
    const out = !w.deleted && w.unschedulable && ownerKey in w.annotations;
    if ((state.get(w.node) ?? false) === out) continue;
    state.set(w.node, out);
    const now = [...state].filter(([, o]) => o).map(([n]) => n);
    peak = Math.max(peak, now.length);
    moments.push({ rv: w.rv, out: now });
  }
  return { peak, moments };
}
