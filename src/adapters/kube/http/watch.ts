// A node watched over the run's channel: one streaming GET per watch request (`watch=1`, its
// `resourceVersion`, `allowWatchBookmarks`, `timeoutSeconds`), re-opened where it left off when the
// server ends it, read afresh when that history has expired (410 Gone / Expired, as an HTTP status or
// as an ERROR event in the stream), given up after three failed requests in a row
// (docs/kubernetes-facts.md#k12-watch; the KubeClient.watchNode contract, src/adapters/types.ts). The
// loop over the requests is src/adapters/kube/watchLoop.ts's, shared with the kubectl adapter.
import type { NodeState } from '../../../core/model/node.js';
import { watchLoop, type WatchRequestEnd } from '../watchLoop.js';
import type { KubeHttp } from './request.js';

export interface WatchOptions {
  /** how long one watch request lasts before the server ends it (`timeoutSeconds`) */
  watchSeconds: number;
  getNode(name: string): Promise<NodeState>;
}

export function watchNodeHttp(
  http: KubeHttp,
  opts: WatchOptions,
  name: string,
  sinceResourceVersion: string,
  onChange: (node: NodeState | undefined) => void,
  signal: AbortSignal,
): Promise<void> {
  const request = async (rv: string, feed: (chunk: string) => void, broken: () => string): Promise<WatchRequestEnd> => {
    const query = new URLSearchParams({
      fieldSelector: `metadata.name=${name}`,
      watch: '1',
      allowWatchBookmarks: 'true',
      timeoutSeconds: String(opts.watchSeconds),
    });
    if (rv) query.set('resourceVersion', rv);
    const req = {
      method: 'GET' as const,
      path: `/api/v1/nodes?${query.toString()}`,
      // a watch the server never ends would leave us blind: our deadline ends it
      timeoutMs: (opts.watchSeconds + 30) * 1000,
      signal,
      node: name,
      op: 'watch',
      onChunk: feed,
    };
    const a = await http.exchange(req);
    if (a.status === 410) return { kind: 'expired' };
    if (a.status < 200 || a.status > 299) return { kind: 'failed', error: http.refused(req, a) };
    const why = broken();
    return why ? { kind: 'failed', error: http.refused(req, { status: 500, body: why }) } : { kind: 'ended' };
  };
  return watchLoop({ request, getNode: (n) => opts.getNode(n) }, name, sinceResourceVersion, onChange, signal);
}
