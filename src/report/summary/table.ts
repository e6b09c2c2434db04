// The node table of the job summary: one row per node the run reached, one per node it stopped before.
import { formatDuration, plural } from '../../core/format.js';
import type { DecisionRecord, Outcome } from '../../core/model/record.js';
import type { EvidenceValues } from '../../core/model/verdict.js';
import { outcomeLabel } from '../log.js';
import { describeDropped, type Item, type Kept, NOT_REACHED_RANK, rank } from './budget.js';
import { briefReason } from './brief.js';
import { e, gapCell, instantCell, marksLines, MAX_NAME, referenceDay } from './cells.js';

const MAX_TABLE_REASON = 300;

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

export const TABLE_OPEN = `<table>\n<tr>${COLUMNS.map((c) => `<th>${c}</th>`).join('')}</tr>`;
export const TABLE_CLOSE = '</table>';

/** The rows, rendered lazily so the budget renders only the rows it keeps. */
export function rowItems(records: DecisionRecord[], notReached: string[]): Item[] {
  return [
    ...records.map((r, i) => ({ render: () => renderRow(r), rank: rank(r), index: i, outcome: outcomeLabel(r.outcome) })),
    ...notReached.map((n, i) => ({
      render: () => renderNotReachedRow(n),
      rank: NOT_REACHED_RANK,
      index: records.length + i,
      outcome: 'not reached',
    })),
  ];
}

/** The table of the rows kept, and a row counting those left out. */
export function renderTable(kept: Kept): string {
  const table = [TABLE_OPEN, ...kept.items.map((x) => x.html)];
  if (kept.dropped.length) {
    table.push(
      `<tr><td colspan="${COLUMNS.length}"><i>${plural(kept.dropped.length, 'more node')} not listed (${describeDropped(kept.dropped)}) to keep this summary under GitHub's 1 MiB limit; the <code>decisions</code> output lists every node the run reached.</i></td></tr>`,
    );
  }
  table.push(TABLE_CLOSE);
  return table.join('\n');
}

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

function renderRow(r: DecisionRecord): string {
  const v = decidingValues(r);
  const ref = referenceDay(r);
  const cells = [
    e(r.node, MAX_NAME),
    e(r.role),
    outcomeCell(r.outcome, r),
    e(briefReason(r), MAX_TABLE_REASON) +
      (r.hosts?.length ? `<br><b>Hosts:</b> ${e(hostsCell(r.hosts), MAX_TABLE_REASON)}` : '') +
      (r.quarantine ? `<br><b>Lift:</b> ${e(r.quarantine.lift, MAX_TABLE_REASON)}` : '') +
      (r.cordonKept ? `<br><b>Stays cordoned:</b> ${e(r.cordonKept, MAX_TABLE_REASON)}` : '') +
      marksLines(r)
        .map((l) => `<br><b>Autoscaler mark:</b> ${e(l, MAX_TABLE_REASON)}`)
        .join(''),
    e(instantCell(v?.criStart, v?.criStartEarliest, ref)),
    e(instantCell(v?.configWrite, v?.configWrittenLatest, ref)),
    e(gapCell(v)),
    e(r.claim?.attempts),
    e(formatDuration(r.durationMs) + spanOf(r)),
  ];
  return `<tr>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
}

/** The hosts a node's roll was for: `ghcr.io, mirror.local:5000 (proof image changed)`. */
function hostsCell(hosts: NonNullable<DecisionRecord['hosts']>): string {
  return hosts.map((h) => h.host + (h.reprove ? ' (proof image changed)' : '')).join(', ');
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
