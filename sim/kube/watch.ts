// Streaming watch: chunked, one `{"type","object"}` JSON event per line, replay after a resourceVersion,
// 410 when that RV is older than the kept history, closed at timeoutSeconds or when the sim stops.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { goJson } from './json.js';
import type { ResourceDef } from './resources.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import type { Store, StoreEvent } from './store.js';

export interface WatchQuery {
  labelSelector?: string | null;
  fieldSelector?: string | null;
  resourceVersion?: string | null;
  timeoutSeconds?: number;
}

/**
 * The last event line encoded: a store event reaches every open watch of its kind in one synchronous
 * pass (store.ts emit), and each encoded the same stored object again. Stored objects are never
 * written to, so the same object and type give the same line; anything else is encoded afresh.
 */
let last: { type: string; object: unknown; line: string } | undefined;
function eventLine(type: string, object: unknown): string {
  if (last && last.object === object && last.type === type) return last.line;
  const line = goJson({ type, object }) + '\n';
  last = { type, object, line };
  return line;
}

export class Watches {
  private readonly open = new Set<() => void>();

  constructor(private readonly store: Store) {}

  get count(): number {
    return this.open.size;
  }

  closeAll(): void {
    for (const close of [...this.open]) close();
  }

  /** Parses the selectors first so that a bad one answers 400 before any header is sent. */
  serve(_req: IncomingMessage, res: ServerResponse, def: ResourceDef, ns: string, q: WatchQuery): void {
    const lm = parseLabelSelector(q.labelSelector);
    const fm = parseFieldSelector(q.fieldSelector, def.fields);
    const matches = (o: any) =>
      o !== undefined && (!def.namespaced || !ns || o.metadata.namespace === ns) && lm(o.metadata.labels) && fm(o);

    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    res.flushHeaders();
    res.socket?.setNoDelay(true);

    const send = (type: string, object: unknown) => {
      if (!res.writableEnded) res.write(eventLine(type, object));
    };
    const translate = (e: StoreEvent) => {
      if (e.def !== def) return;
      const now = matches(e.obj);
      if (e.type === 'MODIFIED') {
        const was = matches(e.prev);
        if (now && was) send('MODIFIED', e.obj);
        else if (now) send('ADDED', e.obj);
        else if (was) send('DELETED', e.obj);
      } else if (now) {
        send(e.type, e.obj);
      }
    };

    let timer: NodeJS.Timeout | undefined;
    let unsubscribe = () => {};
    const close = () => {
      if (!this.open.delete(close)) return;
      clearTimeout(timer);
      unsubscribe();
      if (!res.writableEnded) res.end();
    };
    this.open.add(close);
    res.on('close', close);

    const rvParam = q.resourceVersion;
    if (!rvParam || rvParam === '0') {
      // No RV: synthetic ADDED events for the current state, then changes.
      // only encoded, like every event after it: the stored object itself
      for (const o of this.store.list(def, ns)) if (matches(o)) send('ADDED', o);
    } else {
      const from = Number(rvParam);
      if (!Number.isFinite(from) || from < this.store.oldestReplayable) {
        send('ERROR', {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `too old resource version: ${rvParam} (${this.store.oldestReplayable})`,
          reason: 'Expired',
          code: 410,
        });
        close();
        return;
      }
      for (const e of this.store.history) if (e.rv > from) translate(e);
    }
    unsubscribe = this.store.onChange(translate);
    if (q.timeoutSeconds && q.timeoutSeconds > 0) {
      timer = setTimeout(close, q.timeoutSeconds * 1000);
      timer.unref();
    }
  }
}
