// The run's result: the one declaration of what an `apply` or `plan` run ends with. Every account of a
// run picks its fields from here: the step outputs (src/report/outputs.ts `buildOutputs`), the job
// summary (src/report/summary.ts `SummaryInput`), the report file (src/report/runReport.ts
// `RunReportInput`, its document and schema/run-report.v1.json), the publisher (src/action/publish.ts,
// which copies no field by hand). A field added here reaches the summary's and the report's input at
// once; the report file's document names each of its keys (a test holds it to the schema).
// Plain data, no I/O.
import type { GateValue } from './gates.js';
import type { PreflightSummary } from './preflight.js';
import type { ProofCheck } from './proofCheck.js';
import type { ActionResult, DecisionRecord, RollHold } from './record.js';
import type { RevocationVerdict } from './revocation.js';
import type { SilenceReport } from './silence.js';

/** The two modes that roll (or would roll) nodes; the fences modes report fence rows instead. */
export const RUN_MODES = ['apply', 'plan'] as const;
export type RunMode = (typeof RUN_MODES)[number];

/** What can stop a roll early without a failure (result `partial`): the time budget, the maintenance windows, a health gate. */
export const PARTIAL_CAUSES = ['budget', 'window', 'gate'] as const;
export type PartialCause = (typeof PARTIAL_CAUSES)[number];

/** What the run itself found and did (src/pipeline/run.ts returns it, with the listing it judged). */
export interface RolloutFindings {
  /** how the run ended; `partial`: the time budget or the maintenance windows stopped the roll with nodes left, every node it started ended cleanly */
  result: ActionResult;
  /** one per node the run reached, in processing order */
  records: DecisionRecord[];
  /** selected nodes the roll did not reach because it stopped earlier (the `left` output) */
  notReached: string[];
  /** nodes left out because they already verified this revision */
  upToDate: string[];
  /** why the run failed, when it did */
  error?: Error;
  /** the budget's or the windows' message when it stopped the roll (result `partial`) */
  notice?: string;
  /** what stopped the roll when the result is `partial` */
  stoppedBy?: PartialCause;
  /** plan, with maintenance windows: whether one is open now (until when) and when the next opens */
  windows?: string;
  /** a Kubernetes Event could not be written (said once per run; the roll did not depend on it) */
  eventsWarning?: string;
  /** the largest number of nodes in flight at once (the `in-flight-max` output) */
  inFlightMax?: number;
  /** max-unavailable as resolved against the selected workers */
  maxUnavailable?: number;
  /** when the settle gate or the time budget held starts back (the timeline) */
  holds?: RollHold[];
  /** plan: every health gate's value now (undefined: no gate configured) */
  gates?: GateValue[];
  /** plan: the workloads the settle gate would wait for (undefined: gate off or not predicted) */
  settleWaits?: string[];
  /** the pre-flight check's lines, when it ran (not on an apply run with nothing to roll) */
  preflight?: PreflightSummary;
  /** which path read Talos and why, one line; none when the run opened no Talos client (nothing to roll) */
  talosReads?: string;
  /** apply with nothing to roll: the nodes to prove (a marker without a proof) and what proving each found (src/pipeline/prove.ts) */
  proofChecks?: ProofCheck[];
  /** apply with `alertmanager-url`, a roll that started: the silences held for it, their ids, and what failed (docs/alert-silence.md) */
  silence?: SilenceReport;
}

/** The whole result: what the run found, what it was asked (the mode's settings) and the verdict judged on its last listing. */
export interface RolloutResult extends RolloutFindings {
  mode: RunMode;
  /** the registry hosts the credential is for, comma-separated */
  registry: string;
  revision: string;
  topologyKey?: string;
  /** a `partial` run fails the step */
  failOnPartial: boolean;
  /** this run's claim token (repository, run id, attempt, nonce): the run's identity in the report file */
  owner?: string;
  /** may the old credential be revoked now, and has the selection converged (src/rules/revocation.ts) */
  revocation?: RevocationVerdict;
}

/** The result as text tells it: the error as its message, the pre-flight check as its lines. */
export type RolloutFacts = Omit<RolloutResult, 'error' | 'preflight'> & { error?: string; preflight?: readonly string[] };

/** What every account of a run names: what ran, for what, how it ended, and its nodes. */
type Always = 'mode' | 'registry' | 'revision' | 'result' | 'records';

/** A renderer's input: the facts every account names, and every other fact optional (a test gives only what it checks). */
export type RolloutView = Pick<RolloutFacts, Always> & Partial<Omit<RolloutFacts, Always>>;

/** The facts of a result, every field taken over as it is but the two that text renders differently. */
export function rolloutFacts(r: RolloutResult): RolloutFacts {
  const { error, preflight, ...rest } = r;
  return { ...rest, ...(error ? { error: error.message } : {}), ...(preflight ? { preflight: preflight.lines } : {}) };
}
