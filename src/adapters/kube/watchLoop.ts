// The node watch's loop, one home for both ways of reaching the cluster (the channel's HTTP stream,
// src/adapters/kube/http/watch.ts; kubectl's `get --raw`, src/adapters/kube/watchNode.ts): the events
// read off the stream, the resourceVersion to resume from (the last node, DELETED or BOOKMARK seen),
// the history read afresh when it expired (410 Gone / Expired, as an answer or an ERROR event), and
// the watch given up after three failed requests in a row (docs/kubernetes-facts.md#k12-watch; the
// KubeClient.watchNode contract, src/adapters/types.ts). Each transport only sends one request.
import { ToolError } from '../../core/errors.js';
import type { NodeState } from '../../core/model/node.js';
import { lineSplitter, parseNodeWatchEvent } from './parse/watchEvent.js';

/** Watch requests that fail in a row before the watch is given up (each a second apart). */
const WATCH_ATTEMPTS = 3;

/** How one watch request ended: the server ended it (`timeoutSeconds`), the history asked for expired, or it failed. */
export type WatchRequestEnd = { kind: 'ended' } | { kind: 'expired' } | { kind: 'failed'; error: ToolError };

/** One watch request of node `name`, as a transport sends it. */
export interface WatchTransport {
  /**
   * Sends one watch request from resourceVersion `rv` (empty: from now) and feeds its stream to
   * `feed` as it arrives; `broken()` says, once it ended, why the stream itself was unusable (an
   * ERROR event other than 410, a line that is no watch event), which makes the request a failure.
   */
  request(rv: string, feed: (chunk: string) => void, broken: () => string): Promise<WatchRequestEnd>;
  getNode(name: string): Promise<NodeState>;
}

/** Watches node `name` from `sinceResourceVersion` until `signal` aborts. */
export async function watchLoop(
  t: WatchTransport,
  name: string,
  sinceResourceVersion: string,
  onChange: (node: NodeState | undefined) => void,
  signal: AbortSignal,
): Promise<void> {
  let rv = sinceResourceVersion;
  let failures = 0;
  while (!signal.aborted) {
    const stream = { expired: false, broken: '' };
    const feed = lineSplitter((line) => {
      if (signal.aborted || stream.expired || stream.broken) return;
      const e = parseNodeWatchEvent(line);
      if (e.type === 'ADDED' || e.type === 'MODIFIED') {
        rv = e.node.resourceVersion || rv;
        failures = 0;
        onChange(e.node);
      } else if (e.type === 'DELETED') {
        rv = e.resourceVersion || rv;
        onChange(undefined);
      } else if (e.type === 'BOOKMARK') {
        // the server is alive and the history moved on: resume from here
        rv = e.resourceVersion || rv;
        failures = 0;
      } else if (e.type === 'ERROR') {
        if (e.code === 410) stream.expired = true;
        else stream.broken = `watch ERROR ${e.code}: ${e.message}`;
      } else if (e.type === 'unparseable') {
        stream.broken = `not a watch event: ${e.line}`;
      }
    });
    let end: WatchRequestEnd;
    try {
      end = await t.request(rv, feed, () => stream.broken);
    } catch (e) {
      if (signal.aborted) return;
      if (!(e instanceof ToolError)) throw e;
      end = { kind: 'failed', error: e };
    }
    if (signal.aborted) return;
    if (stream.expired || end.kind === 'expired') {
      // The history we asked for is gone: what changed in it is unknown, so read the node now.
      let node: NodeState | undefined;
      try {
        node = await t.getNode(name);
      } catch (e) {
        if (!(e instanceof ToolError && e.kind === 'not-found')) throw e;
      }
      if (signal.aborted) return;
      onChange(node);
      if (!node) return;
      rv = node.resourceVersion;
      continue;
    }
    if (end.kind === 'ended') continue; // the server ended the request at timeoutSeconds
    if (++failures >= WATCH_ATTEMPTS) throw end.error;
    await new Promise((r) => setTimeout(r, 1000));
  }
}
