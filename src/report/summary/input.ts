// What the job summary is rendered from (src/report/summary.ts), in a file of its own so the sections
// (head.ts, …) take its shape without importing the file that imports them.
import type { ActionResult, DecisionRecord, RollHold } from '../../core/model/record.js';
import type { RevocationVerdict } from '../../rules/revocation.js';

export interface SummaryInput {
  mode: 'apply' | 'plan';
  registry: string;
  revision: string;
  result: ActionResult;
  /** one per node the run got to, in processing order */
  records: DecisionRecord[];
  /** selected nodes the run stopped before */
  notReached?: string[];
  error?: string;
  /** nodes left out because they already verified this revision (their names or their count); counted when given */
  upToDate?: number | readonly string[];
  /** optional: which path read Talos and why (the API, or talosctl as the fallback), one line */
  talosReads?: string;
  /** the largest number of nodes in flight at once, and the setting it was bounded by */
  inFlightMax?: number;
  maxUnavailable?: number;
  topologyKey?: string;
  /** why the roll stopped early without a failure (the time budget) */
  notice?: string;
  /** when the settle gate or the time budget held new starts back (drawn on the timeline) */
  holds?: RollHold[];
  /** plan: the workloads the settle gate would wait for (undefined: the gate is off) */
  settleWaits?: readonly string[];
  /** may the old credential be revoked now (src/rules/revocation.ts); one line, and the nodes that may still hold it */
  revocation?: RevocationVerdict;
  /** the pre-flight check's lines (src/report/preflight.ts), one per registry host */
  preflight?: readonly string[];
}
