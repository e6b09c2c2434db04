// The events of a streaming watch as `kubectl get --raw '…?watch=true'` prints them: the apiserver's
// body copied unchanged, one `{"type":…,"object":…}` JSON document per line (docs/kubernetes-facts.md#k12-watch).
import type { NodeState } from '../../../core/model/node.js';
import { nodeFromJson } from './nodeJson.js';

export type NodeWatchEvent =
  | { type: 'ADDED' | 'MODIFIED'; node: NodeState }
  | { type: 'DELETED'; resourceVersion: string }
  /** a checkpoint without a change: only its resourceVersion counts */
  | { type: 'BOOKMARK'; resourceVersion: string }
  /** a Status ending the watch; 410 (`Expired`/`Gone`): the history asked for is gone, re-read and watch again */
  | { type: 'ERROR'; code: number; message: string }
  /** a line that is not a watch event: the stream cannot be trusted any more */
  | { type: 'unparseable'; line: string };

type Json = Record<string, unknown>;

function rvOf(o: Json | undefined): string {
  const v = (o?.metadata as Json | undefined)?.resourceVersion;
  return typeof v === 'string' ? v : '';
}

export function parseNodeWatchEvent(line: string): NodeWatchEvent {
  let e: Json;
  try {
    e = JSON.parse(line) as Json;
  } catch {
    return { type: 'unparseable', line: line.slice(0, 200) };
  }
  const object = (e.object && typeof e.object === 'object' ? e.object : undefined) as Json | undefined;
  switch (e.type) {
    case 'ADDED':
    case 'MODIFIED':
      try {
        return { type: e.type, node: nodeFromJson(object) };
      } catch {
        return { type: 'unparseable', line: line.slice(0, 200) };
      }
    case 'DELETED':
      return { type: 'DELETED', resourceVersion: rvOf(object) };
    case 'BOOKMARK':
      return { type: 'BOOKMARK', resourceVersion: rvOf(object) };
    case 'ERROR':
      return {
        type: 'ERROR',
        code: typeof object?.code === 'number' ? object.code : 0,
        message: typeof object?.message === 'string' ? object.message : '',
      };
    default:
      return { type: 'unparseable', line: line.slice(0, 200) };
  }
}

/** Splits a stream into lines: feed it chunks, it calls `onLine` for each complete non-empty line. */
export function lineSplitter(onLine: (line: string) => void): (chunk: string) => void {
  let rest = '';
  return (chunk) => {
    rest += chunk;
    let i: number;
    while ((i = rest.indexOf('\n')) >= 0) {
      const line = rest.slice(0, i).trim();
      rest = rest.slice(i + 1);
      if (line) onLine(line);
    }
  };
}
