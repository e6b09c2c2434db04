// The job summary: one HTML string for core.summary.addRaw. Pure, so the size bound and the
// escaping can be tested without a runner.
//
// Layout rules that keep GitHub's Markdown renderer from touching the content:
// - everything is HTML, and no top-level section contains a blank line (a blank line ends a GFM
//   HTML block and the rest would be parsed as Markdown); escapeCell turns data newlines into <br>;
// - every string that came from a node, a tool or an input goes through escapeCell.
import { formatMagnitude, plural } from '../core/format.js';
import { formatGap, formatInstant } from '../core/instants.js';
import type {
  ActionResult,
  ConfigPreview,
  CredentialEdit,
  DecisionRecord,
  EvidenceValues,
  EvidenceVerdict,
  Outcome,
  QuarantineNote,
  RollHold,
  StepRecord,
} from '../core/model.js';
import type { Redactor } from '../core/redact.js';
import { escapeCell, escapeHtml, truncateText } from './escape.js';
import { formatDuration } from '../core/format.js';
import { outcomeLabel } from './log.js';
import { renderTimeline } from './timeline.js';
import { renderRevocation } from './revocation.js';
import type { RevocationVerdict } from '../rules/revocation.js';

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
}

/** GitHub rejects a step summary above 1 MiB. */
export const GITHUB_SUMMARY_LIMIT_BYTES = 1024 * 1024;
/** What renderSummary aims for, below GitHub's limit: room for anything else in the step's summary (src/action/publish.ts writes it). */
export const SUMMARY_BUDGET_BYTES = 900_000;

// Caps on single strings, so one runaway stderr cannot eat the budget of every other node.
const MAX_NAME = 253; // a Kubernetes node name is at most 253 characters anyway
const MAX_TABLE_REASON = 300;
const MAX_TEXT = 4000;
const MAX_ERROR = 8000;
const MAX_VALUE = 500;
const MAX_DIFF = 8000;
const MAX_STEP_DETAIL = 1000;
const MAX_CONFLICTS = 20;
const MAX_FILES = 20;
// Steps past this many bytes of rows are counted, not shown: a retry loop recorded as hundreds of
// steps must not crowd out other nodes' details. The log group still lists every command.
const MAX_STEPS_BYTES = 24_000;
// The timeline takes what is left after the table, up to this; its rows past it are counted, not drawn.
const MAX_TIMELINE_BYTES = 32_000;
// A details block is never smaller than this; below it the budget is spent.
const MIN_DETAILS_BYTES = 200;
// The notes about what was left out are written after the budget is spent; this is their room.
const NOTES_RESERVE_BYTES = 4096;

const ICONS: Record<Outcome | 'not-reached', string> = {
  rebooted: '🔄',
  'reboot-skipped': '⏭️',
  'planned-reboot': '📝',
  'planned-skip': '📝',
  refused: '⛔',
  failed: '❌',
  quarantined: '🚧',
  'not-reached': '⏸️',
};

const COLUMNS = [
  'Node',
  'Role',
  'Outcome',
  'Reason',
  'containerd started',
  'config last written',
  'start − write',
  'claim attempts',
  'duration',
];

const e = (s: string | number | boolean | undefined | null, max = MAX_VALUE): string =>
  s === undefined || s === null || s === '' ? '—' : escapeCell(truncateText(String(s), max));

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

