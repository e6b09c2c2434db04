// `mode: fences` (read-only report) and `mode: recover-fences` (release what is provably abandoned),
// issue 4 §3. The decisions are in rules/fences.ts; this module reads, looks up runs, releases and
// renders the job summary.
import type { RunAttemptInfo, RunLookup } from './adapters/github.js';
import type { KubeClient, LeaseState } from './adapters/types.js';
import type { Config } from './config.js';
import { ToolError } from './errors.js';
import { annotationKeys, type JsonPatchOp } from './model.js';
import { parseOwnerToken, runUrl } from './owner.js';
import { escapeCell, escapeHtml, truncateText } from './report/escape.js';
import type { Clock } from './clock.js';
import { annotationPath } from './rules/claim.js';
import { judgeFences, leaseReleaseCommand, ownersToLookUp, type FenceDecision, type FenceRow, type LeaseDecision } from './rules/fences.js';
import { releaseLeasePatch } from './rules/lease.js';
import { buildReleasePatch } from './rules/release.js';

export interface FencesArgs {
  mode: 'fences' | 'recover-fences';
  kube: KubeClient;
  runs: RunLookup;
  config: Pick<Config, 'annotationPrefix' | 'leaseNamespace' | 'leaseName' | 'kubeconfig' | 'kubeContext'>;
  clock: Clock;
  /** web root for run URLs; default GITHUB_SERVER_URL or https://github.com */
  serverUrl?: string;
}

export interface FencesResult {
  rows: FenceRow[];
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
  /** releases that failed other than by a lost CAS (transport, forbidden, …) */
  failures: string[];
  /** one line per release attempted, for the log */
  actions: string[];
  summaryHtml: string;
  ok: boolean;
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));
// A 422 is our `test` failing (the object moved since we read it), a 404 the object being gone: the
// CAS did its job, the thing is no longer what we judged, and it is left as it is.
const lostCas = (e: unknown): boolean => e instanceof ToolError && (e.kind === 'invalid' || e.kind === 'not-found');

async function lookUpRuns(owners: string[], runs: RunLookup, serverUrl: string): Promise<Map<string, RunAttemptInfo>> {
  const out = new Map<string, RunAttemptInfo>();
  await Promise.all(
    owners.map(async (owner) => {
      const token = parseOwnerToken(owner);
      if (!token) return;
      try {
        out.set(owner, await runs.runAttempt(token));
      } catch (e) {
        // A lookup must never turn into `completed` by accident: a throw is just another unknown.
        out.set(owner, { state: 'unknown', url: runUrl(token, serverUrl), error: message(e) });
      }
    }),
  );
  return out;
}

