// `kubectl get poddisruptionbudgets,pods -n NS -o json` (one `List` of both kinds) → the PDBs with
// their selector and status, and each pod's labels. Text in, model values out; no I/O.
import type { LabelSelector, PdbState, PodLabels } from '../../../core/model/cluster.js';
import { stringOrEmpty } from '../../../core/text.js';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(obj(v))) if (typeof x === 'string') out[k] = x;
  return out;
}

/** `spec.selector` as stored; undefined when absent (a policy/v1 PDB without a selector selects nothing). */
function selectorOf(v: unknown): LabelSelector | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const s = obj(v);
  const out: LabelSelector = {};
  if (s.matchLabels !== undefined) out.matchLabels = stringMap(s.matchLabels);
  if (Array.isArray(s.matchExpressions)) {
    out.matchExpressions = s.matchExpressions.map((x) => {
      const e = obj(x);
      return {
        key: stringOrEmpty(e.key),
        operator: stringOrEmpty(e.operator),
        ...(Array.isArray(e.values) ? { values: e.values.filter((y): y is string => typeof y === 'string') } : {}),
      };
    });
  }
  return out;
}

/** an IntOrString field as written (a number, or a string like "100%"), absent when it is neither */
function intOrString<K extends string>(key: K, v: unknown): Partial<Record<K, number | string>> {
  return (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'string' ? ({ [key]: v } as Record<K, number | string>) : {};
}

function int<K extends string>(key: K, v: unknown): Partial<Record<K, number>> {
  return typeof v === 'number' && Number.isFinite(v) ? ({ [key]: v } as Record<K, number>) : {};
}

export function parsePdbsAndPods(list: unknown): { pdbs: PdbState[]; pods: PodLabels[] } {
  const items = Array.isArray(obj(list).items) ? (obj(list).items as unknown[]) : [];
  const pdbs: PdbState[] = [];
  const pods: PodLabels[] = [];
  for (const item of items) {
    const i = obj(item);
    const meta = obj(i.metadata);
    const ref = { namespace: stringOrEmpty(meta.namespace), name: stringOrEmpty(meta.name) };
    if (i.kind === 'PodDisruptionBudget') {
      const st = obj(i.status);
      const spec = obj(i.spec);
      pdbs.push({
        ...ref,
        selector: selectorOf(spec.selector),
        status: {
          disruptionsAllowed: num(st.disruptionsAllowed),
          currentHealthy: num(st.currentHealthy),
          desiredHealthy: num(st.desiredHealthy),
        },
        ...intOrString('minAvailable', spec.minAvailable),
        ...intOrString('maxUnavailable', spec.maxUnavailable),
        ...(typeof spec.unhealthyPodEvictionPolicy === 'string' ? { unhealthyPodEvictionPolicy: spec.unhealthyPodEvictionPolicy } : {}),
        ...int('generation', meta.generation),
        // status fields are `omitempty` int32s: absent in a written status is 0; no status at all is unknown
        ...(i.status !== undefined ? { observedGeneration: num(st.observedGeneration), expectedPods: num(st.expectedPods) } : {}),
      });
    } else if (i.kind === 'Pod') {
      pods.push({ ...ref, labels: stringMap(meta.labels) });
    }
  }
  return { pdbs, pods };
}
