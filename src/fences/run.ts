// `mode: fences` (read-only report) and `mode: recover-fences` (release what is provably abandoned).
// The decisions are in rules/fences.ts; this module reads, looks up runs and releases, and returns
// a plain report. It renders nothing: the job summary is report/fences.ts's, and the outputs,
// annotations and exit status are the action's one publisher's (src/action/publish.ts).
import type { RunAttemptInfo, RunLookup } from '../adapters/github.js';
import type { KubeClient } from '../adapters/types.js';
import { casLost as lostCas, errorMessage } from '../core/errors.js';
import { annotationKeys } from '../core/model/node.js';
import { parseOwnerToken, runUrl } from '../core/owner.js';
import type { Clock } from '../core/clock.js';
import { sendKeepingTheirMarks } from '../pipeline/autoscalerMarks.js';
import { judgeFences, ownersToLookUp, type FenceDecision } from '../rules/fences.js';
import { releaseLeasePatch } from '../rules/lease.js';
import { guardedReleasePatch } from '../rules/release.js';
import type { FencesConfig, FencesFailure, FencesMode, FencesReport } from '../report/fences.js';

// The report's shape is the renderer's input, so it lives beside the renderer (report/fences.ts).
export type { FencesConfig, FencesFailure, FencesMode, FencesReport } from '../report/fences.js';

export interface FencesArgs {
  mode: FencesMode;
  kube: KubeClient;
  runs: RunLookup;
  config: FencesConfig;
  clock: Clock;
  /** web root for run URLs (the runner's GITHUB_SERVER_URL, read by the action's shell) */
  serverUrl?: string;
}

async function lookUpRuns(owners: string[], runs: RunLookup, serverUrl: string | undefined): Promise<Map<string, RunAttemptInfo>> {
  const out = new Map<string, RunAttemptInfo>();
  await Promise.all(
    owners.map(async (owner) => {
      const token = parseOwnerToken(owner);
      if (!token) return;
      try {
        out.set(owner, await runs.runAttempt(token));
      } catch (e) {
        // A lookup must never turn into `completed` by accident: a throw is just another unknown.
        out.set(owner, { state: 'unknown', url: runUrl(token, serverUrl), error: errorMessage(e) });
      }
    }),
  );
  return out;
}

export async function runFences(args: FencesArgs): Promise<FencesReport> {
  const { mode, kube, config, clock } = args;
  const keys = annotationKeys(config.annotationPrefix);
  const ns = config.leaseNamespace;
  const leaseName = config.leaseName;
  const asOf = clock.now();

  const nodes = await kube.listNodes();
  const lease = await kube.getLease(ns, leaseName);
  const runs = await lookUpRuns(ownersToLookUp(nodes, keys, lease), args.runs, args.serverUrl);
  const first = judgeFences({ nodes, keys, lease, runs, kubectl: config });

  const releasedNodes: string[] = [];
  const refused: Array<{ node: string; reason: string }> = [];
  const failures: FencesFailure[] = [];
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
        else failures.push({ reason: `release from ${holder} failed: ${errorMessage(e)}` });
      }
      // Fences are judged against the Lease as it is now: freed by us, or taken by a run that just started.
      try {
        leaseNow = await kube.getLease(ns, leaseName);
      } catch (e) {
        leaseReadError = errorMessage(e);
        failures.push({ reason: `reading it again failed: ${leaseReadError}` });
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
      // the release tests uid and owner, and phase=claimed makes the decision itself part of the
      // CAS: a fence that moved to `mutating` since the read is not released. An autoscaler mark the
      // claim recorded that someone changed since is kept as they set it (src/pipeline/autoscalerMarks.ts).
      try {
        await sendKeepingTheirMarks(
          { kube, keys, note: (m) => actions.push(m) },
          d.capture,
          (c) => guardedReleasePatch(c, keys, 'claimed'),
          (ops) => kube.patchNode(d.node, ops),
        );
        releasedNodes.push(d.node);
        actions.push(`${d.node}: released (${d.reason})`);
      } catch (e) {
        if (lostCas(e)) {
          const reason = 'the node changed since it was read (uid, owner or phase no longer as judged); left as it is';
          refused.push({ node: d.node, reason });
          actions.push(`${d.node}: not released, ${reason}`);
        } else {
          failures.push({ node: d.node, reason: `release failed: ${errorMessage(e)}` });
        }
      }
    }
  }

  // Exit status: `fences` is a report and always succeeds. In `recover-fences`, a refused fence is the
  // rule working (it is reported in the summary), not a failure; only a release that failed for another
  // reason than a lost CAS (transport, forbidden, …) or a Lease that could not be re-read fails the step.
  const ok = mode === 'fences' || failures.length === 0;
  return {
    kind: 'fences',
    mode,
    result: !ok ? 'failed' : releasedNodes.length || leaseReleased ? 'processed' : 'clean',
    // only what the report names: the caller's Config also carries the token and the patch path
    config: {
      annotationPrefix: config.annotationPrefix,
      leaseNamespace: ns,
      leaseName,
      kubeconfig: config.kubeconfig,
      kubeContext: config.kubeContext,
    },
    leaseRef: { namespace: ns, name: leaseName },
    asOf,
    rows: first.rows,
    quarantined: first.quarantined,
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
}