export async function runFences(args: FencesArgs): Promise<FencesResult> {
  const { mode, kube, config, clock } = args;
  const serverUrl = args.serverUrl ?? (process.env.GITHUB_SERVER_URL || 'https://github.com');
  const keys = annotationKeys(config.annotationPrefix);
  const ns = config.leaseNamespace;
  const leaseName = config.leaseName;
  const asOf = clock.now();

  const nodes = await kube.listNodes();
  const lease = await kube.getLease(ns, leaseName);
  const runs = await lookUpRuns(ownersToLookUp(nodes, keys, lease), args.runs, serverUrl);
  const first = judgeFences({ nodes, keys, lease, runs, kubectl: config });

  const releasedNodes: string[] = [];
  const refused: Array<{ node: string; reason: string }> = [];
  const failures: string[] = [];
  const actions: string[] = [];
  let leaseReleased = false;

  if (mode === 'recover-fences') {
    let leaseNow = lease;
    let leaseReadError: string | undefined;
    if (first.lease.action === 'release') {
      const holder = first.lease.holder;
      try {
        await kube.patchLease(ns, leaseName, releaseLeasePatch(holder));
        leaseReleased = true;
        actions.push(`Lease ${ns}/${leaseName}: released from ${holder} (${first.lease.reason})`);
      } catch (e) {
        if (lostCas(e))
          actions.push(`Lease ${ns}/${leaseName}: not released, it changed since it was read (no longer held by ${holder}); left as it is`);
        else failures.push(`Lease ${ns}/${leaseName}: release from ${holder} failed: ${message(e)}`);
      }
      // Fences are judged against the Lease as it is now: freed by us, or taken by a run that just started.
      try {
        leaseNow = await kube.getLease(ns, leaseName);
      } catch (e) {
        leaseReadError = message(e);
        failures.push(`Lease ${ns}/${leaseName}: reading it again failed: ${leaseReadError}`);
      }
    }
    const decisions = leaseReadError
      ? undefined
      : leaseNow === lease
        ? first.fences
        : judgeFences({ nodes, keys, lease: leaseNow, runs, kubectl: config }).fences;
    const unjudged = (f: FenceDecision): FenceDecision =>
      f.action === 'refuse'
        ? f
        : { node: f.node, action: 'refuse', reason: `the Lease could not be read again to confirm it is free (${leaseReadError})` };
    for (const d of decisions ?? first.fences.map(unjudged)) {
      if (d.action === 'refuse') {
        refused.push({ node: d.node, reason: d.reason });
        continue;
      }
      // buildReleasePatch tests uid and owner; the extra `test` of phase=claimed makes the decision
      // itself part of the CAS: a fence that moved to `mutating` since the read is not released.
      const ops: JsonPatchOp[] = [
        { op: 'test', path: annotationPath(keys.phase), value: 'claimed' },
        ...buildReleasePatch(d.capture, keys, {}),
      ];
      try {
        await kube.patchNode(d.node, ops);
        releasedNodes.push(d.node);
        actions.push(`${d.node}: released (${d.reason})`);
      } catch (e) {
        if (lostCas(e)) {
          const reason = 'the node changed since it was read (uid, owner or phase no longer as judged); left as it is';
          refused.push({ node: d.node, reason });
          actions.push(`${d.node}: not released, ${reason}`);
        } else {
          failures.push(`${d.node}: release failed: ${message(e)}`);
        }
      }
    }
  }

  // Exit status: `fences` is a report and always succeeds. In `recover-fences`, a refused fence is the
  // rule working (it is reported in the summary), not a failure; only a release that failed for another
  // reason than a lost CAS (transport, forbidden, …) or a Lease that could not be re-read fails the step.
  const ok = mode === 'fences' || failures.length === 0;
  const result: Omit<FencesResult, 'summaryHtml'> = {
    rows: first.rows,
    lease,
    leaseDecision: first.lease,
    decisions: first.fences,
    runs,
    releasedNodes,
    refused,
    leaseReleased,
    failures,
    actions,
    ok,
  };
  return { ...result, summaryHtml: renderFencesSummary(mode, result, { namespace: ns, name: leaseName, asOf, config }) };
}

// --- summary --------------------------------------------------------------------------------------------

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

function renderFencesSummary(
  mode: FencesArgs['mode'],
  r: Omit<FencesResult, 'summaryHtml'>,
  ctx: { namespace: string; name: string; asOf: number; config: FencesArgs['config'] },
): string {
  const out: string[] = [];
  out.push(
    `<h2>${mode === 'fences' ? 'Fences' : 'Recover fences'}: ${r.rows.length} node${r.rows.length === 1 ? '' : 's'} carrying a claim</h2>`,
  );
  out.push(`<p>Read at ${e(new Date(ctx.asOf).toISOString())}; annotation prefix <code>${e(ctx.config.annotationPrefix)}</code>.</p>`);

  // The Lease and its holder.
  const leaseId = `${ctx.namespace}/${ctx.name}`;
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
      `<details><summary>Release the Lease by hand (only once its holder's run has ended)</summary><pre><code>${e(unquote(leaseReleaseCommand(ctx.namespace, ctx.name, holder, ctx.config)), 4000)}</code></pre></details>`,
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
      for (const f of r.failures) {
        const node = r.rows.find((row) => f.startsWith(`${row.node}: `))?.node;
        if (node) outcome.set(node, `failed: ${f.slice(node.length + 2)}`);
      }
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

  if (mode === 'recover-fences') {
    const lines = [...r.actions, ...r.failures.map((f) => `FAILED: ${f}`)];
    out.push(
      lines.length
        ? `<h3>Actions</h3>\n<ul>\n${lines.map((l) => `<li>${e(l, MAX_REASON)}</li>`).join('\n')}\n</ul>`
        : '<p>Nothing was released.</p>',
    );
  }
  return `${out.join('\n\n')}\n`;
}
