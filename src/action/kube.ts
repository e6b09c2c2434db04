// The cluster as every mode reaches it, main step and post step alike: one channel per step
// (src/adapters/kube/http/), its requests logged as they end. Its own file, so the post step's bundle
// does not carry the rollout's composition.
import type { Runner } from '../adapters/exec.js';
import { HttpKube } from '../adapters/kube/http/client.js';
import type { Config } from '../core/config.js';
import { formatRequestLine } from '../report/log.js';

/**
 * The cluster as every mode reaches it: one channel (a `kubectl proxy` on a Unix socket in the runner's
 * temp directory, started at the first request) with the kubeconfig and context of the inputs; every
 * read and write a request over it, logged as it ends (docs/kube-channel.md). Close it once the mode is over.
 */
export function openKube(
  runner: Runner,
  config: Pick<Config, 'kubeconfig' | 'kubeContext'>,
  tempDir: string | undefined,
  log?: (line: string) => void,
): HttpKube {
  const kube = new HttpKube({ runner, kubeconfig: config.kubeconfig, context: config.kubeContext, tempDir });
  if (log) kube.http.listeners.add((r) => log(formatRequestLine(r)));
  return kube;
}