export function renderSummary(input: SummaryInput, options: { budgetBytes?: number; redactor?: Redactor } = {}): string {
  const budget = options.budgetBytes ?? SUMMARY_BUDGET_BYTES;
  // Redacted before escaping and truncation: both change the text a secret would be found in.
  if (options.redactor) input = options.redactor.redactData(input);
  const records = input.records;
  const notReached = input.notReached ?? [];

  const head = [renderHeading(input), renderCounts(input)];
  if (input.talosReads) head.push(`<p><b>Talos readings:</b> ${e(input.talosReads, MAX_TEXT)}</p>`);
  if (input.inFlightMax !== undefined && input.maxUnavailable !== undefined) {
    const key = input.topologyKey ? ` · topology-key <code>${e(input.topologyKey, MAX_NAME)}</code>` : '';
    head.push(
      `<p>At most ${e(input.inFlightMax)} in flight at once (max-unavailable ${e(input.maxUnavailable)} workers; control planes one at a time)${key}</p>`,
    );
  }
  if (input.notice) head.push(`<p><b>Stopped early:</b> ${e(input.notice, MAX_ERROR)}</p>`);
  if (input.settleWaits) {
    const list = input.settleWaits.length ? input.settleWaits.map((w) => `<code>${e(w, MAX_NAME)}</code>`).join(', ') : 'none';
    head.push(`<p><b>Settle gate:</b> before each next drain, the roll would wait for these workloads to be available again: ${list}</p>`);
  }
  if (input.error) head.push(`<p><b>Error:</b> ${e(input.error, MAX_ERROR)}</p>`);
  if (input.revocation) head.push(renderRevocation(input.revocation));
  if (records.length === 0 && notReached.length === 0) {
    head.push(
      input.result === 'clean'
        ? `<p>Nothing to do: every selected node already verified revision <code>${e(input.revision)}</code>.</p>`
        : '<p>No node was processed.</p>',
    );
    return head.join('\n\n') + '\n';
  }

  const rows: Item[] = [
    ...records.map((r, i) => ({ render: () => renderRow(r), rank: rank(r), index: i, outcome: outcomeLabel(r.outcome) })),
    ...notReached.map((n, i) => ({
      render: () => renderNotReachedRow(n),
      rank: NOT_REACHED_RANK,
      index: records.length + i,
      outcome: 'not reached',
    })),
  ];
  // Rendered lazily: with hundreds of nodes most blocks are never needed once the budget is spent.
  const details: Item[] = records.map((r, i) => ({
    render: () => renderDetails(r),
    rank: rank(r),
    index: i,
    outcome: outcomeLabel(r.outcome),
  }));

  const tableOpen = `<table>\n<tr>${COLUMNS.map((c) => `<th>${c}</th>`).join('')}</tr>`;
  const tableClose = '</table>';
  let room = budget - bytes(head.join('\n\n')) - bytes(tableOpen) - bytes(tableClose) - NOTES_RESERVE_BYTES - 16;

  const keptRows = pick(rows, room);
  room -= keptRows.bytes;
  // After the table, before the details: when each node ran and what overlapped (apply mode only).
  const timeline =
    input.mode === 'apply'
      ? renderTimeline(
          { records, holds: input.holds, inFlightMax: input.inFlightMax },
          { maxBytes: Math.min(MAX_TIMELINE_BYTES, room - MIN_DETAILS_BYTES) },
        )
      : undefined;
  if (timeline) room -= bytes(timeline) + 2;
  const keptDetails = pick(details, room);

  const sections = [...head];
  const table = [tableOpen, ...keptRows.items.map((x) => x.html)];
  if (keptRows.dropped.length) {
    table.push(
      `<tr><td colspan="${COLUMNS.length}"><i>${plural(keptRows.dropped.length, 'more node')} not listed (${describeDropped(keptRows.dropped)}) to keep this summary under GitHub's 1 MiB limit; the <code>decisions</code> output lists every node the run reached.</i></td></tr>`,
    );
  }
  table.push(tableClose);
  sections.push(table.join('\n'));
  if (timeline) sections.push(timeline);
  if (keptDetails.dropped.length) {
    sections.push(
      `<p><i>Details left out for ${keptDetails.dropped.length} of ${plural(details.length, 'node')} (${describeDropped(keptDetails.dropped)}), the least eventful and oldest first, to keep this summary under GitHub's 1 MiB limit; the <code>decisions</code> output and each node's log group carry them.</i></p>`,
    );
  }
  sections.push(...keptDetails.items.map((x) => x.html));
  return sections.join('\n\n') + '\n';
}

// ------------------------------------------------------------------------------------------------
// Budget: rows and details are kept by interest, then shown in processing order.
// ------------------------------------------------------------------------------------------------

