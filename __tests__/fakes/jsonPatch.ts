// The in-memory fakes' Kubernetes write semantics, for FakeKube and the rule tests that apply a patch: JSON Patch is
// applied by the twin's applier (sim/kube/jsonpatch.ts: evanphx/json-patch v4.12.0, as the apiserver
// vendors it; docs/kubernetes-facts.md#k5-json-patch-semantics), so the tests and the twin share one
// emulation. What this file adds is the stored object's omitempty normalization
// (docs/kubernetes-facts.md#k6-omitempty: no false, "", [], {} or null in object fields, before and
// after) and the 422 as PatchRejected: a failure aborts the whole patch (docs/kubernetes-facts.md#k4-json-patch-atomic).
// It also converts between NodeState and the Node JSON the server stores, so tests can round-trip.
import type { NodeState, Taint } from '../../src/core/model/node.js';
import type { JsonPatchOp } from '../../src/core/model/patch.js';
import { applyJsonPatch as applyOps, JsonPatchApplyError } from '../../sim/kube/jsonpatch.js';

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

function isObject(v: Json | undefined): v is { [k: string]: Json } {
  return v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);
}

/** Apply atomically to a normalized copy; throws PatchRejected (the 422) and leaves `stored` untouched. */
export function applyJsonPatch<T>(stored: T, ops: JsonPatchOp[]): T {
  const doc = normalize(structuredClone(stored as unknown as Record<string, unknown>));
  try {
    return normalize(applyOps(doc, ops as unknown as Array<Record<string, unknown>>)) as T;
  } catch (e) {
    if (e instanceof JsonPatchApplyError) throw new PatchRejected(e.message);
    throw e;
  }
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
