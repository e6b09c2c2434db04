// The one publisher: whatever mode ran, its plain report becomes the step's outputs, log lines,
// annotations, job summary and exit status here, in that order, through one core-like port. The
// modes render nothing, and every mode of the main step sets every output (a later step reads them
// whatever ran); the post step sets none (no step runs after it) and writes no summary.
//
// The report file (`reportFile` below, as the main step publishes): apply and plan write the whole
// run as one JSON document (src/report/runReport.ts) into RUNNER_TEMP, its path the `report-file`
// output. The fences modes write none (their fence rows are small and whole in `decisions`), nor does
// a mode that could not run; there `report-file` is empty. A report file that cannot be written is an
// error annotation, never the step's failure: the run's own result, outputs, summary and exit status
// stand as they are, and `report-file` is empty.
import type { PartialCause, RolloutResult } from '../core/model/rolloutResult.js';
import { errorMessage, PreflightError, RolloutError } from '../core/errors.js';
import { rolloutFacts } from '../core/model/rolloutResult.js';
import { parseOwnerToken, runUrl } from '../core/owner.js';
import type { FencesReport } from '../fences/run.js';
import type { RolloutReport } from '../pipeline/rolloutMode.js';
import type { Redactor } from '../core/redact.js';
import { buildAnnotations, type Annotation } from '../report/annotations.js';
import { proofCheckAnnotations } from '../report/proofChecks.js';
import { fenceFailureLine, renderFencesSummary } from '../report/fences.js';
import { buildFenceOutputs, buildOutputs, type ActionOutputs } from '../report/outputs.js';
import { presentPostReport, type PostReport } from '../report/postStep.js';
import { renderSummary } from '../report/summary.js';
import { renderPreflightStop } from '../report/preflight.js';
import { revocableOutput, selectionConvergedOutput } from '../report/revocation.js';
import { buildRunReport, type RunIdentity } from '../report/runReport.js';
import { reportFilePath } from './reportFile.js';

/** A mode that ended before it had anything to report: a bad input, an unusable talosconfig, a fences read that failed. */
export interface ErrorReport {
  kind: 'error';
  error: unknown;
}

/** What any mode hands to the publisher. */
export type ActionReport = RolloutReport | FencesReport | PostReport | ErrorReport;

/** What the step shows for a report: plain data, decided by `present`, written by `publish`. */
export interface Publication {
  /** none: the post step's, which no later step could read */
  outputs?: ActionOutputs;
  /** plain log lines */
  log: string[];
  annotations: Annotation[];
  /** the job summary (rendered when written, so a renderer's throw cannot cost the outputs); none: no summary */
  summary?: () => string;
  /** each one fails the step; none: it succeeds */
  failures: string[];
}

/** The part of the runner the publisher writes to: the masking port (src/action/masked.ts), or a recorder in tests. */
export interface PublishPort {
  setOutput(name: string, value: string): void;
  info(message: string): void;
  notice(message: string, properties: { title: string }): void;
  warning(message: string, properties?: { title: string }): void;
  error(message: string, properties: { title: string }): void;
  setFailed(message: string): void;
  summary: { addRaw(html: string): { write(): Promise<unknown> } };
  /** writes a file's text, masked (MaskedCore.writeFile); needed for `reportFile` */
  writeFile?(path: string, text: string): void;
}

/** The main step's report file and the outputs that come with it (`report-file`, `old-credential-revocable`, `selection-converged`). */
export interface ReportFileOptions {
  /** RUNNER_TEMP as the runner set it */
  runnerTemp: string | undefined;
  /** the web root of the run's page (GITHUB_SERVER_URL) */
  serverUrl?: string;
  now?: () => Date;
}

export interface PublishOptions {
  /**
   * The run's secrets, masked in the records before they are rendered, besides the port's masking of
   * the text: the summary escapes and truncates values, which could respell or split a secret.
   */
  redactor?: Redactor;
  /** set by the main step: write the report file and set its outputs (see the top of this file) */
  reportFile?: ReportFileOptions;
}

/** The notice's title for a run that stopped early without a failure, by what stopped it. */
const PARTIAL_TITLE: Record<PartialCause, string> = {
  budget: 'time-budget reached',
  window: 'maintenance window closed',
  gate: 'health gate false past gate-timeout',
};

/** The title of a `partial` run's notice: its start check's, or, for a check the report names not yet, the check's name. */
function partialTitle(r: Pick<RolloutResult, 'stoppedBy' | 'stop'>): string {
  if (r.stoppedBy) return PARTIAL_TITLE[r.stoppedBy];
  return r.stop ? `stopped early by ${r.stop.check}` : PARTIAL_TITLE.budget;
}

export async function publish(report: ActionReport, port: PublishPort, options: PublishOptions = {}): Promise<void> {
  const p = present(report, options);
  const file = p.outputs && options.reportFile ? writeReportFile(report, port, options.reportFile, options) : undefined;
  const outputs = p.outputs && file ? { ...p.outputs, ...file.outputs } : p.outputs;
  for (const [k, v] of Object.entries(outputs ?? {}) as Array<[string, string]>) port.setOutput(k, v);
  if (file?.error) port.error(file.error, { title: 'report file not written' });
  for (const line of p.log) port.info(line);
  for (const a of p.annotations) port[a.kind](a.message, { title: a.title });
  if (p.summary) {
    try {
      await port.summary.addRaw(p.summary()).write();
    } catch (e) {
      port.warning(`could not write the job summary: ${errorMessage(e)}`);
    }
  }
  for (const f of p.failures) port.setFailed(f);
}

