// The object store: one global, monotonic resourceVersion (like an etcd revision), a bounded event
// history for watch replay, and synchronous change listeners for the controllers.
import { randomUUID } from 'node:crypto';
import { clone } from './json.js';
import type { ResourceDef } from './resources.js';
import { isPlainJson } from './plainJson.js';
import { sameJson } from './sameJson.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  rv: number;
  def: ResourceDef;
  type: EventType;
  /** the object after the change (for DELETED: its last state, carrying the deletion's RV) */
  obj: any;
  /** the object before the change (MODIFIED and DELETED) */
  prev?: any;
}

export type Listener = (e: StoreEvent) => void;

const historyLimit = 2000;

function key(def: ResourceDef, ns: string, name: string): string {
  return `${def.group}/${def.plural}/${def.namespaced ? ns : ''}/${name}`;
}

/** The object with its RV blanked, for the "byte-identical write is a no-op" rule. */
function contentOf(obj: any): any {
  const c = { ...obj, metadata: { ...obj.metadata } };
  delete c.metadata.resourceVersion;
  return c;
}

/** What update() answers: the caller's own copy of what was stored, parsed from the stored text only if read. */
export interface Written {
  readonly obj: any;
  readonly changed: boolean;
}

/**
 * The answer of a write that changed the object, parsed from the text the stored copy was parsed from
 * (so equal to it, RV included) when first read: most writes are the twin's own controllers' (a
 * heartbeat every 2 s per node), which never read it. The text is a string, so nothing done to the
 * store meanwhile can change what the answer will be.
 */
function lazyAnswer(text: string, rv: string): Written {
  let answer: any;
  return {
    get obj() {
      if (answer === undefined) {
        answer = JSON.parse(text);
        answer.metadata.resourceVersion = rv;
      }
      return answer;
    },
    changed: true,
  };
}

/**
 * The answer of a write whose object the store kept as it was given (plain JSON, RV set): the same
 * JSON round trip of it as lazyAnswer's, made when first read. Stored objects are never written to
 * (peek's rule), so reading it late gives what reading it at once would have.
 */
function lazyCopy(stored: any): Written {
  let answer: any;
  return {
    get obj() {
      if (answer === undefined) answer = clone(stored);
      return answer;
    },
    changed: true,
  };
}

/**
 * Two copies of `obj` carrying the resourceVersion `rv`: the one stored and the one answered (what
 * clone(obj), setting the RV, then clone of that gives, from one serialisation instead of two).
 */
function twoCopies(obj: any, rv: string): [any, any] {
  const text = JSON.stringify(obj);
  const stored = JSON.parse(text);
  const answer = JSON.parse(text);
  stored.metadata.resourceVersion = rv;
  answer.metadata.resourceVersion = rv;
  return [stored, answer];
}

export class Store {
  private rev = 1;
  private readonly objects = new Map<string, any>();
  readonly history: StoreEvent[] = [];
  private readonly listeners = new Set<Listener>();

  get revision(): number {
    return this.rev;
  }

  /** RV of the oldest event still in the history; watches from before it answer 410. */
  get oldestReplayable(): number {
    return this.history.length > 0 ? this.history[0]!.rv - 1 : this.rev;
  }

  onChange(l: Listener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** The stored object itself; callers must not mutate it (use clone). */
  peek(def: ResourceDef, ns: string, name: string): any | undefined {
    return this.objects.get(key(def, ns, name));
  }

  get(def: ResourceDef, ns: string, name: string): any | undefined {
    return clone(this.peek(def, ns, name));
  }

  /** Stored objects of a type, sorted by namespace then name (the order etcd keys list in). */
  list(def: ResourceDef, ns?: string): any[] {
    const prefix = `${def.group}/${def.plural}/`;
    const out: any[] = [];
    for (const [k, v] of this.objects) {
      if (!k.startsWith(prefix)) continue;
      if (def.namespaced && ns && v.metadata.namespace !== ns) continue;
      out.push(v);
    }
    return out.sort(
      (a, b) => (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') || a.metadata.name.localeCompare(b.metadata.name),
    );
  }

  newUid(): string {
    return randomUUID();
  }

  create(def: ResourceDef, obj: any): any {
    const k = key(def, obj.metadata.namespace ?? '', obj.metadata.name);
    if (this.objects.has(k)) throw new Error(`store: ${k} exists`);
    const [stored, answer] = twoCopies(obj, String(++this.rev));
    this.objects.set(k, stored);
    this.emit({ rv: this.rev, def, type: 'ADDED', obj: stored });
    return answer;
  }

  /**
   * Writes `obj` over the stored one unless it is identical apart from its RV (canonical encodings
   * equal, compared by sameJson); `obj` of the result is the caller's copy of the stored result.
   * `handOver`: the caller gives `obj` away (nothing else holds it or any part of it but stored
   * objects, and nobody writes to it again; api.ts commit, whose object was decoded for this write):
   * when it is plain JSON the store keeps it instead of a copy.
   */
  update(def: ResourceDef, obj: any, handOver = false): Written {
    const k = key(def, obj.metadata.namespace ?? '', obj.metadata.name);
    const prev = this.objects.get(k);
    if (!prev) throw new Error(`store: ${k} missing`);
    if (sameJson(contentOf(prev), contentOf(obj))) return { obj: clone(prev), changed: false };
    if (handOver && isPlainJson(obj)) {
      obj.metadata.resourceVersion = String(++this.rev);
      this.objects.set(k, obj);
      this.emit({ rv: this.rev, def, type: 'MODIFIED', obj, prev });
      return lazyCopy(obj);
    }
    const rv = String(++this.rev);
    const text = JSON.stringify(obj);
    const stored = JSON.parse(text);
    stored.metadata.resourceVersion = rv;
    this.objects.set(k, stored);
    this.emit({ rv: this.rev, def, type: 'MODIFIED', obj: stored, prev });
    return lazyAnswer(text, rv);
  }

  delete(def: ResourceDef, ns: string, name: string): any | undefined {
    const k = key(def, ns, name);
    const prev = this.objects.get(k);
    if (!prev) return undefined;
    this.objects.delete(k);
    const last = clone(prev);
    last.metadata.resourceVersion = String(++this.rev);
    this.emit({ rv: this.rev, def, type: 'DELETED', obj: last, prev });
    return clone(last);
  }

  private emit(e: StoreEvent): void {
    this.history.push(e);
    if (this.history.length > historyLimit) this.history.splice(0, this.history.length - historyLimit);
    for (const l of [...this.listeners]) l(e);
  }
}
