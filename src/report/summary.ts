// The job summary: one HTML string for core.summary.addRaw. Pure, so the size bound and the
// escaping can be tested without a runner.
//
// Layout rules that keep GitHub's Markdown renderer from touching the content:
// - everything is HTML, and no top-level section contains a blank line (a blank line ends a GFM
//   HTML block and the rest would be parsed as Markdown); escapeCell turns data newlines into <br>;
// - every string that came from a node, a tool or an input goes through escapeCell.
//
// This file assembles the sections (src/report/summary/) within the byte budget: the head and totals
// (head.ts), the node table (table.ts), the timeline (../timeline.ts), the per-node details (details.ts:
// the quarantine, the config preview, the evidence); what is kept when the budget is short, budget.ts.
import type { Redactor } from '../core/redact.js';
import { renderTimeline } from './timeline.js';
import { MIN_DETAILS_BYTES, pick } from './summary/budget.js';
import { bytes } from './summary/cells.js';
import { detailItems, droppedDetailsNote } from './summary/details.js';
import { renderHead } from './summary/head.js';
import { renderTable, rowItems, TABLE_CLOSE, TABLE_OPEN } from './summary/table.js';
import type { SummaryInput } from './summary/input.js';

// The input's shape has a file of its own (summary/input.ts), which the sections import without this one.
export type { SummaryInput } from './summary/input.js';

/** GitHub rejects a step summary above 1 MiB. */
export const GITHUB_SUMMARY_LIMIT_BYTES = 1024 * 1024;
/** What renderSummary aims for, below GitHub's limit: room for anything else in the step's summary (src/action/publish.ts writes it). */
export const SUMMARY_BUDGET_BYTES = 900_000;
// The timeline takes what is left after the table, up to this; its rows past it are counted, not drawn.
const MAX_TIMELINE_BYTES = 32_000;
// The notes about what was left out are written after the budget is spent; this is their room.
const NOTES_RESERVE_BYTES = 4096;

export function renderSummary(input: SummaryInput, options: { budgetBytes?: number; redactor?: Redactor } = {}): string {
  const budget = options.budgetBytes ?? SUMMARY_BUDGET_BYTES;
  // Redacted before escaping and truncation: both change the text a secret would be found in.
  if (options.redactor) input = options.redactor.redactData(input);
  const records = input.records;
  const notReached = input.notReached ?? [];

  const head = renderHead(input);
  if (records.length === 0 && notReached.length === 0) return head.join('\n\n') + '\n';

  const rows = rowItems(records, notReached);
  const details = detailItems(records);
  let room = budget - bytes(head.join('\n\n')) - bytes(TABLE_OPEN) - bytes(TABLE_CLOSE) - NOTES_RESERVE_BYTES - 16;

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

  const sections = [...head, renderTable(keptRows)];
  if (timeline) sections.push(timeline);
  const note = droppedDetailsNote(keptDetails, details.length);
  if (note) sections.push(note);
  sections.push(...keptDetails.items.map((x) => x.html));
  return sections.join('\n\n') + '\n';
}
