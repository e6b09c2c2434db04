// Plain-text formatting shared by the per-node log group, the annotations and the summary, so the
// three say "reboot skipped" the same way (durations: src/core/format.ts).
import type { DecisionRecord, Outcome } from '../core/model/record.js';
import { formatDuration } from '../core/format.js';
import type { Redactor } from '../core/redact.js';
import { oneLine } from './escape.js';

const OUTCOME_LABELS: Record<Outcome, string> = {
  rebooted: 'rebooted',
  'reboot-skipped': 'reboot skipped',
  'planned-reboot': 'planned reboot',
  'planned-skip': 'planned skip',
  refused: 'refused',
  failed: 'failed',
  quarantined: 'quarantined',
};

export function outcomeLabel(outcome: Outcome): string {
  return OUTCOME_LABELS[outcome] ?? String(outcome);
}

/** The fields of the exec runner's CommandRecord that a log line shows. */
export interface CommandLineInput {
  /** as the runner spawned it; the line is masked where it is written (src/action/masked.ts) */
  command: string;
  durationMs: number;
  /** null when the process was killed by a signal */
  exitCode: number | null;
}

// Seconds with two decimals right-aligned to a fixed width, so the commands of a group line up
// and a slow call stands out when scanning the log.
const DURATION_WIDTH = 8;
const EXIT_WIDTH = 7;

/** `    1.23s  exit 0   kubectl patch node w1 …` — one line whatever the command contains. */
export function formatCommandLine(c: CommandLineInput, redactor?: Redactor): string {
  const seconds = Number.isFinite(c.durationMs) ? `${(Math.max(0, c.durationMs) / 1000).toFixed(2)}s` : '?s';
  const exit = c.exitCode === null ? 'killed' : `exit ${c.exitCode}`;
  // A JSON patch argument may carry newlines; a second log line would look like a second command.
  const command = (redactor ? redactor.redact(String(c.command)) : String(c.command)).replace(/\r\n?|\n/g, '\\n');
  return `${seconds.padStart(DURATION_WIDTH)}  ${exit.padEnd(EXIT_WIDTH)}  ${command}`;
}

/** The fields of one request over the cluster channel that a log line shows (src/adapters/kube/http/request.ts). */
export interface RequestLineInput {
  method: string;
  /** the path and query (no secret is ever in one) */
  path: string;
  /** the HTTP status; undefined when no answer came */
  status: number | undefined;
  durationMs: number;
}

/** `    0.01s  HTTP 200  PATCH /api/v1/nodes/w1`: a request, lined up with the commands' lines. */
export function formatRequestLine(r: RequestLineInput, redactor?: Redactor): string {
  const seconds = Number.isFinite(r.durationMs) ? `${(Math.max(0, r.durationMs) / 1000).toFixed(2)}s` : '?s';
  const status = r.status === undefined ? 'no answer' : `HTTP ${r.status}`;
  const what = (redactor ? redactor.redact(`${r.method} ${r.path}`) : `${r.method} ${r.path}`).replace(/\r\n?|\n/g, '\\n');
  return `${seconds.padStart(DURATION_WIDTH)}  ${status.padEnd(EXIT_WIDTH)}  ${what}`;
}

/** Title of the per-node `core.group`: `w1 (worker): rebooted in 4m 05s`. */
export function formatGroupTitle(record: Pick<DecisionRecord, 'node' | 'role' | 'outcome' | 'durationMs'>): string {
  return oneLine(`${record.node} (${record.role}): ${outcomeLabel(record.outcome)} in ${formatDuration(record.durationMs)}`);
}
