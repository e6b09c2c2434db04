// The head of the job summary: what ran, the totals per outcome, and the lines about the whole run
// (how Talos was read, how many nodes were in flight, why it stopped early, the settle gate, the error).
import type { Outcome } from '../../core/model/record.js';
import type { GateValue } from '../../core/model/gates.js';
import { e, MAX_NAME, MAX_TEXT } from './cells.js';
import type { SummaryInput } from './input.js';
import { renderRevocation } from '../revocation.js';
import { renderPreflight } from '../preflight.js';
import { gateValueText } from '../gates.js';
import { windowsNowText } from '../windows.js';
import { renderProofChecks } from '../proofChecks.js';
import type { SilenceReport } from '../../core/model/silence.js';

const MAX_ERROR = 8000;

/** The head sections, in order; with no node reached they are the whole summary. */
export function renderHead(input: SummaryInput): string[] {
  const records = input.records;
  const notReached = input.notReached ?? [];
  const head = [renderHeading(input), renderCounts(input)];
  if (input.preflight?.length) head.push(renderPreflight(input.preflight));
  if (input.talosReads) head.push(`<p><b>Talos readings:</b> ${e(input.talosReads, MAX_TEXT)}</p>`);
  if (input.inFlightMax !== undefined && input.maxUnavailable !== undefined) {
    const key = input.topologyKey ? ` · topology-key <code>${e(input.topologyKey, MAX_NAME)}</code>` : '';
    head.push(
      `<p>At most ${e(input.inFlightMax)} in flight at once (max-unavailable ${e(input.maxUnavailable)} workers; control planes one at a time)${key}</p>`,
    );
  }
  if (input.notice) head.push(`<p><b>Stopped early:</b> ${e(input.notice, MAX_ERROR)}</p>`);
  if (input.gates) head.push(renderGates(input.gates));
  if (input.windowsAt)
    head.push(`<p><b>Maintenance windows:</b> ${e(windowsNowText(input.windowsAt.now, input.windowsAt.afterClose), MAX_TEXT)}</p>`);
  if (input.settleWaits) {
    const list = input.settleWaits.length ? input.settleWaits.map((w) => `<code>${e(w, MAX_NAME)}</code>`).join(', ') : 'none';
    head.push(`<p><b>Settle gate:</b> before each next drain, the roll would wait for these workloads to be available again: ${list}</p>`);
  }
  if (input.error) head.push(`<p><b>Error:</b> ${e(input.error, MAX_ERROR)}</p>`);
  if (input.proofChecks?.length) head.push(renderProofChecks(input.proofChecks));
  if (input.silence) head.push(renderSilence(input.silence));
  if (input.revocation) head.push(renderRevocation(input.revocation));
  if (records.length === 0 && notReached.length === 0) {
    head.push(
      input.result === 'clean'
        ? `<p>Nothing to do: every selected node already verified revision <code>${e(input.revision)}</code>.</p>`
        : '<p>No node was processed.</p>',
    );
  }
  return head;
}

function renderHeading(input: SummaryInput): string {
  const what = input.mode === 'plan' ? 'Registry auth rollout plan (read-only)' : 'Registry auth rollout';
  const hosts = input.registry.map((h) => `<code>${e(h, MAX_NAME)}</code>`).join(', ');
  return `<h2>${what}: ${hosts} revision <code>${e(input.revision, MAX_NAME)}</code></h2>`;
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

/** plan: each health gate's value now, one item each (docs/gates.md). */
function renderGates(values: readonly GateValue[]): string {
  if (values.length === 0) return '<p><b>Health gates:</b> none to check (no gate kind is served)</p>';
  const items = values.map(
    (v) => `<li><code>${e(v.name, MAX_NAME)}</code>: ${v.holds ? 'holds' : '<b>does not hold</b>'} (${e(gateValueText(v), MAX_TEXT)})</li>`,
  );
  return `<p><b>Health gates now</b> (each start would wait while one does not hold):</p>\n<ul>${items.join('')}</ul>`;
}

const SILENCE_STATE: Record<SilenceReport['silences'][number]['state'], string> = {
  expired: 'expired at the end of the roll',
  left: 'not expired: it lapses by itself one alertmanager-silence-tail after its last extension',
  'not-created': 'not created',
};

/** The roll's Alertmanager silences: each id with its matchers and how it ended, then the warnings. */
function renderSilence(s: SilenceReport): string {
  const rows = s.silences.map(
    (x) =>
      `<li>${x.id ? `<code>${e(x.id, MAX_NAME)}</code>` : 'no id'} (<code>${e(x.matchers, MAX_TEXT)}</code>): ${SILENCE_STATE[x.state]}</li>`,
  );
  const warnings = s.warnings.map((w) => `<li>⚠️ ${e(w, MAX_TEXT)}</li>`);
  return `<p><b>Alertmanager silence</b> at <code>${e(s.alertmanager, MAX_TEXT)}</code>:</p><ul>${[...rows, ...warnings].join('')}</ul>`;
}
