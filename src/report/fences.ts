// The job summary of `mode: fences` and `mode: recover-fences`: one HTML string for
// core.summary.addRaw. Pure: it renders the report src/fences/run.ts returns (its shape is defined
// here, as the renderer's input), and decides nothing.
// Every string taken from the cluster or the GitHub API goes through escapeCell.
import type { Config } from '../core/config.js';
import type { LeaseState } from '../core/model/cluster.js';
import type { ActionResult } from '../core/model/record.js';
import type { RunAttemptInfo } from '../core/model/workflowRun.js';
import { leaseReleaseCommand, type FenceDecision, type FenceRow, type LeaseDecision, type QuarantineRow } from '../rules/fences.js';
import { escapeCell, escapeHtml, truncateText } from './escape.js';
import { plural } from '../core/format.js';

export type FencesMode = 'fences' | 'recover-fences';
export type FencesConfig = Pick<Config, 'annotationPrefix' | 'leaseNamespace' | 'leaseName' | 'kubeconfig' | 'kubeContext'>;

/** A release that failed other than by a lost CAS (transport, forbidden, …), or a Lease not read again. */
export interface FencesFailure {
  /** the node whose release failed; absent: the run Lease (`leaseRef`) */
  node?: string;
  /** what failed, without the node or Lease it failed on: `release failed: …` */
  reason: string;
}

/** What a fences run found and did: plain data, rendered by report/fences.ts and published by the shell. */
export interface FencesReport {
  kind: 'fences';
  mode: FencesMode;
  /** the `result` output: `failed` when `ok` is not, `processed` when something was released, else `clean` */
  result: ActionResult;
  /** the inputs the report names: the annotation prefix, and how the printed commands reach the cluster */
  config: FencesConfig;
  /** the run Lease's namespace and name */
  leaseRef: { namespace: string; name: string };
  /** when the cluster was read (epoch ms) */
  asOf: number;
  rows: FenceRow[];
  /** the quarantined nodes (no fences: recover-fences leaves them alone); absent: none */
  quarantined?: QuarantineRow[];
  /** the Lease as first read */
  lease?: LeaseState;
  leaseDecision: LeaseDecision;
  /** what recover-fences decided (or, in `fences` mode, would decide) per fence, from the first read */
  decisions: FenceDecision[];
  /** run lookups, keyed by owner token */
  runs: Map<string, RunAttemptInfo>;
  releasedNodes: string[];
  refused: Array<{ node: string; reason: string }>;
  leaseReleased: boolean;
  failures: FencesFailure[];
  /** one line per release attempted, for the log */
  actions: string[];
  ok: boolean;
}

/** `w3: release failed: …` or `Lease kube-system/x: reading it again failed: …`: the one wording of a failure. */
export function fenceFailureLine(f: FencesFailure, leaseRef: FencesReport['leaseRef']): string {
  return `${f.node ?? `Lease ${leaseRef.namespace}/${leaseRef.name}`}: ${f.reason}`;
}

const MAX_VALUE = 500;
const MAX_REASON = 2000;
const e = (s: string | undefined, max = MAX_VALUE): string => (s === undefined || s === '' ? '—' : escapeCell(truncateText(s, max)));
const unquote = (cmd: string): string => cmd.replace(/^`|`$/g, '');

function runCell(run: RunAttemptInfo | undefined, owner: string): string {
  if (!owner) return '—';
  if (!run) return 'not looked up (owner token does not parse)';
  const state = `${run.state.replace('_', ' ')}${run.conclusion ? ` (${run.conclusion})` : ''}`;
  const link = run.url ? `<a href="${escapeHtml(run.url)}">${e(state)}</a>` : e(state);
  return run.error ? `${link}: ${e(run.error)}` : link;
}

