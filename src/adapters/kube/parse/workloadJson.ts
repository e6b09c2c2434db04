// Pods and controllers from `kubectl get … -o json` lists, reduced to what the settle gate reads.
// apps/v1 status counts are omitempty int32s: an absent one is a zero, never "unknown" (k8s.io/api
// apps/v1 types.go). Anything else malformed is a ParseError: a drifted format is never guessed around.
import type { DrainPodReading, WorkloadKind, WorkloadStatus } from '../../../core/workloads.js';
import { ParseError } from '../../parseError.js';

type Json = Record<string, unknown>;

function obj(v: unknown): Json {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};
}

/** The items of a List (kubectl prints a `List` for several kinds, a `<Kind>List` for one). */
export function listItems(format: string, raw: unknown): Json[] {
  const o = obj(raw);
  if (typeof o.kind !== 'string' || !o.kind.endsWith('List')) throw new ParseError(format, 'not a List');
  if (o.items === undefined || o.items === null) return [];
  if (!Array.isArray(o.items)) throw new ParseError(format, 'items is not an array');
  return o.items.map(obj);
}

function name(format: string, item: Json): { namespace: string; name: string } {
  const m = obj(item.metadata);
  if (typeof m.name !== 'string' || !m.name || typeof m.namespace !== 'string') {
    throw new ParseError(format, 'an item has no metadata.name or metadata.namespace');
  }
  return { namespace: m.namespace, name: m.name };
}

function controllerRef(item: Json): { kind: string; name: string } | undefined {
  const refs = obj(item.metadata).ownerReferences;
  if (!Array.isArray(refs)) return undefined;
  const c = refs.map(obj).find((r) => r.controller === true);
  return c && typeof c.kind === 'string' && typeof c.name === 'string' ? { kind: c.kind, name: c.name } : undefined;
}

/** An omitempty count: absent is 0; present must be a whole number ≥ 0. */
function count(format: string, v: unknown, field: string): number {
  if (v === undefined) return 0;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new ParseError(format, `${field} is not a count`);
  return v;
}

export function podOwnersFromList(raw: unknown): DrainPodReading[] {
  const format = 'kubectl get pods -o json';
  return listItems(format, raw).map((item) => drainPodFromItem(format, item));
}

/** One Pod item as the settle gate and drain's filters read it (src/rules/drainForecast.ts). */
export function drainPodFromItem(format: string, item: Json): DrainPodReading {
  const metadata = obj(item.metadata);
  const annotations = obj(metadata.annotations);
  const spec = obj(item.spec);
  const status = obj(item.status);
  const refs = Array.isArray(metadata.ownerReferences) ? metadata.ownerReferences.map(obj) : [];
  const apiVersion = refs.find((r) => r.controller === true)?.apiVersion;
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(obj(metadata.labels))) if (typeof v === 'string') labels[k] = v;
  return {
    ...name(format, item),
    nodeName: typeof spec.nodeName === 'string' ? spec.nodeName : '',
    phase: typeof status.phase === 'string' ? status.phase : '',
    controller: controllerRef(item),
    mirror: 'kubernetes.io/config.mirror' in annotations,
    terminating: typeof metadata.deletionTimestamp === 'string',
    ready: Array.isArray(status.conditions) && status.conditions.map(obj).some((c) => c.type === 'Ready' && c.status === 'True'),
    ...(typeof apiVersion === 'string' ? { controllerApiVersion: apiVersion } : {}),
    // hasLocalStorage (filters.go): any volume with an emptyDir source
    emptyDir: Array.isArray(spec.volumes) && spec.volumes.some((v) => obj(v).emptyDir !== undefined && obj(v).emptyDir !== null),
    labels,
  };
}

const KINDS: readonly string[] = ['Deployment', 'ReplicaSet', 'StatefulSet'];

export function workloadsFromList(raw: unknown): WorkloadStatus[] {
  const format = 'kubectl get deployments,replicasets,statefulsets -o json';
  return listItems(format, raw).map((item) => {
    const kind = item.kind;
    if (typeof kind !== 'string' || !KINDS.includes(kind)) throw new ParseError(format, `unexpected kind ${JSON.stringify(kind)}`);
    const metadata = obj(item.metadata);
    const spec = obj(item.spec);
    const status = obj(item.status);
    const at = (field: string) => `${kind} ${String(metadata.name)}: ${field}`;
    const owner = controllerRef(item);
    const progressing = Array.isArray(status.conditions) ? status.conditions.map(obj).find((c) => c.type === 'Progressing') : undefined;
    return {
      kind: kind as WorkloadKind,
      ...name(format, item),
      generation: count(format, metadata.generation, at('metadata.generation')),
      // the apiserver defaults spec.replicas to 1; a list always carries it
      specReplicas: spec.replicas === undefined ? 1 : count(format, spec.replicas, at('spec.replicas')),
      observedGeneration: count(format, status.observedGeneration, at('status.observedGeneration')),
      replicas: count(format, status.replicas, at('status.replicas')),
      readyReplicas: count(format, status.readyReplicas, at('status.readyReplicas')),
      availableReplicas: count(format, status.availableReplicas, at('status.availableReplicas')),
      updatedReplicas: count(format, status.updatedReplicas, at('status.updatedReplicas')),
      unavailableReplicas: count(format, status.unavailableReplicas, at('status.unavailableReplicas')),
      ...(kind === 'ReplicaSet' && owner?.kind === 'Deployment' ? { ownerDeployment: owner.name } : {}),
      ...(progressing && typeof progressing.reason === 'string' ? { progressingReason: progressing.reason } : {}),
    };
  });
}
