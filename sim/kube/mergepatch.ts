// JSON merge patch (RFC 7386, as evanphx/json-patch MergePatch does it) and strategic merge patch
// (apimachinery strategicpatch, with the list strategies of the k8s.io/api struct tags that matter here).
import { isObject } from './json.js';

export class MergePatchError extends Error {}

function pruneNulls(v: unknown): unknown {
  if (isObject(v)) {
    for (const k of Object.keys(v)) {
      if (v[k] === null) delete v[k];
      else pruneNulls(v[k]);
    }
  } else if (Array.isArray(v)) {
    for (const e of v) if (e !== null) pruneNulls(e);
  }
  return v;
}

function mergeDocs(doc: Record<string, unknown>, patch: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) {
      delete doc[k];
      continue;
    }
    const cur = doc[k];
    doc[k] = cur === undefined || cur === null ? pruneNulls(v) : mergeValue(cur, v);
  }
}

function mergeValue(cur: unknown, patch: unknown): unknown {
  if (!isObject(cur)) return pruneNulls(patch);
  if (!isObject(patch)) return patch;
  mergeDocs(cur, patch);
  return cur;
}

/** RFC 7386: objects merge, null deletes, anything else replaces. */
export function applyMergePatch(doc: Record<string, unknown>, patchBody: string): unknown {
  let patch: unknown;
  try {
    patch = JSON.parse(patchBody);
  } catch {
    throw new MergePatchError('Invalid JSON Patch');
  }
  if (patch === null || (typeof patch !== 'object' && !Array.isArray(patch))) throw new MergePatchError('Invalid JSON Patch');
  if (Array.isArray(patch)) return pruneNulls(structuredClone(patch));
  const out = structuredClone(doc);
  mergeDocs(out, structuredClone(patch as Record<string, unknown>));
  return out;
}

// ---------------------------------------------------------------------------------------------------

/** patchStrategy/patchMergeKey of a field, addressed by dotted JSON path without list indices. */
export interface ListStrategy {
  strategy: 'merge';
  /** absent: a list of scalars merged as a set */
  key?: string;
}
export type SmpMeta = Record<string, ListStrategy>;

const directive = {
  patch: '$patch',
  retainKeys: '$retainKeys',
  setOrder: '$setElementOrder/',
  deleteFromPrimitive: '$deleteFromPrimitiveList/',
};

function join(path: string, k: string): string {
  return path ? `${path}.${k}` : k;
}

/**
 * `original` merged with `patch`, as a new map: neither is written to. Each map on a patched path is
 * copied before it changes and every list rebuilt, so the result shares only untouched parts with the
 * original (applyStrategicMergePatch patches the stored object this way instead of a deep copy of it).
 */
