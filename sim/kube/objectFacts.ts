// Plain questions the twin's controllers ask of the objects they watch: which controller owns an
// object, whether a pod is terminating or Ready, whether a pod tolerates a taint.
import type { Taint } from './objects.js';

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}

/** The owner reference marked `controller`, if any. */
export function controllerOf(o: any): { kind: string; name: string; uid: string } | undefined {
  return (o.metadata?.ownerReferences ?? []).find((r: any) => r.controller);
}

export const isTerminating = (p: any) => !!p.metadata.deletionTimestamp;

/** The pod's Ready condition is True. */
export const isPodReady = (p: any): boolean => (p?.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');

export function tolerates(tols: Toleration[] | undefined, t: Taint): boolean {
  return (tols ?? []).some(
    (x) =>
      (!x.effect || x.effect === t.effect) &&
      (x.operator === 'Exists' ? !x.key || x.key === t.key : x.key === t.key && (x.value ?? '') === (t.value ?? '')),
  );
}
