// The post step's body (`post-if: always()`, in a fresh process after the main step ended, cancelled or
// killed), beside the fences modes: like `recover-fences` (run.ts), it gives back what a run left on the
// cluster through the CAS-guarded release (src/rules/release.ts guardedReleasePatch), but only what this
// run owns, as the main step saved it. Each held node as its saved phase asks (the rule:
// src/rules/postStep.ts), then the run Lease; it returns a plain report (src/report/postStep.ts) and
// renders nothing. The Lease is released (a CAS on our token) unless a node needs it kept: one left
// claimed or fenced, one whose claim may be on it, or one left as set after Talos may have been changed.
// The shell (src/action/post.ts) reads the saved state, opens the cluster's channel as the main step
// saved it and publishes the report.
import type { KubeClient } from '../adapters/types.js';
import { realClock, type Clock } from '../core/clock.js';
import { errorMessage, ToolError } from '../core/errors.js';
import { annotationKeys, type AnnotationKeys } from '../core/model/node.js';
import type { HeldNode, SavedAccess, SavedLease } from '../core/model/phase.js';
import { postStepEvents, type PostNodeResult, type PostReport } from '../report/postStep.js';
import { EventWriter } from '../pipeline/events.js';
import { releaseLease } from '../pipeline/lease.js';
import { releaseNode } from '../pipeline/nodeWrite.js';
import type { WriteDeps } from '../pipeline/write.js';
import { choosePostAction, leftAfter } from '../rules/postStep.js';
import { guardedReleasePatch } from '../rules/release.js';

/** One saved value as the shell read it: `broken` when it could not be read (`value` is then the fallback). */
export interface Saved<T> {
  value: T;
  broken: boolean;
}

/** What the main step saved, as read: each value, and why each that could not be read could not, in order. */
export interface SavedRun {
  held: Saved<HeldNode[]>;
  lease: Saved<SavedLease | undefined>;
  access: Saved<SavedAccess | undefined>;
  errors: string[];
}

export interface PostArgs {
  saved: SavedRun;
  /** the cluster as the main step reached it; called only when there is something to give back */
  openKube: (access: SavedAccess) => KubeClient;
  /** a line for the step's log */
  log: (line: string) => void;
  /** the step's masking, applied to every Event message */
  redact?: (text: string) => string;
  /** the clock of the release retries (default: real time) */
  clock?: Clock;
}

/** The post step's body: never throws; a failure ends the report with what was done before it. */
export async function runPost(args: PostArgs): Promise<PostReport> {
  const report: PostReport = { kind: 'post', stateErrors: [...args.saved.errors], nodes: [], leftClaimed: false };
  try {
    await giveBack(args, report);
  } catch (e) {
    report.error = errorMessage(e);
  }
  return report;
}

async function giveBack({ saved, openKube, log, redact, clock = realClock }: PostArgs, report: PostReport): Promise<void> {
  const { held, lease, access } = saved;
  if (held.value.length === 0 && !lease.value && !held.broken && !lease.broken) {
    report.nothingHeld = true;
    return;
  }
  if (!access.value) {
    report.noAccess = true;
    return;
  }
  const { kubeconfig, kubeContext } = access.value;
  const keys = annotationKeys(access.value.annotationPrefix);
  report.keys = keys;
  report.kubectl = { kubeconfig, kubeContext };
  const kube = openKube(access.value);
  // a release whose answer was lost is judged by a re-read, one that fails for a reason that passes is
  // tried again: the one writer (src/pipeline/write.ts)
  const retry = { clock, note: (m: string) => log(m) };

  // a held list that could not be read may name a node this run left claimed: keep the Lease for it
  let keepLease = held.broken;
  report.leftClaimed = held.broken;
  for (const h of held.value) {
    const result = await giveBackNode(kube, keys, h, retry);
    report.nodes.push(result);
    const left = leftAfter(result.choice, result.releaseError !== undefined);
    if (left.left) report.leftClaimed = true;
    if (left.keepsLease) keepLease = true;
  }

  // what the main step could not tell the cluster, told on each node (a failed write is only warned about)
  const events = new EventWriter(kube, redact, lease.value?.owner ?? held.value[0]?.owner);
  await events.write(postStepEvents(report, new Date().toISOString()), (m) => log(m));

  if (lease.value) {
    const { namespace, name, owner } = lease.value;
    if (keepLease) report.lease = { namespace, name, outcome: 'kept' };
    else {
      try {
        const r = await releaseLease({ kube, clock, log }, namespace, name, owner);
        report.lease = r.released
          ? { namespace, name, outcome: 'released' }
          : { namespace, name, outcome: 'not-released', why: r.why ?? r.message };
      } catch (e) {
        report.lease = { namespace, name, outcome: 'not-released', why: errorMessage(e) };
      }
    }
  }
}

/** One held node: read it, ask the rule, and release it when the rule says so. */
async function giveBackNode(
  kube: KubeClient,
  keys: AnnotationKeys,
  held: HeldNode,
  retry: Omit<WriteDeps, 'kube'>,
): Promise<PostNodeResult> {
  const read = await kube.getNode(held.node).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
  const now = read instanceof Error ? undefined : read;
  const choice = choosePostAction(held, now, keys);
  const result: PostNodeResult = { held, choice, now, readError: read instanceof Error ? read.message : undefined };
  if (choice.action !== 'release') return result;
  try {
    await releaseNode({ ...retry, kube, keptMark: (line) => (result.marksKept ??= []).push(line) }, held.capture, keys, (c) =>
      guardedReleasePatch(c, keys, choice.expectedPhase),
    );
  } catch (e) {
    result.releaseError = e instanceof ToolError ? `${e.kind}: ${e.message}` : String(e);
  }
  return result;
}