/** The outputs of the report file and of its verdict, and what went wrong writing it (the run's result stands). */
interface ReportFileOutcome {
  outputs: { 'report-file': string; 'old-credential-revocable': 'true' | 'false'; 'selection-converged': 'true' | 'false' };
  error?: string;
}

function writeReportFile(
  report: ActionReport,
  port: PublishPort,
  file: ReportFileOptions,
  { redactor }: PublishOptions,
): ReportFileOutcome {
  // the fences modes and a mode that could not run judge no node and write no file
  if (report.kind !== 'rollout') {
    return { outputs: { 'report-file': '', 'old-credential-revocable': 'false', 'selection-converged': 'false' } };
  }
  const verdict = {
    'old-credential-revocable': revocableOutput(report.revocation),
    'selection-converged': selectionConvergedOutput(report.revocation),
  } as const;
  const now = (file.now ?? (() => new Date()))();
  const identity = identityOf(report.owner, file.serverUrl);
  try {
    if (!port.writeFile) throw new Error('the publishing port writes no file');
    const path = reportFilePath(file.runnerTemp, identity, now);
    const doc = buildRunReport(
      {
        identity,
        generatedAt: now.toISOString(),
        ...rolloutFacts(report),
      },
      { redactor },
    );
    port.writeFile(path, `${JSON.stringify(doc, null, 2)}\n`);
    return { outputs: { 'report-file': path, ...verdict } };
  } catch (e) {
    return {
      outputs: { 'report-file': '', ...verdict },
      error: `could not write the report file: ${errorMessage(e)}; the run's result, outputs and summary are unaffected, and the report-file output is empty`,
    };
  }
}

function identityOf(owner: string | undefined, serverUrl: string | undefined): RunIdentity | undefined {
  const t = owner ? parseOwnerToken(owner) : undefined;
  if (!owner || !t) return undefined;
  return { repository: t.repository, runId: t.runId, runAttempt: t.runAttempt, owner, url: runUrl(t, serverUrl) };
}

export function present(report: ActionReport, options: PublishOptions = {}): Publication {
  if (report.kind === 'rollout') return presentRollout(report, options);
  if (report.kind === 'fences') return presentFences(report, options);
  if (report.kind === 'post') return presentPostReport(report);
  // the outputs still say `failed`: a later step may read them
  return {
    outputs: buildOutputs({ result: 'failed', records: [] }),
    log: [],
    annotations: [],
    failures: [errorMessage(report.error)],
  };
}

function presentRollout(r: RolloutReport, { redactor }: PublishOptions): Publication {
  const log: string[] = [];
  const annotations = buildAnnotations(r.records, { redactor });
  const failures: string[] = [];
  if (r.result === 'clean') log.push(`every selected node already verified revision ${r.revision}: nothing to do`);
  if (r.result === 'partial') {
    const message = `${r.notReached.length} node(s) left for the next run (${r.notice ?? 'the time budget stopped the roll'}); every node started ended released or verified, and a rerun continues with the rest`;
    if (r.failOnPartial) failures.push(`${message} (fail-on-partial: true)`);
    else annotations.push({ kind: 'notice', title: partialTitle(r), message });
  }
  if (r.proofChecks) annotations.push(...proofCheckAnnotations(r.proofChecks, { redactor }));
  if (r.eventsWarning) annotations.push({ kind: 'warning', title: 'Kubernetes Events not written', message: r.eventsWarning });
  // an Alertmanager that failed is a warning, never a failure: alerts are not safety (docs/alert-silence.md)
  if (r.silence?.warnings.length)
    annotations.push({ kind: 'warning', title: 'Alertmanager silence', message: r.silence.warnings.join('\n') });
  if (r.error) failures.push(r.error instanceof RolloutError ? `${r.error.message}\nNext step: ${r.error.nextStep}` : r.error.message);
  // a pre-flight refusal: the summary says what was asked and answered, and that nothing was touched
  const stop = r.error instanceof PreflightError ? r.error : undefined;
  return {
    outputs: buildOutputs(r, { redactor }),
    log,
    annotations,
    summary: stop ? () => renderPreflightStop(stop.lines, stop.message) : () => renderSummary(rolloutFacts(r), { redactor }),
    failures,
  };
}

// `fences` is a report and always succeeds; in `recover-fences` a refused fence is the rule working
// (a warning), and only a failure the report lists fails the step (see src/fences/run.ts).
function presentFences(r: FencesReport, { redactor }: PublishOptions): Publication {
  return {
    outputs: buildFenceOutputs(r.result, r.rows, r.refused.length, { redactor }),
    log: [...r.actions],
    annotations: r.refused.map((x) => ({ kind: 'warning', title: `${x.node}: fence left in place`, message: x.reason })),
    summary: () => renderFencesSummary(r),
    failures: r.ok ? [] : [`${r.mode}: ${r.failures.map((f) => fenceFailureLine(f, r.leaseRef)).join('; ')}`],
  };
}
