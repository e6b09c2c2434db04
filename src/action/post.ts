// The post step (`post-if: always()`), in a fresh process after the main step ended, cancelled or
// killed: a mode like the others. It reads what the main step saved (src/action/state.ts), acts only
// on what this run owns, each held node as its saved phase asks (the rule: src/rules/postStep.ts),
// then on the run Lease, and returns a plain report (src/report/postStep.ts) that the one publisher
// (src/action/publish.ts) shows. The run Lease is released (a CAS on our token) unless a node needs it
// kept: one left claimed or fenced, one whose claim may be on it, or one left as set after Talos may
// have been changed.
// Everything it writes goes through the masking port (src/action/masked.ts), with the secrets of the
// inputs read again (src/action/inputs.ts readInputSecrets): a fresh process knows none of the main
// step's.
import { Runner } from '../adapters/exec.js';
import { Kubectl } from '../adapters/kube/kubectl.js';
import type { KubeClient } from '../adapters/types.js';
import { realClock, type Clock } from '../core/clock.js';
import { errorMessage, ToolError } from '../core/errors.js';
import { annotationKeys, type AnnotationKeys } from '../core/model/node.js';
import type { HeldNode } from '../core/model/phase.js';
import { formatCommandLine } from '../report/log.js';
import { postStepEvents, type PostNodeResult, type PostReport } from '../report/postStep.js';
import { EventWriter } from '../pipeline/events.js';
import { releaseLease } from '../pipeline/lease.js';
import { releaseNodeRetrying, type ReleaseRetryDeps } from '../pipeline/releaseRetry.js';
import { choosePostAction, leftAfter } from '../rules/postStep.js';
import { guardedReleasePatch, releaseShows } from '../rules/release.js';
import { readInputSecrets } from './inputs.js';
import { runnerCore, type MaskedCore } from './masked.js';
import { publish } from './publish.js';
import { loadAccess, loadHeld, loadLease, type SavedLease, type StateStore } from './state.js';

/** What the post step runs on: the saved state, and a log for the commands it runs as they run. */
export interface PostPorts {
  state: StateStore;
  log: (line: string) => void;
  /** the step's masking, applied to every Event message */
  redact?: (text: string) => string;
  /** tests: the cluster and the clock of the release retries (default: kubectl as saved, real time) */
  kube?: (access: { kubeconfig?: string; kubeContext?: string }, runner: Runner) => KubeClient;
  clock?: Clock;
}

/** The post step as a mode: never throws; a failure ends the report with what was done before it. */
export async function postMode(ports: PostPorts): Promise<PostReport> {
  const report: PostReport = { kind: 'post', stateErrors: [], nodes: [], leftClaimed: false };
  try {
    await cleanup(ports, report);
  } catch (e) {
    report.error = errorMessage(e);
  }
  return report;
}

async function cleanup({ state, log, redact, kube: openKube, clock = realClock }: PostPorts, report: PostReport): Promise<void> {
  const load = <T>(what: () => T, fallback: T): { value: T; broken: boolean } => {
    try {
      return { value: what(), broken: false };
    } catch (e) {
      report.stateErrors.push(errorMessage(e));
      return { value: fallback, broken: true };
    }
  };
  const held = load<HeldNode[]>(() => loadHeld(state), []);
  const lease = load<SavedLease | undefined>(() => loadLease(state), undefined);
  const access = load(() => loadAccess(state), undefined);
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
  const runner = new Runner();
  runner.onCommand((r) => log(formatCommandLine(r)));
  const kube = openKube ? openKube({ kubeconfig, kubeContext }, runner) : new Kubectl({ runner, kubeconfig, context: kubeContext });
  // a release that fails for a reason that passes is tried again, a re-read deciding (src/pipeline/releaseRetry.ts)
  const retry = { clock, note: (m: string) => log(m) };

  // a held list that could not be read may name a node this run left claimed: keep the Lease for it
  let keepLease = held.broken;
  report.leftClaimed = held.broken;
  for (const h of held.value) {
    const result = await cleanupNode(kube, keys, h, retry);
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
async function cleanupNode(kube: KubeClient, keys: AnnotationKeys, held: HeldNode, retry: ReleaseRetryDeps): Promise<PostNodeResult> {
  const read = await kube.getNode(held.node).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
  const now = read instanceof Error ? undefined : read;
  const choice = choosePostAction(held, now, keys);
  const result: PostNodeResult = { held, choice, now, readError: read instanceof Error ? read.message : undefined };
  if (choice.action !== 'release') return result;
  try {
    await releaseNodeRetrying(
      { ...retry, kube },
      held.capture,
      keys,
      (c) => guardedReleasePatch(c, keys, choice.expectedPhase),
      (n) => releaseShows(n, held.capture, keys, {}),
    );
  } catch (e) {
    result.releaseError = e instanceof ToolError ? `${e.kind}: ${e.message}` : String(e);
  }
  return result;
}

/** The post step as its entry (src/post.ts) runs it: its report published; a failure fails the step, it never throws. */
export async function postStep(core: MaskedCore = runnerCore()): Promise<void> {
  readInputSecrets(
    (name) => core.getInput(name),
    (s) => core.addSecret(s),
  );
  const report = await postMode({ state: core, log: (line) => core.info(line), redact: (t) => core.redactor.redact(t) });
  await publish(report, core).catch((e: unknown) => core.setFailed(`post step failed: ${errorMessage(e)}`));
}