interface Item {
  render: () => string;
  rank: number;
  index: number;
  outcome: string;
}

interface Kept {
  items: Array<Item & { html: string }>;
  dropped: Item[];
  bytes: number;
}

const NOT_REACHED_RANK = 7;
const OUTCOME_RANK: Record<Outcome, number> = {
  failed: 0,
  quarantined: 1,
  refused: 1,
  rebooted: 3,
  'planned-reboot': 4,
  'reboot-skipped': 5,
  'planned-skip': 6,
};

// A node whose claim needed retries is worth its details whatever its outcome: that is the case
// the claim rules were rewritten for.
function rank(r: DecisionRecord): number {
  const base = OUTCOME_RANK[r.outcome] ?? 6;
  return r.claim && r.claim.attempts > 1 ? Math.min(base, 2) : base;
}

/**
 * Keeps the longest prefix of the items, most eventful first and within a rank newest first, that
 * fits in `room` bytes; so what is dropped is always "the oldest of the most boring", never a
 * failure in favour of a skip that happened to be smaller.
 */
function pick(items: Item[], room: number): Kept {
  const order = items.map((_, i) => i).sort((a, b) => items[a].rank - items[b].rank || items[b].index - items[a].index);
  const html = new Map<number, string>();
  let used = 0;
  for (const i of order) {
    if (room - used < MIN_DETAILS_BYTES) break;
    const h = items[i].render();
    const size = bytes(h) + 2; // the separator it is joined with
    if (used + size > room) break;
    html.set(i, h);
    used += size;
  }
  return {
    items: items.flatMap((x, i) => (html.has(i) ? [{ ...x, html: html.get(i)! }] : [])),
    dropped: items.filter((_, i) => !html.has(i)),
    bytes: used,
  };
}

function describeDropped(dropped: Item[]): string {
  const counts = new Map<string, number>();
  for (const d of dropped) counts.set(d.outcome, (counts.get(d.outcome) ?? 0) + 1);
  return [...counts].map(([o, n]) => `${n} ${escapeCell(o)}`).join(', ');
}

// ------------------------------------------------------------------------------------------------
// Header
// ------------------------------------------------------------------------------------------------

function renderHeading(input: SummaryInput): string {
  const what = input.mode === 'plan' ? 'Registry auth rollout plan (read-only)' : 'Registry auth rollout';
  return `<h2>${what}: <code>${e(input.registry, MAX_NAME)}</code> revision <code>${e(input.revision, MAX_NAME)}</code></h2>`;
}

function renderCounts(input: SummaryInput): string {
  const n = (o: Outcome): number => input.records.filter((r) => r.outcome === o).length;
  const parts = [
    `${n('rebooted')} rebooted`,
    `${n('reboot-skipped')} ${n('reboot-skipped') === 1 ? 'reboot' : 'reboots'} skipped`,
    `${n('planned-reboot') + n('planned-skip')} planned (${n('planned-reboot')} reboot, ${n('planned-skip')} skip)`,
    `${n('refused')} refused`,
    ...(n('quarantined') > 0 ? [`${n('quarantined')} quarantined`] : []),
    `${n('failed')} failed`,
    `${(input.notReached ?? []).length} not reached`,
  ];
  if (input.upToDate !== undefined) {
    parts.push(`${typeof input.upToDate === 'number' ? input.upToDate : input.upToDate.length} already up to date`);
  }
  return `<p>Result: <b>${e(input.result)}</b> · ${parts.join(' · ')}</p>`;
}

// ------------------------------------------------------------------------------------------------
// Table
// ------------------------------------------------------------------------------------------------

function outcomeCell(o: Outcome, r?: DecisionRecord): string {
  const u = r?.proofUndecided;
  const note = u ? ` (proof undecided; ${u.settledBy === 'verify-image' ? 'proven by verify-image' : '⚠️ released with a warning'})` : '';
  return `${ICONS[o] ?? ''} ${e(outcomeLabel(o) + note)}`;
}

/**
 * The readings that decided the outcome: the proof read after the patch or the reboot when there is
 * one (a rebooted node's pre-patch containerd is gone, and its start says nothing about the outcome),
 * else the evidence read before the patch.
 */