export function renderFencesSummary(r: FencesReport): string {
  const { mode, config } = r;
  const out: string[] = [];
  out.push(`<h2>${mode === 'fences' ? 'Fences' : 'Recover fences'}: ${plural(r.rows.length, 'node')} carrying a claim</h2>`);
  out.push(`<p>Read at ${e(new Date(r.asOf).toISOString())}; annotation prefix <code>${e(config.annotationPrefix)}</code>.</p>`);

  // The Lease and its holder.
  const leaseId = `${r.leaseRef.namespace}/${r.leaseRef.name}`;
  if (!r.lease) out.push(`<p><b>Lease</b> <code>${e(leaseId)}</code>: does not exist (no run holds the lock).</p>`);
  else if (!r.lease.holderIdentity) out.push(`<p><b>Lease</b> <code>${e(leaseId)}</code>: free.</p>`);
  else {
    const holder = r.lease.holderIdentity;
    const run = r.runs.get(holder);
    const verdict =
      mode === 'fences'
        ? `recover-fences would ${r.leaseDecision.action === 'release' ? 'release it' : 'keep it'}: ${r.leaseDecision.reason}`
        : r.leaseReleased
          ? `released: ${r.leaseDecision.reason}`
          : `kept: ${r.leaseDecision.reason}`;
    out.push(
      [
        '<table>',
        "<tr><th>Lease</th><th>Holder</th><th>Holder's run</th><th>Renewed</th><th>Duration</th><th>Recovery</th></tr>",
        `<tr><td><code>${e(leaseId)}</code></td><td><code>${e(holder)}</code></td><td>${runCell(run, holder)}</td><td>${e(r.lease.renewTime)}</td><td>${e(r.lease.leaseDurationSeconds === undefined ? undefined : `${r.lease.leaseDurationSeconds}s`)}</td><td>${e(verdict, MAX_REASON)}</td></tr>`,
        '</table>',
      ].join('\n'),
    );
    out.push(
      `<details><summary>Release the Lease by hand (only once its holder's run has ended)</summary><pre><code>${e(unquote(leaseReleaseCommand(r.leaseRef.namespace, r.leaseRef.name, holder, config)), 4000)}</code></pre></details>`,
    );
  }

  if (r.rows.length === 0) {
    out.push('<p>No node carries a claim.</p>');
  } else {
    const outcome = new Map<string, string>();
    if (mode === 'fences') {
      for (const d of r.decisions) outcome.set(d.node, d.action === 'release' ? `would release: ${d.reason}` : `would refuse: ${d.reason}`);
    } else {
      for (const d of r.decisions) outcome.set(d.node, 'not attempted');
      for (const n of r.releasedNodes) outcome.set(n, 'released');
      for (const x of r.refused) outcome.set(x.node, `refused: ${x.reason}`);
      for (const f of r.failures) if (f.node) outcome.set(f.node, `failed: ${f.reason}`);
    }
    const table = [
      '<table>',
      "<tr><th>Node</th><th>Owner</th><th>Phase</th><th>was-cordoned</th><th>Schedulable now</th><th>Owner's run</th><th>recover-fences</th></tr>",
      ...r.rows.map(
        (row) =>
          `<tr><td>${e(row.node)}</td><td><code>${e(row.owner)}</code></td><td>${e(row.phase)}</td><td>${e(row.wasCordoned)}</td><td>${row.schedulableNow ? 'yes' : 'no'}</td><td>${runCell(row.run, row.owner)}</td><td>${e(outcome.get(row.node), MAX_REASON)}</td></tr>`,
      ),
      '</table>',
    ];
    out.push(table.join('\n'));
    for (const row of r.rows) {
      const body = row.releaseCommand
        ? `<p>Release, only while the uid and owner token are still as below (restores schedulability from was-cordoned):</p><pre><code>${e(unquote(row.releaseCommand), 8000)}</code></pre>`
        : '';
      const note = row.note ? `<p>${e(row.note, MAX_REASON)}</p>` : '';
      out.push(`<details><summary>${e(row.node)}: how to release it</summary>${body}${note}</details>`);
    }
  }

  if (r.quarantined?.length) out.push(renderQuarantined(r.quarantined));

  if (mode === 'recover-fences') {
    const lines = [...r.actions, ...r.failures.map((f) => `FAILED: ${fenceFailureLine(f, r.leaseRef)}`)];
    out.push(
      lines.length
        ? `<h3>Actions</h3>\n<ul>\n${lines.map((l) => `<li>${e(l, MAX_REASON)}</li>`).join('\n')}\n</ul>`
        : '<p>Nothing was released.</p>',
    );
  }
  return `${out.join('\n\n')}\n`;
}

// Quarantined nodes: not claims (recover-fences never touches them), but cordoned nodes whose
// containerd still runs the old credential, each with what blocked its drain and how to lift it.
function renderQuarantined(rows: QuarantineRow[]): string {
  const yesNo = (b: boolean | undefined): string => (b === undefined ? 'unknown (stays cordoned)' : b ? 'yes' : 'no');
  const table = [
    `<h3>Quarantined: ${plural(rows.length, 'node')} left cordoned, not rebooted (containerd still runs the old credential)</h3>`,
    '<table>',
    '<tr><th>Node</th><th>Since</th><th>By run</th><th>Drain blocked by</th><th>Cordoned before</th><th>Schedulable now</th><th>Claimed now by</th></tr>',
    ...rows.map(
      (q) =>
        `<tr><td>${e(q.node)}</td><td>${e(q.since)}</td><td><code>${e(q.run)}</code></td><td>${e(q.blockedBy, MAX_REASON)}</td><td>${yesNo(q.wasCordoned)}</td><td>${q.schedulableNow ? 'yes' : 'no'}</td><td>${q.claimedBy === undefined ? '—' : `<code>${e(q.claimedBy)}</code>`}</td></tr>`,
    ),
    '</table>',
  ];
  const details = rows.map(
    (q) =>
      `<details><summary>${e(q.node)}: how to lift the quarantine</summary><p>${e(q.lift, MAX_REASON)}.</p><p>Or by hand (the node keeps the old credential in containerd until it is rebooted):</p><pre><code>${e(unquote(q.byHand), 8000)}</code></pre>${q.note ? `<p>${e(q.note, MAX_REASON)}</p>` : ''}</details>`,
  );
  return [...table, ...details].join('\n');
}
