// The main step: signals → inputs → open clients → run the mode → publish its report. Wiring only:
// each mode returns a plain report, and src/action/publish.ts alone turns it into outputs,
// annotations, summary and exit status, the same for every mode and also when the step fails.
// Everything is written through one masking port (src/action/masked.ts): the log, the log groups,
// the saved state, the publication.
import { readInputs } from './inputs.js';
import { runnerCore, type MaskedCore } from './masked.js';
import { publish, type ActionReport } from './publish.js';
import { rolloutDeps } from './rollout.js';
import { Runner } from '../adapters/exec.js';
import { Kubectl } from '../adapters/kube/kubectl.js';
import { openTalosClient } from '../adapters/talos/open.js';
import { realClock } from '../core/clock.js';
import { runFences } from '../fences/run.js';
import { runRolloutMode } from '../pipeline/rolloutMode.js';
import { formatCommandLine } from '../report/log.js';
import { NodeLogs } from '../report/nodeLog.js';
import { saveAccess } from './state.js';
import { requireTalosctl } from './talosctlOnPath.js';

export async function run(): Promise<void> {
  const core = runnerCore();
  const runner = new Runner();
  let cancelled = false;
  const onSignal = (sig: string) => {
    // Stop starting steps, end the running tool, and let the post step clean up.
    core.warning(`received ${sig}: stopping after the current command`);
    cancelled = true;
    runner.cancel();
  };
  process.once('SIGINT', () => onSignal('SIGINT'));
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  const report = await runMode(core, runner, () => cancelled).catch((error: unknown): ActionReport => ({ kind: 'error', error }));
  await publish(report, core, { redactor: core.redactor });
}

async function runMode(core: MaskedCore, runner: Runner, cancelled: () => boolean): Promise<ActionReport> {
  const inputs = readInputs(
    (name) => core.getInput(name),
    process.env,
    (secret) => core.addSecret(secret),
  );
  const { config } = inputs;
  const stopPlainLog = runner.onCommand((rec) => core.info(formatCommandLine(rec)));
  const kube = new Kubectl({ runner, kubeconfig: config.kubeconfig, context: config.kubeContext });
  if (config.mode === 'fences' || config.mode === 'recover-fences') {
    // Loaded only here: the GitHub client (octokit, undici) is most of the bundle's start-up cost.
    const { GitHubRuns } = await import('../adapters/github.js');
    const runs = new GitHubRuns(config.githubToken, { serverUrl: inputs.github.serverUrl, baseUrl: inputs.github.apiUrl });
    return runFences({ mode: config.mode, kube, runs, config, clock: realClock, serverUrl: inputs.github.serverUrl });
  }
  core.info(`claim token for this run: ${inputs.owner}`);
  // Before anything can be held: the post step acts with exactly these, never with its own defaults.
  saveAccess(core, { annotationPrefix: config.annotationPrefix, kubeconfig: config.kubeconfig, kubeContext: config.kubeContext });
  // Several nodes run at once: each node's lines (its commands included) are buffered and written as
  // one contiguous group when it ends; step starts are shown at once, prefixed with the node.
  const logs = new NodeLogs({ info: (l) => core.info(l), startGroup: (t) => core.startGroup(t), endGroup: () => core.endGroup() });
  stopPlainLog();
  runner.onCommand((rec) => logs.line(formatCommandLine(rec)));
  // API reads when the talosconfig context has a client certificate, talosctl otherwise; unusable
  // credentials, or an endpoint whose certificate is not apid's for it, fail here, before any mutation.
  const opened = await openTalosClient({
    runner,
    path: config.talosconfig,
    serverName: config.talosServerName,
    authPatch: inputs.authPatch,
    log: (l) => logs.line(l),
    // the secrets of each machine config read back (src/adapters/talos/machineConfig/secrets.ts)
    secret: (s) => core.addSecret(s),
  });
  core.info(opened.describe);
  try {
    requireTalosctl(opened.talosctl, config.mode, process.env.PATH);
    return await runRolloutMode(rolloutDeps(inputs, { core, kube, talos: opened.client, logs, cancelled }), opened.describe);
  } finally {
    opened.close(); // the API connection would keep the process alive
  }
}