function decidingValues(r: DecisionRecord): EvidenceValues | undefined {
  return (r.proof ?? r.evidence)?.values;
}

/**
 * The UTC day instants are printed relative to: the day the node's first step started. An instant on
 * that day prints as a time only (`10:15:44.412Z`); any other day gets its date, so "today" is never
 * guessed from the reader's clock and an old reading cannot pass for a fresh one.
 */
function referenceDay(r: DecisionRecord): number | undefined {
  const t = r.steps[0] ? Date.parse(r.steps[0].startedAt) : Number.NaN;
  return Number.isFinite(t) ? t : undefined;
}

function instantCell(
  bounds: { earliestMs: number; latestMs: number } | undefined,
  iso: string | undefined,
  refMs?: number,
): string | undefined {
  return bounds ? formatInstant(bounds, refMs) : iso;
}

/** `+412 ms ± 0 ms (api)`: the whole range the bounds allow and the path that read it. */
function gapCell(v: EvidenceValues | undefined): string | undefined {
  if (!v) return undefined;
  if (v.gap) return `${formatGap(v.gap.lowMs, v.gap.highMs)}${v.readPath ? ` (${v.readPath})` : ''}`;
  return v.gapMs === undefined ? undefined : `≥ ${v.gapMs < 0 ? '-' : '+'}${formatMagnitude(v.gapMs)}`;
}

function renderRow(r: DecisionRecord): string {
  const v = decidingValues(r);
  const ref = referenceDay(r);
  const cells = [
    e(r.node, MAX_NAME),
    e(r.role),
    outcomeCell(r.outcome, r),
    e(r.reason, MAX_TABLE_REASON) + (r.quarantine ? `<br><b>Lift:</b> ${e(r.quarantine.lift, MAX_TABLE_REASON)}` : ''),
    e(instantCell(v?.criStart, v?.criStartEarliest, ref)),
    e(instantCell(v?.configWrite, v?.configWrittenLatest, ref)),
    e(gapCell(v)),
    e(r.claim?.attempts),
    e(formatDuration(r.durationMs) + spanOf(r)),
  ];
  return `<tr>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
}

/** ` (13:01:02–13:05:07)`: when the run started and ended the node (UTC), to see which ran together. */
function spanOf(r: DecisionRecord): string {
  if (!r.startedAt || !r.endedAt) return '';
  const t = (iso: string) => iso.slice(11, 19);
  return ` (${t(r.startedAt)}–${t(r.endedAt)})`;
}

function renderNotReachedRow(name: string): string {
  const cells = [
    e(name, MAX_NAME),
    '—',
    `${ICONS['not-reached']} not reached`,
    'the roll stopped before this node',
    '—',
    '—',
    '—',
    '—',
    '—',
  ];
  return `<tr>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
}

// ------------------------------------------------------------------------------------------------
// Per-node details
// ------------------------------------------------------------------------------------------------

function renderDetails(r: DecisionRecord): string {
  const out: string[] = [];
  out.push(`<details><summary>${e(r.node, MAX_NAME)} — ${e(outcomeLabel(r.outcome))}</summary>`);
  out.push(`<p>${e(r.reason, MAX_TEXT)}</p>`);
  if (r.nextStep) out.push(`<p><b>Next step:</b> ${e(r.nextStep, MAX_TEXT)}</p>`);
  if (r.quarantine) out.push(renderQuarantine(r.quarantine));
  if (r.configPreview) out.push(renderConfigPreview(r.configPreview));
  out.push(
    `<p>role ${e(r.role)} · uid <code>${e(r.uid)}</code> · InternalIP <code>${e(r.internalIP)}</code> · took ${e(formatDuration(r.durationMs))}</p>`,
  );
  if (r.claim) out.push(renderClaim(r.claim));
  if (r.evidence || r.proof) out.push(renderEvidence(r.evidence, r.proof, referenceDay(r)));
  if (r.steps.length) out.push(renderSteps(r.steps));
  out.push('</details>');
  return out.join('\n');
}