function mergeMap(original: Record<string, unknown>, patch: Record<string, unknown>, path: string, meta: SmpMeta): Record<string, unknown> {
  original = { ...original };
  patch = { ...patch };
  if (directive.patch in patch) {
    const d = patch[directive.patch];
    delete patch[directive.patch];
    if (d === 'replace') return mergeMap({}, patch, path, meta);
    if (d === 'delete') return {};
    if (d !== 'merge') throw new MergePatchError(`Unknown patch type: ${String(d)} in map: ${JSON.stringify(patch)}`);
  }
  if (directive.retainKeys in patch) {
    const keep = patch[directive.retainKeys];
    delete patch[directive.retainKeys];
    if (!Array.isArray(keep)) throw new MergePatchError('invalid $retainKeys directive');
    for (const k of Object.keys(original)) if (!keep.includes(k)) delete original[k];
  }
  const orders: Array<[string, unknown[]]> = [];
  for (const k of Object.keys(patch)) {
    if (k.startsWith(directive.deleteFromPrimitive)) {
      const field = k.slice(directive.deleteFromPrimitive.length);
      const del = patch[k];
      delete patch[k];
      if (!Array.isArray(del)) throw new MergePatchError(`invalid ${k} directive`);
      const cur = original[field];
      if (Array.isArray(cur)) original[field] = cur.filter((v) => !del.some((d) => JSON.stringify(d) === JSON.stringify(v)));
    } else if (k.startsWith(directive.setOrder)) {
      const order = patch[k];
      delete patch[k];
      if (!Array.isArray(order)) throw new MergePatchError(`invalid ${k} directive`);
      orders.push([k.slice(directive.setOrder.length), order]);
    }
  }
  for (const [k, pv] of Object.entries(patch)) {
    const p = join(path, k);
    if (pv === null) {
      delete original[k];
      continue;
    }
    const ov = original[k];
    if (ov === undefined || ov === null) {
      original[k] = fresh(pv, p, meta);
    } else if (isObject(ov) && isObject(pv)) {
      original[k] = mergeMap(ov, pv, p, meta);
    } else if (Array.isArray(ov) && Array.isArray(pv)) {
      original[k] = mergeList(ov, pv, p, meta);
    } else {
      original[k] = fresh(pv, p, meta);
    }
  }
  for (const [field, order] of orders) {
    const list = original[field];
    if (Array.isArray(list)) original[field] = reorder(list, order, meta[join(path, field)]?.key);
  }
  return original;
}

/** A value the original lacks: the patch value with its directives interpreted against nothing. */
function fresh(v: unknown, path: string, meta: SmpMeta): unknown {
  if (isObject(v)) return mergeMap({}, v, path, meta);
  if (Array.isArray(v)) return mergeList([], v, path, meta);
  return v;
}

function mergeList(original: unknown[], patch: unknown[], path: string, meta: SmpMeta): unknown[] {
  const strat = meta[path];
  if (!strat) {
    // No patch strategy (e.g. spec.taints): the list is replaced as a whole.
    return patch
      .filter((e) => !(isObject(e) && e[directive.patch] === 'delete'))
      .map((e) => (isObject(e) ? mergeMap({}, e, path, meta) : e));
  }
  if (patch.some((e) => isObject(e) && e[directive.patch] === 'replace')) {
    return patch.filter((e) => !(isObject(e) && directive.patch in e)).map((e) => fresh(e, path, meta));
  }
  const out = [...original];
  if (!strat.key) {
    for (const e of patch) if (!out.some((o) => JSON.stringify(o) === JSON.stringify(e))) out.push(e);
    return out;
  }
  const key = strat.key;
  for (const e of patch) {
    if (!isObject(e)) throw new MergePatchError(`unable to find api field "${key}" in a list of scalars`);
    const idx = out.findIndex((o) => isObject(o) && o[key] === e[key]);
    if (e[directive.patch] === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) out[idx] = mergeMap(out[idx] as Record<string, unknown>, e, path, meta);
    else out.push(mergeMap({}, e, path, meta));
  }
  return out;
}

/** $setElementOrder: listed elements in the given order, the rest after them in their old order. */
function reorder(list: unknown[], order: unknown[], key: string | undefined): unknown[] {
  const id = (v: unknown) => JSON.stringify(key && isObject(v) ? v[key] : v);
  const rank = new Map(order.map((o, i) => [id(o), i]));
  return list
    .map((v, i) => ({ v, i, r: rank.get(id(v)) ?? Number.MAX_SAFE_INTEGER }))
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .map((x) => x.v);
}

export function applyStrategicMergePatch(doc: Record<string, unknown>, patchBody: string, meta: SmpMeta): unknown {
  let patch: unknown;
  try {
    patch = JSON.parse(patchBody);
  } catch (e) {
    throw new MergePatchError(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
  if (!isObject(patch)) throw new MergePatchError('strategic merge patch must be a JSON object');
  // mergeMap writes to neither: doc may be the stored object, and the patch was parsed just now for this
  // call alone (the result may share parts of it; decoding the result copies everything)
  return mergeMap(doc, patch, '', meta);
}
