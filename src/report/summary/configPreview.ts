// The config preview of a node's details (mode: plan): the action's own change list, every value masked.
import type { ConfigPreview, CredentialEdit } from '../../core/model/record.js';
import { escapeHtml, truncateText } from '../escape.js';
import { e, MAX_TEXT } from './cells.js';

const MAX_DIFF = 8000;

// The action's own change list: each place written and what each credential field there does, every
// value shown as `***` (never read from the value), then the checks made without the node. No text of
// another program's: a neighbour of the credential in the config cannot ride along (docs/plan.md).
export const CONFIG_CHANGE_TITLE = "Machine config change (the action's own change list, every value masked):";

export function renderConfigPreview(p: ConfigPreview): string {
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
