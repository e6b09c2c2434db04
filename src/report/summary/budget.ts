// The summary's budget: rows and details are kept by interest, then shown in processing order.
import type { DecisionRecord, Outcome } from '../../core/model/record.js';
import { escapeCell } from '../escape.js';
import { bytes } from './cells.js';

// A details block is never smaller than this; below it the budget is spent.
export const MIN_DETAILS_BYTES = 200;

export interface Item {
  render: () => string;
  rank: number;
  index: number;
  outcome: string;
}

export interface Kept {
  items: Array<Item & { html: string }>;
  dropped: Item[];
  bytes: number;
}

export const NOT_REACHED_RANK = 7;
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
export function rank(r: DecisionRecord): number {
  const base = OUTCOME_RANK[r.outcome] ?? 6;
  return r.claim && r.claim.attempts > 1 ? Math.min(base, 2) : base;
}

/**
 * Keeps the longest prefix of the items, most eventful first and within a rank newest first, that
 * fits in `room` bytes; so what is dropped is always "the oldest of the most boring", never a
 * failure in favour of a skip that happened to be smaller.
 */
export function pick(items: Item[], room: number): Kept {
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

export function describeDropped(dropped: Item[]): string {
  const counts = new Map<string, number>();
  for (const d of dropped) counts.set(d.outcome, (counts.get(d.outcome) ?? 0) + 1);
  return [...counts].map(([o, n]) => `${n} ${escapeCell(o)}`).join(', ');
}
