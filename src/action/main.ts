// The main step: signals → inputs → open clients → run the mode → publish its report. Wiring only:
// each mode returns a plain report, and src/action/publish.ts alone turns it into outputs,
// annotations, summary and exit status, the same for every mode and also when the step fails.
// Everything is written through one masking port (src/action/masked.ts): the log, the log groups,
// the saved state, the publication.
import { readAlertmanagerTransport, readInputs, readRegistryTransport } from './inputs.js';
import { openSilences } from '../adapters/alertmanager/silences.js';
import { REQUEST_TIMEOUT_MS } from '../adapters/registry/https.js';
import { checkGateExpressions } from '../core/gates.js';
import { runnerCore, type MaskedCore } from './masked.js';
import { publish, type ActionReport } from './publish.js';
import { composeRollout } from './rollout.js';
import { openKube } from './kube.js';
import { Runner } from '../adapters/exec.js';
import { realClock } from '../core/clock.js';
import { runFences } from '../fences/run.js';
import { runRolloutMode } from '../pipeline/rolloutMode.js';
import { githubServerUrl } from '../core/owner.js';
import { formatCommandLine } from '../report/log.js';
import { saveAccess } from './state.js';
import { runPreflight } from '../pipeline/preflight.js';

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
  // apply and plan also write the report file into RUNNER_TEMP (src/action/publish.ts says what happens when it cannot)
  const reportFile = { runnerTemp: process.env.RUNNER_TEMP, serverUrl: githubServerUrl(process.env) };
  await publish(report, core, { redactor: core.redactor, reportFile });
}

async function runMode(core: MaskedCore, runner: Runner, cancelled: () => boolean): Promise<ActionReport> {
  const inputs = readInputs(
    (name) => core.getInput(name),
    process.env,
    (secret) => core.addSecret(secret),
  );
  const { config } = inputs;
  // the health gates' CEL, compiled before anything runs (the library is loaded only when a gate names one)
  await checkGateExpressions(config.healthGates);
  if (config.mode === 'fences' || config.mode === 'recover-fences') {
    runner.onCommand((rec) => core.info(formatCommandLine(rec)));
    // Loaded only here: the GitHub client (octokit, undici) is most of the bundle's start-up cost.
    const { GitHubRuns } = await import('../adapters/github.js');
    const runs = new GitHubRuns(config.githubToken, { serverUrl: inputs.github.serverUrl, baseUrl: inputs.github.apiUrl });
    const kube = openKube(runner, config, process.env.RUNNER_TEMP, (l) => core.info(l));
    try {
      return await runFences({
        mode: config.mode,
        kube,
        runs,
        config,
        clock: realClock,
        serverUrl: inputs.github.serverUrl,
      });
    } finally {
      await kube.close();
    }
  }
  core.info(`claim token for this run: ${inputs.owner}`);
  // Before anything can be held: the post step acts with exactly these, never with its own defaults.
  saveAccess(core, { annotationPrefix: config.annotationPrefix, kubeconfig: config.kubeconfig, kubeContext: config.kubeContext });
  const rollout = composeRollout(inputs, { core, runner, cancelled, path: process.env.PATH, tempDir: process.env.RUNNER_TEMP });
  // Does the registry take the new credential? Asked by the run once it has a node to roll (plan: always),
  // after the first listing and before the Lease: a run with nothing to roll asks no registry (docs/preflight.md).
  // The runner's proxies and `registry-ca-file` are read here, when a registry request is about to be
  // made (an InputError naming the variable or the input, still before the Lease or any claim), never
  // with the inputs: a converged run asks no registry, so they cannot fail it.
  const preflight = async () => {
    const transport = config.preflight && inputs.preflight.targets.length > 0 ? readRegistryTransport(config, process.env) : undefined;
    return runPreflight(config.preflight, inputs.preflight.targets, {
      check: async (target) => {
        // Loaded only here: the registry client (undici and its TLS set-up) serves no run that skips the pre-flight.
        const [{ checkRegistry }, { REQUEST_TIMEOUT_MS }] = await Promise.all([
          import('../adapters/registry/tokenFlow.js'),
          import('../adapters/registry/https.js'),
        ]);
        return checkRegistry(target, { ...transport, timeoutMs: REQUEST_TIMEOUT_MS });
      },
      log: (line) => core.info(line),
    });
  };
  // The Alertmanager's silence (docs/alert-silence.md): its CA file and the proxies read only when a roll
  // is about to start; a failure here is the silence's warning, never the roll's.
  const openAlertmanager = config.alertmanagerUrl
    ? () =>
        openSilences({
          url: config.alertmanagerUrl!,
          token: config.alertmanagerToken,
          http: { ...readAlertmanagerTransport(config, process.env), timeoutMs: REQUEST_TIMEOUT_MS },
        })
    : undefined;
  try {
    return await runRolloutMode({ ...rollout.deps, preflight, ...(openAlertmanager ? { openSilences: openAlertmanager } : {}) });
  } finally {
    await rollout.close();
  }
}
