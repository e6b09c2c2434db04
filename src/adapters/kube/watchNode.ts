// A node watched through kubectl: one `kubectl get --raw` process per watch request, re-opened when
// the server ends it, resumed from the last resourceVersion seen, and read afresh when that history
// has expired. kubectl copies the apiserver's stream to stdout as it arrives, and the query is ours,
// so the resourceVersion to resume from is too (docs/kubernetes-facts.md#k12-watch). The loop over
// the requests is src/adapters/kube/watchLoop.ts's, shared with the channel's watch.
import type { ToolError } from '../../core/errors.js';
import type { NodeState } from '../../core/model/node.js';
import type { RunResult } from '../exec.js';
import { watchLoop, type WatchRequestEnd } from './watchLoop.js';

/** What the watch needs of the kubectl client (src/adapters/kube/kubectl.ts). */
export interface WatchPort {
  /** how long one watch request lasts before it is re-opened (`timeoutSeconds`) */
  watchSeconds: number;
  exec(args: string[], opts: { timeoutMs?: number; signal?: AbortSignal; onStdout?: (chunk: string) => void }): Promise<RunResult>;
  getNode(name: string): Promise<NodeState>;
  failure(args: string[], res: RunResult, stderr: string, node?: string): ToolError;
}

/** Watches node `name` from `sinceResourceVersion` until `signal` aborts (the KubeClient.watchNode contract, src/adapters/types.ts). */
export function watchNode(
  kubectl: WatchPort,
  name: string,
  sinceResourceVersion: string,
  onChange: (node: NodeState | undefined) => void,
  signal: AbortSignal,
): Promise<void> {
  const request = async (rv: string, feed: (chunk: string) => void, broken: () => string): Promise<WatchRequestEnd> => {
    const query = new URLSearchParams({
      fieldSelector: `metadata.name=${name}`,
      watch: 'true',
      timeoutSeconds: String(kubectl.watchSeconds),
    });
    if (rv) query.set('resourceVersion', rv);
    const args = ['get', '--raw', `/api/v1/nodes?${query.toString()}`];
    // A watch that hangs without the server ending it would leave us blind: our deadline ends it.
    const res = await kubectl.exec(args, { timeoutMs: (kubectl.watchSeconds + 30) * 1000, signal, onStdout: feed });
    if (res.exitCode !== 0 && /\(Expired\)|\(Gone\)|too old resource version/.test(res.stderr)) return { kind: 'expired' };
    const why = broken();
    if (res.exitCode === 0 && !why) return { kind: 'ended' };
    return { kind: 'failed', error: kubectl.failure(args, res, why || res.stderr, name) };
  };
  return watchLoop({ request, getNode: (n) => kubectl.getNode(n) }, name, sinceResourceVersion, onChange, signal);
}
