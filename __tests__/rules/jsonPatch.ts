// A tiny JSON Patch (RFC 6902) applier for the rule tests ONLY, following the apiserver's behaviour in
// docs/kubernetes-facts.md#k4-json-patch-atomic, docs/kubernetes-facts.md#k5-json-patch-semantics and
// docs/kubernetes-facts.md#k6-omitempty (evanphx/json-patch v4.12.0 plus omitempty normalization):
// - the stored object is normalized (no false, "", [], {} or null in object fields) before and after;
// - `add` below a missing parent fails; `remove` of a missing key fails; `replace` of a missing object
//   key acts like `add` (v4 quirk);
// - `test` of a missing key (parent present) passes only with `null`; a missing parent fails;
//   arrays compare element by element in order, objects by key set, scalars strictly;
// - any failure aborts the whole patch (it is applied to a copy) — the caller sees a 422.
// It also converts between NodeState and the Node JSON the server stores, so tests can round-trip.
import type { JsonPatchOp, NodeState, Taint } from '../../src/model.js';

export class PatchRejected extends Error {
  readonly status = 422;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/**
 * Server-side omitempty: drop false, "", [], {} and null object fields, recursively. Go's encoding/json
 * never omits a struct, so the top-level `metadata`, `spec` and `status` stay (as `{}` when empty): a
 * `test /spec/unschedulable null` on a bare spec must find its parent.
 */
export function normalize<T>(value: T): T {
  const out = norm(value as unknown as Json);
  if (isObject(out) && isObject(value as unknown as Json)) {
    for (const k of STRUCTS) if (isObject((value as unknown as Record<string, Json>)[k]) && !(k in out)) out[k] = {};
  }
  return out as unknown as T;
}
const STRUCTS = ['metadata', 'spec', 'status'];

function isEmpty(v: Json | undefined): boolean {
  return (
    v === undefined ||
    v === null ||
    v === false ||
    v === '' ||
    (Array.isArray(v) && v.length === 0) ||
    (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0)
  );
}

// Go maps (labels, annotations) are not structs: their entries keep empty-string values, and the
// control-plane role label is exactly such an entry (`node-role.kubernetes.io/control-plane: ""`).
const STRING_MAPS = new Set(['labels', 'annotations']);

function norm(v: Json, isStringMap = false): Json {
  if (Array.isArray(v)) return v.map((x) => norm(x));
  if (v !== null && typeof v === 'object') {
    const out: { [k: string]: Json } = {};
    for (const [k, child] of Object.entries(v)) {
      if (child === undefined) continue;
      const n = norm(child, STRING_MAPS.has(k));
      if (isStringMap ? n !== null : !isEmpty(n)) out[k] = n;
    }
    return out;
  }
  return v;
}

function parsePointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new PatchRejected(`bad path ${path}`);
  return path
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function isObject(v: Json | undefined): v is { [k: string]: Json } {
  return v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);
}

function resolveParent(doc: Json, segments: string[], path: string): Json[] | { [k: string]: Json } {
  let cur: Json | undefined = doc;
  for (const seg of segments.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(seg)];
    else if (isObject(cur)) cur = cur[seg];
    else cur = undefined;
    if (cur === undefined || cur === null) throw new PatchRejected(`doc is missing path: ${path}`);
  }
  if (!Array.isArray(cur) && !isObject(cur)) throw new PatchRejected(`doc is missing path: ${path}`);
  return cur;
}

function arrayIndex(arr: Json[], seg: string, allowEnd: boolean, path: string): number {
  if (seg === '-' && allowEnd) return arr.length;
  if (!/^-?\d+$/.test(seg)) throw new PatchRejected(`bad index ${seg} in ${path}`);
  let i = Number(seg);
  if (i < 0) i += arr.length;
  const max = allowEnd ? arr.length : arr.length - 1;
  if (i < 0 || i > max) throw new PatchRejected(`index out of range in ${path}`);
  return i;
}

export function deepEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b)) return false;
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && deepEqual(a[k], b[k]));
  }
  return a === b;
}

