// A node watched over the run's channel: one streaming GET per watch request (`watch=1`, its
// `resourceVersion`, `allowWatchBookmarks`, `timeoutSeconds`), re-opened where it left off when the
// server ends it, read afresh when that history has expired (410 Gone / Expired, as an HTTP status or
// as an ERROR event in the stream), given up after three failed requests in a row
// (docs/kubernetes-facts.md#k12-watch; the KubeClient.watchNode contract, src/adapters/types.ts).
import { ToolError } from '../../../core/errors.js';
import type { NodeState } from '../../../core/model/node.js';
import { lineSplitter, parseNodeWatchEvent } from '../parse/watchEvent.js';
import type { KubeHttp } from './request.js';

/** Watch requests that fail in a row before the watch is given up (each a second apart). */
const WATCH_ATTEMPTS = 3;

export interface WatchOptions {
  /** how long one watch request lasts before the server ends it (`timeoutSeconds`) */
  watchSeconds: number;
  getNode(name: string): Promise<NodeState>;
}

export async function watchNodeHttp(
  http: KubeHttp,
  opts: WatchOptions,
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
        failures = 0;
      } else if (e.type === 'ERROR') {
        if (e.code === 410) expired = true;
        else broken = `watch ERROR ${e.code}: ${e.message}`;
      } else if (e.type === 'unparseable') {
        broken = `not a watch event: ${e.line}`;
      }
    });
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
    let failure: ToolError | undefined;
    try {
      const a = await http.exchange(req);
      if (a.status === 410) expired = true;
      else if (a.status < 200 || a.status > 299) failure = http.refused(req, a);
      else if (broken) failure = http.refused(req, { status: 500, body: broken });
    } catch (e) {
      if (signal.aborted) return;
      if (!(e instanceof ToolError)) throw e;
      failure = e;
    }
    if (signal.aborted) return;
    if (expired) {
      // The history we asked for is gone: what changed in it is unknown, so read the node now.
      let node: NodeState | undefined;
      try {
        node = await opts.getNode(name);
      } catch (e) {
        if (!(e instanceof ToolError && e.kind === 'not-found')) throw e;
      }
      if (signal.aborted) return;
      onChange(node);
      if (!node) return;
      rv = node.resourceVersion;
      continue;
    }
    if (!failure) continue; // the server ended the request at timeoutSeconds
    if (++failures >= WATCH_ATTEMPTS) throw failure;
    await new Promise((r) => setTimeout(r, 1000));
  }
}
