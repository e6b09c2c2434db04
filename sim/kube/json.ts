// JSON helpers shared by the simulated apiserver: copies, canonical comparison and Go-style encoding.

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

export function isObject(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Key-sorted encoding: Go encodes typed structs in a fixed order, so semantically equal objects are byte-equal there. */
export function canonical(v: unknown): string {
  // Every write to the twin's store compares two objects this way: plain loops, no per-level arrays of pieces.
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) out += (i > 0 ? ',' : '') + canonical(v[i]);
    return out + ']';
  }
  if (isObject(v)) {
    const keys = Object.keys(v).sort();
    let out = '{';
    let first = true;
    for (const k of keys) {
      const x = v[k];
      if (x === undefined) continue;
      out += (first ? '' : ',') + JSON.stringify(k) + ':' + canonical(x);
      first = false;
    }
    return out + '}';
  }
  return JSON.stringify(v ?? null);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

/** encoding/json escapes these even in plain strings; kubectl never minds, but byte-faithful output is cheap. */
export function goJson(v: unknown): string {
  return JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

/** JSON type names as encoding/json reports them in unmarshal errors. */
export function jsonTypeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  if (typeof v === 'number') return 'number';
  return typeof v;
}
