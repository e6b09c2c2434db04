// The Reason cell of the summary's node table: a few words a person reads at a glance, beside the
// evidence columns that back them (containerd started, config last written, start − write). The whole
// sentence stays in the node's details and in the `decisions` output; nothing here decides anything:
// it names, from the record's structured fields, which rule the evidence rule (src/rules/evidence.ts)
// or the proof (src/rules/proof.ts) rested on.
import { formatGap } from '../../core/instants.js';
import type { DecisionRecord } from '../../core/model/record.js';
import type { EvidenceVerdict } from '../../core/model/verdict.js';

/** A stop's reason in the table: its first clause, at most this long (the details have the whole text). */
const MAX_STOP_BRIEF = 140;

export function briefReason(r: DecisionRecord): string {
  switch (r.outcome) {
    case 'reboot-skipped':
      return r.proof && r.evidence?.verdict === 'reboot'
        ? `no reboot needed: Talos restarted containerd after the patch (${proofBrief(r)})`
        : `no reboot needed: ${loadedBrief(r.evidence)}`;
    case 'planned-skip':
      return `would skip the reboot: ${loadedBrief(r.evidence)}`;
    case 'planned-reboot':
      return `would reboot: ${rebootBrief(r.evidence)}`;
    case 'rebooted':
      return `rebooted: ${rebootBrief(r.evidence)} · ${proofBrief(r)}`;
    case 'quarantined':
      // what a reader must not miss: the node was not rebooted, so containerd still runs the old credential
      return `${firstClause(r.reason, MAX_STOP_BRIEF)} · not rebooted: containerd still holds the OLD credential`;
    case 'refused':
    case 'failed':
      return firstClause(r.reason, MAX_STOP_BRIEF);
  }
}

/** Why the evidence before the patch said `skip`: containerd started after the desired config was written. */
function loadedBrief(v: EvidenceVerdict | undefined): string {
  const g = v?.values.gap;
  return `containerd started${g ? ` ${formatGap(g.lowMs, g.highMs)}` : ''} after the config with the new credential was written`;
}

/** Which condition made the evidence before the patch say `reboot` (the first that failed, in the rule's order). */
function rebootBrief(v: EvidenceVerdict | undefined): string {
  if (!v) return '`reboot: always` was requested';
  switch (v.failedRule) {
    case 'margin':
      return 'the evidence margin is not a valid duration';
    case 'cri-service':
      return 'the cri service was not running and healthy';
    case 'containerd-start':
      return 'containerd’s start could not be placed';
    case 'launch-after-patch':
      return 'containerd was not restarted after the patch';
    case 'config-write':
      return 'the config’s last write could not be placed';
    case 'credential':
      return v.contradicts
        ? 'the node’s config held an old credential, or none, for the registry'
        : 'the config’s credential could not be read';
    case 'clock':
      return 'the node clock could not be trusted';
    case 'ordering':
      return v.ordering === 'before'
        ? 'the config was written after containerd started'
        : 'containerd’s start and the config write were too close to order';
    case undefined:
      return 'the evidence did not prove the new credential loaded';
  }
}

/** What proved a rebooted (or cri-restarted) node runs the new credential, worded as a proof. */
function proofBrief(r: DecisionRecord): string {
  const u = r.proofUndecided;
  if (u) return u.settledBy === 'verify-image' ? 'proven by a pull of verify-image' : '⚠️ not proven (released with a warning)';
  if (!r.proof) return 'no proof was read';
  if (r.proof.verdict === 'skip') return 'proven: containerd started after the new config';
  return r.proof.contradicts ? 'contradicted' : 'not proven';
}

/** The text up to its first `;` or sentence end, cut at `max` (a stop's reason is a sentence or more). */
function firstClause(text: string, max: number): string {
  const m = /^(.*?)(?:; |\. (?=[A-Z])|$)/s.exec(text);
  const clause = (m?.[1] ?? text).trim();
  return clause.length > max ? `${clause.slice(0, max - 1).trimEnd()}…` : clause;
}