// What blocked the drain of a quarantined node, one item per PDB, and how to lift it.
function renderQuarantine(q: QuarantineNote): string {
  const items = q.blockers.map((b) => {
    const s = b.status;
    const what = b.pdb
      ? `PodDisruptionBudget <code>${e(b.pdb, MAX_NAME)}</code>${s ? ` (allows ${e(s.disruptionsAllowed)} disruptions, ${e(s.currentHealthy)}/${e(s.desiredHealthy)} healthy)` : ''}`
      : 'no PodDisruptionBudget (still terminating, or gone since)';
    return `<li>${what}: ${e(b.pods.join(', '), MAX_TEXT)}</li>`;
  });
  const list = items.length ? `<ul>${items.join('')}</ul>` : '<p>kubectl drain named no pod it was waiting for.</p>';
  return `<p><b>Drain blocked by:</b></p>\n${list}\n<p><b>Lift the quarantine:</b> ${e(q.lift, MAX_TEXT)}; or by hand (the node keeps the old credential in containerd until it is rebooted): <code>${e(q.byHand.replace(/^`|`$/g, ''), MAX_TEXT)}</code></p>`;
}

// The action's own change list: each place written and what each credential field there does, every
// value shown as `***` (never read from the value), then the checks made without the node. No text of
// another program's: a neighbour of the credential in the config cannot ride along (docs/plan.md).
export const CONFIG_CHANGE_TITLE = "Machine config change (the action's own change list, every value masked):";

function renderConfigPreview(p: ConfigPreview): string {
  const title = `<b>${CONFIG_CHANGE_TITLE}</b>`;
  if (!p.shown) return `<p>${title} not shown — ${e(p.why, MAX_TEXT)}</p>`;
  if (p.edits.length === 0) return `<p>${title} no change (the config already carries the credential in every form it has)</p>`;
  const lines = p.edits.flatMap((x) => [`${x.target}: ${x.action} (${x.fields.map((f) => fieldText(x, f)).join(', ')})`, `  ${x.because}`]);
  const checks = p.checks.map((c) => `<li>${e(c, MAX_TEXT)}</li>`).join('');
  return `<p>${title}</p>
<pre>${escapeHtml(truncateText(`${lines.join('\n')}\n`, MAX_DIFF))}</pre>
<p>Checked without the node (nothing is sent to it in a plan):</p>
<ul>${checks}</ul>`;
}

function fieldText(edit: CredentialEdit, f: CredentialEdit['fields'][number]): string {
  if (f.change === 'removed') return `${f.name}: removed`;
  return edit.action === 'added' ? `${f.name}: ***` : `${f.name}: *** ${f.change}`;
}

function renderClaim(claim: { attempts: number; conflicts: string[] }): string {
  const head = `<p><b>Claim:</b> ${e(plural(claim.attempts, 'attempt'))}${claim.conflicts.length ? '; conflicts:' : ''}</p>`;
  if (!claim.conflicts.length) return head;
  const shown = claim.conflicts.slice(0, MAX_CONFLICTS).map((c) => `<li>${e(c, MAX_VALUE)}</li>`);
  const more = claim.conflicts.length > MAX_CONFLICTS ? `<li>… ${claim.conflicts.length - MAX_CONFLICTS} more</li>` : '';
  return `${head}\n<ul>${shown.join('')}${more}</ul>`;
}

function verdictLine(title: string, v: EvidenceVerdict): string {
  const verdict = v.verdict === 'skip' ? 'skip the reboot' : 'reboot';
  return `<p><b>${title}:</b> ${e(verdict)} — ${e(v.reason, MAX_TEXT)}</p>`;
}

const EVIDENCE_TITLE = 'Evidence before the credential patch';
const PROOF_TITLE = 'Proof after the patch or the reboot';

