// Turn a Node object from `kubectl get node -o json` into the fields the rules read.
import type { NodeState, Taint } from '../../../core/model/node.js';

export class NodeParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NodeParseError';
  }
}

type Json = Record<string, unknown>;

function obj(v: unknown): Json {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};
}

function strMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(obj(v))) if (typeof val === 'string') out[k] = val;
  return out;
}

const CONTROL_PLANE_LABELS = ['node-role.kubernetes.io/control-plane', 'node-role.kubernetes.io/master'];

export function nodeFromJson(raw: unknown): NodeState {
  const o = obj(raw);
  const metadata = obj(o.metadata);
  const spec = obj(o.spec);
  const status = obj(o.status);
  const name = metadata.name;
  if (typeof name !== 'string' || !name) throw new NodeParseError('node object has no metadata.name');
  const labels = strMap(metadata.labels);
  const taints: Taint[] = Array.isArray(spec.taints)
    ? (spec.taints as unknown[]).map((t) => {
        const x = obj(t);
        const taint: Taint = { key: typeof x.key === 'string' ? x.key : '', effect: typeof x.effect === 'string' ? x.effect : '' };
        if (typeof x.value === 'string') taint.value = x.value;
        if (typeof x.timeAdded === 'string') taint.timeAdded = x.timeAdded;
        return taint;
      })
    : [];
  const addresses = Array.isArray(status.addresses) ? (status.addresses as unknown[]).map(obj) : [];
  const conditions = Array.isArray(status.conditions) ? (status.conditions as unknown[]).map(obj) : [];
  const ready = conditions.find((c) => c.type === 'Ready')?.status;
  return {
    name,
    uid: typeof metadata.uid === 'string' ? metadata.uid : '',
    resourceVersion: typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : '',
    deletionTimestamp: typeof metadata.deletionTimestamp === 'string' ? metadata.deletionTimestamp : undefined,
    unschedulable: spec.unschedulable === true,
    taints,
    labels,
    annotations: strMap(metadata.annotations),
    hasAnnotationsMap: metadata.annotations !== undefined && metadata.annotations !== null,
    internalIPs: addresses.filter((a) => a.type === 'InternalIP' && typeof a.address === 'string').map((a) => a.address as string),
    role: CONTROL_PLANE_LABELS.some((l) => l in labels) ? 'control-plane' : 'worker',
    ready: ready === 'True' || ready === 'False' ? ready : 'Unknown',
    bootID: typeof obj(status.nodeInfo).bootID === 'string' ? (obj(status.nodeInfo).bootID as string) : '',
  };
}
