// The per-node details of the job summary: one <details> block per node the run reached, with its
// quarantine, its config preview, its claim, its evidence and its steps.
import { formatDuration, plural } from '../../core/format.js';
import type { DecisionRecord, StepRecord } from '../../core/model/record.js';
import { outcomeLabel } from '../log.js';
import { describeDropped, type Item, type Kept, rank } from './budget.js';
import { bytes, e, marksLines, MAX_NAME, MAX_TEXT, MAX_VALUE, referenceDay } from './cells.js';
import { renderConfigPreview } from './configPreview.js';
import { renderEvidence } from './evidence.js';
import { renderForecast } from './forecast.js';
import { renderProse } from './prose.js';
import { renderQuarantine } from './quarantine.js';

const MAX_STEP_DETAIL = 1000;
const MAX_CONFLICTS = 20;
// Steps past this many bytes of rows are counted, not shown: a retry loop recorded as hundreds of
// steps must not crowd out other nodes' details. The log group still lists every command.
const MAX_STEPS_BYTES = 24_000;

/** The details blocks, rendered lazily: with hundreds of nodes most blocks are never needed once the budget is spent. */
export function detailItems(records: DecisionRecord[]): Item[] {
  return records.map((r, i) => ({
    render: () => renderDetails(r),
    rank: rank(r),
    index: i,
    outcome: outcomeLabel(r.outcome),
  }));
}

/** The note counting the details left out; undefined when none was. */
export function droppedDetailsNote(kept: Kept, total: number): string | undefined {
  if (!kept.dropped.length) return undefined;
  return `<p><i>Details left out for ${kept.dropped.length} of ${plural(total, 'node')} (${describeDropped(kept.dropped)}), the least eventful and oldest first, to keep this summary under GitHub's 1 MiB limit; the <code>decisions</code> output and each node's log group carry them.</i></p>`;
}

function renderDetails(r: DecisionRecord): string {
  const out: string[] = [];
  out.push(`<details><summary>${e(r.node, MAX_NAME)} — ${e(outcomeLabel(r.outcome))}</summary>`);
  out.push(`<p>${e(r.reason, MAX_TEXT)}</p>`);
  if (r.hosts?.length)
    out.push(`<p><b>Rolled for:</b> ${r.hosts.map((h) => `<code>${e(h.host, MAX_NAME)}</code> (${e(h.why, MAX_VALUE)})`).join('; ')}</p>`);
  if (r.cordonKept) out.push(`<p><b>Stays cordoned:</b> ${e(r.cordonKept, MAX_VALUE)}</p>`);
  for (const line of marksLines(r)) out.push(`<p><b>Autoscaler mark:</b> ${e(line, MAX_VALUE)}</p>`);
  if (r.nextStep) out.push(renderProse('Next step', r.nextStep, MAX_TEXT));
  if (r.quarantine) out.push(renderQuarantine(r.quarantine));
  if (r.configPreview) out.push(renderConfigPreview(r.configPreview));
  if (r.drainForecast) out.push(renderForecast(r.drainForecast));
  out.push(
    `<p>role ${e(r.role)} · uid <code>${e(r.uid)}</code> · InternalIP <code>${e(r.internalIP)}</code> · took ${e(formatDuration(r.durationMs))}</p>`,
  );
  if (r.claim) out.push(renderClaim(r.claim));
  if (r.evidence || r.proof) out.push(renderEvidence(r.evidence, r.proof, referenceDay(r), r.outcome === 'rebooted' ? 'reboot' : 'patch'));
  if (r.steps.length) out.push(renderSteps(r.steps));
  out.push('</details>');
  return out.join('\n');
}

function renderClaim(claim: { attempts: number; conflicts: string[] }): string {
  const head = `<p><b>Claim:</b> ${e(plural(claim.attempts, 'attempt'))}${claim.conflicts.length ? '; conflicts:' : ''}</p>`;
  if (!claim.conflicts.length) return head;
  const shown = claim.conflicts.slice(0, MAX_CONFLICTS).map((c) => `<li>${e(c, MAX_VALUE)}</li>`);
  const more = claim.conflicts.length > MAX_CONFLICTS ? `<li>… ${claim.conflicts.length - MAX_CONFLICTS} more</li>` : '';
  return `${head}\n<ul>${shown.join('')}${more}</ul>`;
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
