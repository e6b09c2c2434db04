// The apply and plan modes' ports, as the runner provides them: the log groups and the step state
// are the masking port's (src/action/masked.ts), the Lease is saved for the post step, the knobs
// come from the inputs.
import type { KubeClient, TalosClient } from '../adapters/types.js';
import { realClock } from '../core/clock.js';
import { annotationKeys } from '../core/model.js';
import type { RolloutDeps } from '../pipeline/context.js';
import type { NodeLogs } from '../report/nodeLog.js';
import { saveHeld } from './state.js';
import type { ActionInputs } from './inputs.js';
import { trackedLock } from './lock.js';
import type { MaskedCore } from './masked.js';

export interface RolloutPorts {
  /** the runner, every text masked */
  core: MaskedCore;
  kube: KubeClient;
  talos: TalosClient;
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
              serverUrl: inputs.github.serverUrl,
            },
            core,
          )
        : undefined,
  };
}
