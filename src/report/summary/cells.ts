// What every section of the job summary prints with: a value escaped and capped, its size in bytes,
// and the instants and gaps of the evidence as the table and the evidence details both show them.
import { formatMagnitude } from '../../core/format.js';
import { formatGap, formatInstant } from '../../core/instants.js';
import type { DecisionRecord } from '../../core/model/record.js';
import type { EvidenceValues } from '../../core/model/verdict.js';
import { escapeCell, truncateText } from '../escape.js';

// Caps on single strings, so one runaway stderr cannot eat the budget of every other node.
export const MAX_NAME = 253; // a Kubernetes node name is at most 253 characters anyway
export const MAX_TEXT = 4000;
export const MAX_VALUE = 500;

export const e = (s: string | number | boolean | undefined | null, max = MAX_VALUE): string =>
  s === undefined || s === null || s === '' ? '—' : escapeCell(truncateText(String(s), max));

export const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/**
 * The UTC day instants are printed relative to: the day the node's first step started. An instant on
 * that day prints as a time only (`10:15:44.412Z`); any other day gets its date, so "today" is never
 * guessed from the reader's clock and an old reading cannot pass for a fresh one.
 */
export function referenceDay(r: DecisionRecord): number | undefined {
  const t = r.steps[0] ? Date.parse(r.steps[0].startedAt) : Number.NaN;
  return Number.isFinite(t) ? t : undefined;
}

export function instantCell(
  bounds: { earliestMs: number; latestMs: number } | undefined,
  iso: string | undefined,
  refMs?: number,
): string | undefined {
  return bounds ? formatInstant(bounds, refMs) : iso;
}

/** `+412 ms ± 0 ms (api)`: the whole range the bounds allow and the path that read it. */
export function gapCell(v: EvidenceValues | undefined): string | undefined {
  if (!v) return undefined;
  if (v.gap) return `${formatGap(v.gap.lowMs, v.gap.highMs)}${v.readPath ? ` (${v.readPath})` : ''}`;
  return v.gapMs === undefined ? undefined : `≥ ${v.gapMs < 0 ? '-' : '+'}${formatMagnitude(v.gapMs)}`;
}

/** The autoscaler marks the run left in place on the node (found before the claim, kept at a release), one line each. */
export function marksLines(r: Pick<DecisionRecord, 'autoscalerMarks'>): string[] {
  return r.autoscalerMarks ? [...r.autoscalerMarks.found, ...r.autoscalerMarks.kept] : [];
}
