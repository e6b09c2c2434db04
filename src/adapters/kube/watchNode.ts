// A node watched through kubectl: one `kubectl get --raw` process per watch request, re-opened when
// the server ends it, resumed from the last resourceVersion seen, and read afresh when that history
// has expired. kubectl copies the apiserver's stream to stdout as it arrives, and the query is ours,
// so the resourceVersion to resume from is too (docs/kubernetes-facts.md#k12-watch).
import { ToolError } from '../../core/errors.js';
import type { NodeState } from '../../core/model/node.js';
import type { RunResult } from '../exec.js';
import { lineSplitter, parseNodeWatchEvent } from './parse/watchEvent.js';

/** Watch requests that fail in a row before the watch is given up (each a second apart). */
const WATCH_ATTEMPTS = 3;

/** What the watch needs of the kubectl client (src/adapters/kube/kubectl.ts). */
export interface WatchPort {
  /** how long one watch request lasts before it is re-opened (`timeoutSeconds`) */
  watchSeconds: number;
  exec(args: string[], opts: { timeoutMs?: number; signal?: AbortSignal; onStdout?: (chunk: string) => void }): Promise<RunResult>;
  getNode(name: string): Promise<NodeState>;
  failure(args: string[], res: RunResult, stderr: string, node?: string): ToolError;
}

/** Watches node `name` from `sinceResourceVersion` until `signal` aborts (the KubeClient.watchNode contract, src/adapters/types.ts). */
export async function watchNode(
  kubectl: WatchPort,
  name: string,
  sinceResourceVersion: string,
  onChange: (node: NodeState | undefined) => void,
  signal: AbortSignal,
): Promise<void> {
  let rv = sinceResourceVersion;
  let failures = 0;
  while (!signal.aborted) {
    let expired = false;
    let broken = '';
    const feed = lineSplitter((line) => {
      if (signal.aborted || expired || broken) return;
      const e = parseNodeWatchEvent(line);
      if (e.type === 'ADDED' || e.type === 'MODIFIED') {
        rv = e.node.resourceVersion || rv;
        failures = 0;
        onChange(e.node);
      } else if (e.type === 'DELETED') {
        rv = e.resourceVersion || rv;
        onChange(undefined);
      } else if (e.type === 'BOOKMARK') {
        rv = e.resourceVersion || rv;
      } else if (e.type === 'ERROR') {
        if (e.code === 410) expired = true;
        else broken = `watch ERROR ${e.code}: ${e.message}`;
      } else if (e.type === 'unparseable') {
        broken = `not a watch event: ${e.line}`;
      }
    });
    const query = new URLSearchParams({
      fieldSelector: `metadata.name=${name}`,
      watch: 'true',
      timeoutSeconds: String(kubectl.watchSeconds),
    });
    if (rv) query.set('resourceVersion', rv);
    const args = ['get', '--raw', `/api/v1/nodes?${query.toString()}`];
    // A watch that hangs without the server ending it would leave us blind: our deadline ends it.
    const res = await kubectl.exec(args, { timeoutMs: (kubectl.watchSeconds + 30) * 1000, signal, onStdout: feed });
    if (signal.aborted) return;
    if (!expired && res.exitCode !== 0 && /\(Expired\)|\(Gone\)|too old resource version/.test(res.stderr)) expired = true;
    if (expired) {
      // The history we asked for is gone: what changed in it is unknown, so read the node now.
      let node: NodeState | undefined;
      try {
        node = await kubectl.getNode(name);
      } catch (e) {
        if (!(e instanceof ToolError && e.kind === 'not-found')) throw e;
      }
      if (signal.aborted) return;
      onChange(node);
      if (!node) return;
      rv = node.resourceVersion;
      continue;
    }
    if (res.exitCode === 0 && !broken) continue; // the server ended the request at timeoutSeconds
    if (++failures >= WATCH_ATTEMPTS) throw kubectl.failure(args, res, broken || res.stderr, name);
    await new Promise((r) => setTimeout(r, 1000));
  }
}