// Evidence and proof share one table, side by side, so a reader compares before and after at a
// glance and the block stays small enough for many nodes to keep their details.
function renderEvidence(evidence: EvidenceVerdict | undefined, proof: EvidenceVerdict | undefined, refMs?: number): string {
  const columns = [
    evidence && { head: 'before the patch', values: evidence.values },
    proof && { head: 'proof', values: proof.values },
  ].filter((c): c is { head: string; values: EvidenceValues } => Boolean(c));
  const cells = columns.map((c) => valueCells(c.values, refMs));
  const rows = VALUE_LABELS.map((label, i) => `<tr><td>${label}</td>${cells.map((c) => `<td>${c[i]}</td>`).join('')}</tr>`);
  const out: string[] = [];
  if (evidence) out.push(verdictLine(EVIDENCE_TITLE, evidence));
  if (proof) out.push(verdictLine(PROOF_TITLE, proof));
  out.push(`<table>\n<tr><th>value</th>${columns.map((c) => `<th>${c.head}</th>`).join('')}</tr>\n${rows.join('\n')}\n</table>`);
  for (const c of columns) {
    const files = renderFiles(c.head, c.values);
    if (files) out.push(files);
  }
  return out.join('\n');
}

function withNote(value: string | number | undefined, note: string | undefined): string {
  if (value === undefined || value === '') return '—';
  return note ? `${e(value)} (${e(note)})` : e(value);
}

const VALUE_LABELS = [
  'Talos version',
  'cri service',
  'cri PID',
  'containerd started',
  'config last written',
  'start − write (read via)',
  'margin',
  'node clock',
];

function valueCells(v: EvidenceValues, refMs?: number): string[] {
  const cri = [v.criState, v.criHealth].filter((x) => x !== undefined && x !== '').join(', ');
  const clock =
    v.timeSynced === undefined && v.timeEpoch === undefined
      ? undefined
      : `${v.timeSynced === undefined ? 'sync unknown' : v.timeSynced ? 'synced' : 'not synced'}${v.timeEpoch === undefined ? '' : `, epoch ${v.timeEpoch}`}`;
  return [
    e(v.talosVersion),
    e(cri),
    e(v.criPid),
    withNote(instantCell(v.criStart, v.criStartEarliest, refMs), v.criStartSource),
    withNote(instantCell(v.configWrite, v.configWrittenLatest, refMs), v.configWrittenPath),
    e(gapCell(v)),
    e(formatMagnitude(v.marginMs)),
    e(clock),
  ];
}

function renderFiles(head: string, v: EvidenceValues): string {
  if (!v.files.length) return '';
  const yesNo = (b: boolean | undefined): string => (b === undefined ? '—' : b ? 'yes' : 'no');
  const rows = v.files
    .slice(0, MAX_FILES)
    .map(
      (f) =>
        `<tr><td><code>${e(f.path)}</code></td><td>${yesNo(f.exists)}</td><td>${e(f.lastMod)}</td><td>${e(f.updated)}</td><td>${e(f.credential)}</td></tr>`,
    );
  if (v.files.length > MAX_FILES) rows.push(`<tr><td colspan="5">… ${v.files.length - MAX_FILES} more files</td></tr>`);
  return `<table>\n<tr><th>config file (${head})</th><th>exists</th><th>last modified (ls -l)</th><th>updated (etcfilestatus)</th><th>credential</th></tr>\n${rows.join('\n')}\n</table>`;
}

function renderSteps(steps: StepRecord[]): string {
  const rows: string[] = [];
  let used = 0;
  for (const s of steps) {
    const row = `<tr><td>${e(s.name)}</td><td>${e(s.startedAt)}</td><td>${e(formatDuration(s.durationMs))}</td><td>${s.ok ? 'ok' : '<b>failed</b>'}</td><td>${e(s.detail, MAX_STEP_DETAIL)}</td></tr>`;
    used += bytes(row) + 1;
    if (used > MAX_STEPS_BYTES) break;
    rows.push(row);
  }
  if (rows.length < steps.length) {
    rows.push(`<tr><td colspan="5">… ${steps.length - rows.length} more steps in this node's log group</td></tr>`);
  }
  return `<table>\n<tr><th>step</th><th>started</th><th>duration</th><th>result</th><th>detail</th></tr>\n${rows.join('\n')}\n</table>`;
}
