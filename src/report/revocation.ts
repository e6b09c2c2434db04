// The old-credential verdict as the step shows it: the `old-credential-revocable` and
// `selection-converged` outputs' values and the job summary's line (with every node of the cluster that
// still holds, or may hold, the old credential). The rule that decides it, and why, is
// src/rules/revocation.ts.
import type { RevocationVerdict } from '../core/model/revocation.js';
import { escapeCell, truncateText } from './escape.js';

/** Nodes past this many are counted in the summary, not listed: the report file lists every one. */
export const MAX_HOLDERS_LISTED = 50;
const MAX_WHY = 500;

/** `true` only on a verdict that says so; no verdict (a mode that does not judge it) is `false`. */
export function revocableOutput(v: RevocationVerdict | undefined): 'true' | 'false' {
  return v?.revocable ? 'true' : 'false';
}

/** `true` only when every node the inputs select converged (none selected, or no verdict, is `false`). */
export function selectionConvergedOutput(v: RevocationVerdict | undefined): 'true' | 'false' {
  return v?.selectionConverged ? 'true' : 'false';
}

const e = (s: string, max = MAX_WHY): string => escapeCell(truncateText(s, max));

/** One line of the summary, and when not revocable the list of nodes and why, as HTML. */
export function renderRevocation(v: RevocationVerdict): string {
  const head = v.revocable
    ? `<p><b>Old credential:</b> ✅ safe to revoke — ${e(v.reason)}</p>`
    : `<p><b>Old credential:</b> ⚠️ not safe to revoke yet — ${e(v.reason)}</p>`;
  if (v.holders.length === 0) return head;
  const items = v.holders
    .slice(0, MAX_HOLDERS_LISTED)
    .map((h) => `<li><code>${e(h.node, 253)}</code>${h.selected ? '' : ' (outside nodes/node-selector)'}: ${e(h.why)}</li>`);
  const more = v.holders.length - items.length;
  if (more > 0) items.push(`<li>… ${more} more (the report file lists every one)</li>`);
  return `${head}\n<ul>${items.join('')}</ul>`;
}