function applyOne(doc: Json, op: JsonPatchOp): Json {
  const segs = parsePointer(op.path);
  if (segs.length === 0) {
    if (op.op === 'test') {
      if (!deepEqual(doc, op.value as Json)) throw new PatchRejected('test failed on the whole document');
      return doc;
    }
    if (op.op === 'remove') throw new PatchRejected('cannot remove the document');
    return structuredClone(op.value as Json);
  }
  const parent = resolveParent(doc, segs, op.path);
  const last = segs[segs.length - 1];

  if (op.op === 'test') {
    let cur: Json | undefined;
    if (Array.isArray(parent)) cur = parent[arrayIndex(parent, last, false, op.path)];
    else cur = Object.hasOwn(parent, last) ? parent[last] : undefined;
    if (cur === undefined || cur === null) {
      if (op.value !== null) throw new PatchRejected(`test failed: ${op.path} is missing`);
      return doc;
    }
    if (!deepEqual(cur, op.value as Json)) throw new PatchRejected(`test failed: ${op.path}`);
    return doc;
  }

  if (Array.isArray(parent)) {
    if (op.op === 'add') parent.splice(arrayIndex(parent, last, true, op.path), 0, structuredClone(op.value as Json));
    else if (op.op === 'replace') parent[arrayIndex(parent, last, false, op.path)] = structuredClone(op.value as Json);
    else parent.splice(arrayIndex(parent, last, false, op.path), 1);
    return doc;
  }
  if (op.op === 'add' || op.op === 'replace') {
    parent[last] = structuredClone(op.value as Json);
  } else {
    if (!Object.hasOwn(parent, last)) throw new PatchRejected(`Unable to remove nonexistent key: ${last}`);
    delete parent[last];
  }
  return doc;
}

/** Apply atomically to a normalized copy; throws PatchRejected (the 422) and leaves `stored` untouched. */
export function applyJsonPatch<T>(stored: T, ops: JsonPatchOp[]): T {
  let doc = normalize(structuredClone(stored as unknown as Json));
  for (const op of ops) doc = applyOne(doc, op);
  return normalize(doc) as unknown as T;
}

// ---------------------------------------------------------------------------------------------
// Node JSON <-> NodeState, the way the server stores it and the kubectl adapter reads it.
// ---------------------------------------------------------------------------------------------

export type NodeJson = {
  metadata: {
    name: string;
    uid: string;
    resourceVersion: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: { unschedulable?: boolean; taints?: Taint[]; podCIDR?: string };
  status: {
    addresses?: Array<{ type: string; address: string }>;
    conditions?: Array<{ type: string; status: string; lastHeartbeatTime?: string }>;
    nodeInfo?: { bootID?: string };
  };
};

export function nodeJson(n: NodeState): NodeJson {
  return normalize({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: n.name,
      uid: n.uid,
      resourceVersion: n.resourceVersion,
      creationTimestamp: '2026-01-01T00:00:00Z',
      deletionTimestamp: n.deletionTimestamp,
      labels: n.labels,
      ...(n.hasAnnotationsMap ? { annotations: n.annotations } : {}),
    },
    spec: {
      podCIDR: '10.244.0.0/24',
      unschedulable: n.unschedulable,
      taints: n.taints.map((t) => ({ ...t })),
    },
    status: {
      addresses: [...n.internalIPs.map((address) => ({ type: 'InternalIP', address })), { type: 'Hostname', address: n.name }],
      conditions: [{ type: 'Ready', status: n.ready, lastHeartbeatTime: '2026-08-20T10:00:00Z' }],
      nodeInfo: { bootID: n.bootID },
    },
  }) as unknown as NodeJson;
}

export function nodeFromJson(j: NodeJson, role: NodeState['role']): NodeState {
  const ready = j.status.conditions?.find((c) => c.type === 'Ready')?.status;
  return {
    name: j.metadata.name,
    uid: j.metadata.uid,
    resourceVersion: j.metadata.resourceVersion,
    deletionTimestamp: j.metadata.deletionTimestamp,
    unschedulable: j.spec.unschedulable === true,
    taints: (j.spec.taints ?? []).map((t) => ({ ...t })),
    labels: { ...(j.metadata.labels ?? {}) },
    annotations: { ...(j.metadata.annotations ?? {}) },
    hasAnnotationsMap: j.metadata.annotations !== undefined,
    internalIPs: (j.status.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => a.address),
    role,
    ready: ready === 'True' || ready === 'False' ? ready : 'Unknown',
    bootID: j.status.nodeInfo?.bootID ?? '',
  };
}
