// The apply and plan modes as the runner composes them: the cluster's channel, the Talos client chosen from the
// talosconfig, the node logs, and the run's ports. The log groups and the step state are the masking
// port's (src/action/masked.ts), the Lease is saved for the post step, the knobs come from the inputs.
// One composition: the main step runs it (src/action/main.ts) and the benchmarks reuse it (bench/lib.ts).
import type { Runner } from '../adapters/exec.js';
import { openKube } from './kube.js';
import { openTalosClient, SHORTEST_REBOOT_GRACE, type OpenedTalos } from '../adapters/talos/open.js';
import { requireTalosctl } from './talosctlOnPath.js';
import type { KubeClient, TalosClient } from '../adapters/types.js';
import { realClock } from '../core/clock.js';
import { annotationKeys } from '../core/model/node.js';
import type { RolloutDeps } from '../pipeline/context.js';
import { formatCommandLine } from '../report/log.js';
import { NodeLogs } from '../report/nodeLog.js';
import { saveHeld } from './state.js';
import type { ActionInputs } from './inputs.js';
import { trackedLock } from './lock.js';
import type { MaskedCore } from './masked.js';

/** What the runner gives the composition. */
export interface RolloutShell {
  /** the runner, every text masked */
  core: MaskedCore;
  /** runs every command; each one is logged into the group of the node whose work started it */
  runner: Runner;
  /** true once the runner was cancelled */
  cancelled: () => boolean;
  /** PATH as the runner set it: where talosctl must be when the run needs it (src/action/talosctlOnPath.ts) */
  path: string | undefined;
  /** the runner's temp directory (RUNNER_TEMP): where the cluster channel's socket directory is made */
  tempDir: string | undefined;
}

export interface ComposedRollout {
  /** the run's deps; the Talos client is opened by `deps.openTalos` once the run has a node to roll */
  deps: RolloutDeps;
  /** closes the cluster channel and the Talos API connection if the run opened one (either would keep the process alive); call once the run is over */
  close(): Promise<void>;
}

/**
 * The apply and plan modes' clients and ports, opened from the inputs. The cluster channel opens at the first request; the
 * Talos client waits until the run has a node to roll (src/pipeline/run.ts calls `openTalos`), so a
 * run with nothing to roll makes no Talos call.
 */
export function composeRollout(inputs: ActionInputs, shell: RolloutShell): ComposedRollout {
  const { config } = inputs;
  const { core, runner } = shell;
  // Several nodes run at once: each node's lines (its commands included) are buffered and written as
  // one contiguous group when it ends; step starts are shown at once, prefixed with the node.
  const logs = new NodeLogs({ info: (l) => core.info(l), startGroup: (t) => core.startGroup(t), endGroup: () => core.endGroup() });
  runner.onCommand((rec) => logs.line(formatCommandLine(rec)));
  let opened: OpenedTalos | undefined;
  const openTalos = async () => {
    // API reads when the talosconfig context has a client certificate, talosctl otherwise; unusable
    // credentials, or an endpoint whose certificate is not apid's for it, fail here, before any mutation.
    opened = await openTalosClient({
      runner,
      path: config.talosconfig,
      serverName: config.talosServerName,
      authPatch: inputs.authPatch,
      log: (l) => logs.line(l),
      // the secrets of each machine config read back (src/adapters/talos/machineConfig/secrets.ts)
      secret: (s) => core.addSecret(s),
    });
    core.info(opened.describe);
    requireTalosctl(opened.talosctl, config.mode, shell.path);
    return { client: opened.client, describe: opened.describe };
  };
  const kube = openKube(runner, config, shell.tempDir, (l) => logs.line(l));
  return {
    deps: {
      ...rolloutDeps(inputs, { core, kube, logs, cancelled: shell.cancelled }),
      openTalos,
      rebootGraceBeforeOpen: SHORTEST_REBOOT_GRACE,
    },
    close: async () => {
      opened?.close();
      await kube.close();
    },
  };
}

export interface RolloutPorts {
  /** the runner, every text masked */
  core: MaskedCore;
  kube: KubeClient;
  /** the Talos client when already open (tests); the main step's is opened by `deps.openTalos` */
  talos?: TalosClient;
  logs: NodeLogs;
  /** true once the runner was cancelled */
  cancelled: () => boolean;
}

export function rolloutDeps(inputs: ActionInputs, ports: RolloutPorts): RolloutDeps {
  const { config, owner, knobs } = inputs;
  const { core, kube, logs } = ports;
  return {
    kube,
    talos: ports.talos,
    config,
    desired: inputs.authPatch.desired,
    patchForms: inputs.authPatch.credentialForms,
    owner,
    keys: annotationKeys(config.annotationPrefix),
    pollIntervalMs: knobs.pollIntervalMs,
    relistPauseMs: knobs.relistPauseMs,
    log: {
      info: (m) => logs.info(m),
      group: (title) => {
        core.startGroup(title);
        return () => core.endGroup();
      },
    },
    nodeLogs: logs,
    redact: (text) => core.redactor.redact(text),
    publishHeld: (held) => saveHeld(core, held),
    cancelled: ports.cancelled,
    lock:
      config.mode === 'apply'
        ? trackedLock(
            {
              kube,
              namespace: config.leaseNamespace,
              name: config.leaseName,
              owner,
              clock: realClock,
              log: (m) => core.info(m),
              renewEveryMs: knobs.leaseRenewMs,
              durationSeconds: knobs.leaseDurationS,
              serverUrl: inputs.github.serverUrl,
              cancelled: ports.cancelled,
            },
            core,
          )
        : undefined,
  };
}
