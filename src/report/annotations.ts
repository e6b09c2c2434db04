// Annotations are what a user sees first on the run page, so each node gets one line there.
// They are plain text: the runner protocol (src/action/runnerCommands.ts) escapes the workflow-command syntax itself, and GitHub
// renders annotation messages as text, so no HTML escaping here.
import { formatGap } from '../core/instants.js';
import type { DecisionRecord, Outcome } from '../core/model/record.js';
import type { EvidenceValues } from '../core/model/verdict.js';
import type { Redactor } from '../core/redact.js';
import { oneLine, truncateText } from './escape.js';
import { outcomeLabel } from './log.js';

export type AnnotationKind = 'notice' | 'warning' | 'error';

export interface Annotation {
  kind: AnnotationKind;
  title: string;
  message: string;
}

/** GitHub shows at most this many annotations of one kind per step and silently drops the rest. */
export const MAX_ANNOTATIONS_PER_KIND = 10;

// A title is one line in the UI; a message longer than a few KB is cut by GitHub anyway, and
// cutting it ourselves keeps the next step (the part a user acts on) visible.
const MAX_TITLE = 200;
const MAX_MESSAGE = 4000;
const MAX_NAMES_IN_SUMMARY = 20;

const NOTICE_OUTCOMES: ReadonlySet<Outcome> = new Set(['rebooted', 'reboot-skipped', 'planned-reboot', 'planned-skip']);

interface Pending extends Annotation {
  node: string;
  /** what the overflow summary groups by */
  group: string;
}

export function buildAnnotations(records: readonly DecisionRecord[], options: { redactor?: Redactor } = {}): Annotation[] {
  if (options.redactor) records = options.redactor.redactData([...records]);
  const byKind: Record<AnnotationKind, Pending[]> = { notice: [], warning: [], error: [] };
  for (const r of records) {
    const node = oneLine(r.node);
    const label = outcomeLabel(r.outcome);
    if (NOTICE_OUTCOMES.has(r.outcome)) {
      byKind.notice.push({ kind: 'notice', node, group: label, title: `${node}: ${label}`, message: noticeMessage(r) });
    }
    if (r.proofUndecided?.settledBy === 'warning') {
      byKind.warning.push({
        kind: 'warning',
        node,
        group: 'released on an undecided proof',
        title: `${node}: rebooted and released, but the proof is undecided`,
        message: [
          `Could not prove: ${r.proofUndecided.unproven}`,
          `Residual risk: ${r.proofUndecided.residualRisk}`,
          ...(r.proofUndecided.nextStep ? [`Next step: ${r.proofUndecided.nextStep}`] : []),
        ].join('\n'),
      });
    }
    if (r.claim && r.claim.attempts > 1) {
      const conflicts = r.claim.conflicts.length ? r.claim.conflicts.map((c) => `- ${oneLine(c)}`).join('\n') : '- (no conflict recorded)';
      byKind.warning.push({
        kind: 'warning',
        node,
        group: 'claim retried',
        title: `${node}: claim needed ${r.claim.attempts} attempts`,
        message: `The atomic claim was rejected and retried after a benign change:\n${conflicts}`,
      });
    }
    if (r.outcome === 'refused' || r.outcome === 'failed' || r.outcome === 'quarantined') {
      const next = r.nextStep ? oneLineOrBlock(r.nextStep) : "see this node's log group and the job summary.";
      byKind.error.push({
        kind: 'error',
        node,
        group: label,
        title: `${node}: ${label}`,
        // A long cause is cut, never the next step: that is the part a user acts on.
        message: joinWithinBudget(r.reason, `Next step: ${next}`),
      });
    }
  }
  return [
    ...limit(byKind.notice, 'node outcomes'),
    ...limit(byKind.warning, 'warnings'),
    ...limit(byKind.error, 'nodes refused, failed or quarantined'),
  ].map(({ kind, title, message }) => ({
    kind,
    title: truncateText(oneLine(title), MAX_TITLE),
    message: truncateText(message, MAX_MESSAGE),
  }));
}

function noticeMessage(r: DecisionRecord): string {
  const lines = [r.reason];
  const evidence = r.evidence?.reason;
  if (evidence && evidence !== r.reason) lines.push(`Evidence: ${evidence}`);
  const proof = r.proof?.reason;
  if (proof && proof !== r.reason) lines.push(`Proof: ${proof}`);
  // The readings' precision, whatever the reasons say: which path read them and how wide the gap is.
  const readings = [
    r.evidence && readingsNote('before the patch', r.evidence.values),
    r.proof && readingsNote('proof', r.proof.values),
  ].filter(Boolean);
  if (readings.length) lines.push(`Readings: ${readings.join('; ')}`);
  return lines.join('\n');
}

/** `proof: start − write +412 ms ± 2 ms, read via api` (or what was missing to compute it). */
function readingsNote(what: string, v: EvidenceValues): string {
  const via = v.readPath ? `, read via ${v.readPath}` : '';
  return v.gap ? `${what}: start − write ${formatGap(v.gap.lowMs, v.gap.highMs)}${via}` : `${what}: start − write not measured`;
}

function oneLineOrBlock(s: string): string {
  return s.includes('\n') ? `\n${s}` : s;
}

function joinWithinBudget(cause: string, next: string): string {
  const room = MAX_MESSAGE - next.length - 1;
  return `${truncateText(cause, Math.max(200, room))}\n${next}`;
}

/** Keeps the first N-1 of a kind and folds the rest into one annotation that counts them by group. */
function limit(items: Pending[], what: string): Pending[] {
  if (items.length <= MAX_ANNOTATIONS_PER_KIND) return items;
  const kept = items.slice(0, MAX_ANNOTATIONS_PER_KIND - 1);
  const rest = items.slice(MAX_ANNOTATIONS_PER_KIND - 1);
  const groups = new Map<string, string[]>();
  for (const p of rest) groups.set(p.group, [...(groups.get(p.group) ?? []), p.node]);
  const counts = [...groups].map(([g, names]) => `${g} ${names.length}`).join(', ');
  const lines = [...groups].map(([g, names]) => {
    const shown = names.slice(0, MAX_NAMES_IN_SUMMARY).join(', ');
    const more = names.length > MAX_NAMES_IN_SUMMARY ? ` and ${names.length - MAX_NAMES_IN_SUMMARY} more` : '';
    return `${g} (${names.length}): ${shown}${more}`;
  });
  const kind = items[0].kind;
  const summary: Pending = {
    kind,
    node: rest[0].node,
    group: '',
    // Starts with a node name like every other title, so sorting or filtering by node still works.
    title: `${rest[0].node} and ${rest.length - 1} more: ${counts}`,
    message: `${rest.length} more ${what} than GitHub shows per step; the job summary has each of them.\n${lines.join('\n')}`,
  };
  return [...kept, summary];
}
