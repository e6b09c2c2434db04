// The post step's shell (`post-if: always()`, a fresh process after the main step ended, cancelled or
// killed): it reads what the main step saved (src/action/state.ts), opens the cluster channel as the main step
// reached the cluster, runs the body (src/fences/post.ts: what this run left, given back as each saved
// phase asks, then the run Lease) and publishes its report with the one publisher (src/action/publish.ts).
// Everything it writes goes through the masking port (src/action/masked.ts), with the secrets of the
// inputs read again (src/action/inputs.ts readInputSecrets): a fresh process knows none of the main
// step's.
import { Runner } from '../adapters/exec.js';
import { openKube as openChannel } from './kube.js';
import type { KubeClient } from '../adapters/types.js';
import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import type { SavedAccess } from '../core/model/phase.js';
import { formatCommandLine } from '../report/log.js';
import type { PostReport } from '../report/postStep.js';
import { runPost, type Saved, type SavedRun } from '../fences/post.js';
import { readInputSecrets } from './inputs.js';
import { runnerCore, type MaskedCore } from './masked.js';
import { publish } from './publish.js';
import { loadAccess, loadHeld, loadLease, type StateStore } from './state.js';

/** What the post step runs on: the saved state, and a log for the commands it runs as they run. */
export interface PostPorts {
  state: StateStore;
  log: (line: string) => void;
  /** the step's masking, applied to every Event message */
  redact?: (text: string) => string;
  /** tests: the cluster and the clock of the release retries (default: kubectl as saved, real time) */
  kube?: (access: { kubeconfig?: string; kubeContext?: string }, runner: Runner) => KubeClient;
  clock?: Clock;
  /** the runner's temp directory (RUNNER_TEMP): where the cluster channel's socket directory is made */
  tempDir?: string;
}

/** The post step as a mode: the saved state read, the body run; never throws. */
export async function postMode({ state, log, redact, kube, clock, tempDir }: PostPorts): Promise<PostReport> {
  const opened: Array<{ close(): Promise<void> }> = [];
  const openKube = ({ kubeconfig, kubeContext }: SavedAccess): KubeClient => {
    const runner = new Runner();
    runner.onCommand((r) => log(formatCommandLine(r)));
    if (kube) return kube({ kubeconfig, kubeContext }, runner);
    // the cluster channel as the main step opened it (src/action/rollout.ts), closed once the body ends
    const channel = openChannel(runner, { kubeconfig, kubeContext }, tempDir, log);
    opened.push(channel);
    return channel;
  };
  try {
    return await runPost({ saved: readSaved(state), openKube, log, redact, clock });
  } finally {
    await Promise.all(opened.map((c) => c.close()));
  }
}

/** Each saved key read on its own: one that cannot be read is named, and the others still count. */
function readSaved(state: StateStore): SavedRun {
  const errors: string[] = [];
  const load = <T>(what: () => T, fallback: T): Saved<T> => {
    try {
      return { value: what(), broken: false };
    } catch (e) {
      errors.push(errorMessage(e));
      return { value: fallback, broken: true };
    }
  };
  const held = load(() => loadHeld(state), []);
  const lease = load(() => loadLease(state), undefined);
  const access = load(() => loadAccess(state), undefined);
  return { held, lease, access, errors };
}

/** The post step as its entry (src/post.ts) runs it: its report published; a failure fails the step, it never throws. */
export async function postStep(core: MaskedCore = runnerCore()): Promise<void> {
  readInputSecrets(
    (name) => core.getInput(name),
    (s) => core.addSecret(s),
  );
  const report = await postMode({
    state: core,
    log: (line) => core.info(line),
    redact: (t) => core.redactor.redact(t),
    tempDir: process.env.RUNNER_TEMP,
  });
  await publish(report, core).catch((e: unknown) => core.setFailed(`post step failed: ${errorMessage(e)}`));
}
