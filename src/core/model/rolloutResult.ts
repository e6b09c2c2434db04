// The run's result: the one declaration of what an `apply` or `plan` run ends with. Every account of a
// run picks its fields from here: the step outputs (src/report/outputs.ts `buildOutputs`), the job
// summary (src/report/summary.ts `SummaryInput`), the report file (src/report/runReport.ts
// `RunReportInput`, its document and schema/run-report.v2.json), the publisher (src/action/publish.ts,
// which copies no field by hand). A field added here reaches the summary's and the report's input at
// once; the report file's document names each of its keys (a test holds it to the schema).
// Plain data, no I/O.
import type { GateValue } from './gates.js';
import type { PreflightSummary } from './preflight.js';
import type { ProofCheck } from './proofCheck.js';
import type { ActionResult, DecisionRecord, RollHold } from './record.js';
import type { RevocationVerdict } from './revocation.js';
import type { StartCheckFinding, StartCheckName, StartCheckReports } from './startCheck.js';
import type { WindowsForecast } from './windows.js';

/** The two modes that roll (or would roll) nodes; the fences modes report fence rows instead. */
export const RUN_MODES = ['apply', 'plan'] as const;
export type RunMode = (typeof RUN_MODES)[number];

/**
 * The names the result's `stoppedBy` and the report's enum give a `partial` stop. What ends a roll
 * `partial` is not this list: it is a start check's answer (`stop` with `ends: 'partial'`,
 * src/core/model/startCheck.ts); this is how the report names the start checks that may answer it (the
 * time budget, the maintenance windows, a health gate). A check whose name is not here still ends the
 * roll `partial` and the result carries its finding (`stop`); only `stoppedBy` is then absent.
 */
export const PARTIAL_CAUSES = ['budget', 'window', 'gate'] as const;
export type PartialCause = (typeof PARTIAL_CAUSES)[number];

/** The report's name of the start check that stopped a roll `partial`; undefined for a check the report has no name for yet. */
export function partialCause(check: StartCheckName): PartialCause | undefined {
  return (PARTIAL_CAUSES as readonly string[]).includes(check) ? (check as PartialCause) : undefined;
}

/** What the run itself found and did (src/pipeline/run.ts returns it, with the listing it judged), the start checks' reports among it. */
export interface RolloutFindings extends StartCheckReports {
  /** how the run ended; `partial`: the time budget, the maintenance windows or a health gate stopped the roll with nodes left, every node it started ended cleanly */
  result: ActionResult;
  /** one per node the run reached, in processing order */
  records: DecisionRecord[];
  /** selected nodes the roll did not reach because it stopped earlier (the `left` output) */
  notReached: string[];
  /** nodes left out because they already verified this revision */
  upToDate: string[];
  /** why the run failed, when it did */
  error?: Error;
  /** the budget's, the windows' or the health gates' message when it stopped the roll (result `partial`) */
  notice?: string;
  /** what stopped the roll when the result is `partial` */
  stoppedBy?: PartialCause;
  /** result `partial`: what the start check that stopped the roll found, as data (its name, its typed value, its line: `notice`) */
  stop?: StartCheckFinding;
  /** plan, with maintenance windows: whether one is open now (until when) and when the next opens */
  windows?: string;
  /** plan, with maintenance windows: the same as data, each instant with its zone (`windows` is its line) */
  windowsAt?: WindowsForecast;
  /** a Kubernetes Event could not be written (said once per run; the roll did not depend on it) */
  eventsWarning?: string;
  /** the largest number of nodes in flight at once (the `in-flight-max` output) */
  inFlightMax?: number;
  /** max-unavailable as resolved against the selected workers */
  maxUnavailable?: number;
  /** when the settle gate, a health gate, the time budget or the maintenance windows held starts back (the timeline) */
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
}

/** The whole result: what the run found, what it was asked (the mode's settings) and the verdict judged on its last listing. */
export interface RolloutResult extends RolloutFindings {
  mode: RunMode;
  /** the registry hosts the credential is for (the `registry` input), in the run's order, one element each */
  registry: string[];
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
