// The unsatisfiable-drain start check in words (docs/refused-drains.md): the one line a refused node's
// row, annotation, Event and log say, its next step (the fix), and plan's forecast line. Plain text
// from the typed finding (src/core/model/unsatisfiableDrain.ts); the summary escapes it.
import { plural } from '../core/format.js';
import type { BlockingBudget, UnsatisfiableDrain } from '../core/model/unsatisfiableDrain.js';

/** One budget and what it holds, e.g. `PDB shop/db (maxUnavailable: 0; 2 of 2 pods healthy, allows 0 disruptions) holds shop/db-0`. */
function blockingLine(b: BlockingBudget): string {
  const pods = `${plural(b.pods.length, 'pod')} ${b.pods.join(', ')}`;
  if (b.case === 'several-budgets') {
    return `${b.pods.length === 1 ? 'pod' : 'pods'} ${b.pods.join(', ')} selected by ${b.budgets.length} budgets (${b.budgets.join(', ')}): the eviction API refuses every eviction of a pod with more than one PodDisruptionBudget`;
  }
  const s = b.status!;
  return `PDB ${b.budgets[0]} (${b.spec}; ${s.currentHealthy} of ${s.expectedPods} pods healthy, allows ${plural(s.disruptionsAllowed, 'disruption')}) holds ${pods}`;
}

/** The refusal in one line: the node's reason. */
export function unsatisfiableMessage(u: UnsatisfiableDrain): string {
  return `refused before its claim: the drain of ${u.node} can never finish: ${u.blocking.map(blockingLine).join('; ')}`;
}

/** The fix, one line per budget joined: what a person changes so the drain can finish, then rerun. */
export function unsatisfiableNextStep(u: UnsatisfiableDrain): string {
  const fixes = u.blocking.map((b) => {
    if (b.case === 'several-budgets') {
      return `make the selectors of ${b.budgets.join(' and ')} disjoint so each pod has at most one budget`;
    }
    const n = b.status!.expectedPods;
    const allowOne = b.case === 'max-unavailable-zero' ? 'maxUnavailable: 1' : `minAvailable: ${Math.max(0, n - 1)}, or maxUnavailable: 1`;
    return `let ${b.budgets[0]} allow one eviction (${allowOne}), or scale its workload above ${n} replicas, or move ${b.pods.join(', ')} off ${u.node} yourself`;
  });
  return `${fixes.join('; ')}; then rerun: ${u.node} was not claimed, cordoned or changed`;
}

/** plan's line for a node apply would refuse. */
export function unsatisfiableForecastLine(u: UnsatisfiableDrain): string {
  return `apply would refuse ${u.node} before claiming it: its drain can never finish: ${u.blocking.map(blockingLine).join('; ')}`;
}
