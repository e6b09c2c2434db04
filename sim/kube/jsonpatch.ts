// RFC 6902 JSON Patch with the semantics of gopkg.in/evanphx/json-patch.v4 v4.12.0, the version the
// apiserver vendors. Quirks kept on purpose (docs/kubernetes-facts.md#k5-json-patch-semantics): `replace` of a missing object key adds it,
// `test` of a missing key passes only for a null value, `copy` from a missing key copies null, a
// whole-document `replace` with a scalar is silently ignored, negative array indices count from the end.
// Deviation: scalars are compared by decoded value, not raw bytes (`1.0` equals `1`, `"\u003c"` equals
// `"<"`); kubectl re-encodes every patch it sends, so the two agree for its requests.
import { isObject } from './json.js';

export type Op = Record<string, unknown> | null;

/** Body is not a JSON array of operation objects: the apiserver answers 400 with the decoder's text. */
export class JsonPatchDecodeError extends Error {}
/** Any failure while applying: the apiserver answers the generic 422. */
export class JsonPatchApplyError extends Error {}

export const maxJsonPatchOperations = 10000;

export function decodeJsonPatch(body: string): Op[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (e) {
    throw new JsonPatchDecodeError(`invalid character in JSON patch: ${(e as Error).message}`);
  }
  if (!Array.isArray(parsed)) {
    throw new JsonPatchDecodeError(
      `json: cannot unmarshal ${parsed === null ? 'null' : typeof parsed === 'object' ? 'object' : typeof parsed} into Go value of type jsonpatch.Patch`,
    );
  }
  for (const op of parsed) {
    if (op !== null && !isObject(op)) {
      throw new JsonPatchDecodeError(
        `json: cannot unmarshal ${Array.isArray(op) ? 'array' : typeof op} into Go value of type jsonpatch.Operation`,
      );
    }
  }
  return parsed as Op[];
}

type Container = Record<string, unknown> | unknown[];

function fail(msg: string): never {
  throw new JsonPatchApplyError(msg);
}

function decodeKey(k: string): string {
  return k.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** strconv.Atoi: optional sign, decimal digits, nothing else. */
function atoi(s: string): number | undefined {
  if (!/^[+-]?\d+$/.test(s)) return undefined;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : undefined;
}

function opString(op: Op, field: string): string | undefined {
  if (op === null) return undefined;
  const v = op[field];
  return typeof v === 'string' ? v : undefined;
}

/** The op's value: `undefined` when the key is absent (a nil lazyNode), `null` for JSON null. */
function opValue(op: Op): unknown {
  if (op === null || !('value' in op)) return undefined;
  return structuredClone(op.value);
}

/** get(): missing object keys and null values are both "nil"; arrays error out of range. */
function get(con: Container, key: string): { ok: true; v: unknown } | { ok: false } {
  if (Array.isArray(con)) {
    let idx = atoi(key);
    if (idx === undefined) return { ok: false };
    if (idx < 0) {
      if (idx < -con.length) return { ok: false };
      idx += con.length;
    }
    if (idx >= con.length) return { ok: false };
    return { ok: true, v: con[idx] };
  }
  return { ok: true, v: Object.prototype.hasOwnProperty.call(con, key) ? con[key] : undefined };
}

function findObject(root: Container, path: string): { con: Container; key: string } | undefined {
  const split = path.split('/');
  if (split.length < 2) return undefined;
  const parts = split.slice(1, -1);
  const key = split[split.length - 1]!;
  let doc: Container = root;
  for (const part of parts) {
    const r = get(doc, decodeKey(part));
    if (!r.ok || r.v === undefined || r.v === null) return undefined;
    if (Array.isArray(r.v) || isObject(r.v)) doc = r.v as Container;
    else return undefined;
  }
  return { con: doc, key: decodeKey(key) };
}

function add(con: Container, key: string, val: unknown): void {
  if (!Array.isArray(con)) {
    con[key] = val === undefined ? null : val;
    return;
  }
  if (key === '-') {
    con.push(val === undefined ? null : val);
    return;
  }
  let idx = atoi(key);
  if (idx === undefined) fail(`value was not a proper array index: '${key}'`);
  const size = con.length + 1;
  if (idx >= size) fail(`Unable to access invalid index: ${idx}`);
  if (idx < 0) {
    if (idx < -size) fail(`Unable to access invalid index: ${idx}`);
    idx += size;
  }
  con.splice(idx, 0, val === undefined ? null : val);
}

function remove(con: Container, key: string): void {
  if (!Array.isArray(con)) {
    if (!Object.prototype.hasOwnProperty.call(con, key)) fail(`Unable to remove nonexistent key: ${key}`);
    delete con[key];
    return;
  }
  let idx = atoi(key);
  if (idx === undefined) fail(`strconv.Atoi: parsing "${key}": invalid syntax`);
  if (idx >= con.length) fail(`Unable to access invalid index: ${idx}`);
  if (idx < 0) {
    if (idx < -con.length) fail(`Unable to access invalid index: ${idx}`);
    idx += con.length;
  }
  con.splice(idx, 1);
}

function set(con: Container, key: string, val: unknown): void {
  const v = val === undefined ? null : val;
  if (!Array.isArray(con)) {
    con[key] = v;
    return;
  }
  let idx = atoi(key)!;
  if (idx < 0) idx += con.length;
  con[idx] = v;
}

/** lazyNode.equal with n a non-nil document node and o the op's value. */
function nodeEqual(n: unknown, o: unknown): boolean {
  if (isObject(n)) {
    if (!isObject(o)) return false;
    const nk = Object.keys(n);
    if (nk.length !== Object.keys(o).length) return false;
    for (const k of nk) {
      if (!Object.prototype.hasOwnProperty.call(o, k)) return false;
      const v = n[k];
      const ov = o[k];
      if ((v === null) !== (ov === null)) return false;
      if (v === null) continue;
      if (!nodeEqual(v, ov)) return false;
    }
    return true;
  }
  if (Array.isArray(n)) {
    if (!Array.isArray(o) || n.length !== o.length) return false;
    return n.every((v, i) => (v === null || o[i] === null ? v === o[i] : nodeEqual(v, o[i])));
  }
  if (o === null || o === undefined || typeof o === 'object') return false;
  return JSON.stringify(n) === JSON.stringify(o);
}

/**
 * Applies `ops` to a copy of `doc` and returns the result; throws JsonPatchApplyError on the first failing
 * op, leaving `doc` untouched (the apiserver then writes nothing).
 */
export function applyJsonPatch(doc: Record<string, unknown>, ops: Op[]): unknown {
  let root: Container = structuredClone(doc);
  for (const op of ops) {
    const kind = opString(op, 'op') ?? 'unknown';
    const path = opString(op, 'path');
    switch (kind) {
      case 'add': {
        if (path === undefined) fail('operation missing path field');
        const f = findObject(root, path);
        if (!f) fail(`add operation does not apply: doc is missing path: "${path}"`);
        add(f.con, f.key, opValue(op));
        break;
      }
      case 'remove': {
        if (path === undefined) fail('operation missing path field');
        const f = findObject(root, path);
        if (!f) fail(`remove operation does not apply: doc is missing path: "${path}"`);
        remove(f.con, f.key);
        break;
      }
      case 'replace': {
        if (path === undefined) fail('operation missing path field');
        if (path === '') {
          const v = opValue(op);
          if (v === undefined) fail('replace operation has no value');
          // errors.Wrapf(nil, …) is nil in v4: a scalar whole-document replace is a silent no-op.
          if (isObject(v) || Array.isArray(v)) root = v as Container;
          break;
        }
        const f = findObject(root, path);
        if (!f) fail(`replace operation does not apply: doc is missing path: ${path}`);
        if (!get(f.con, f.key).ok) fail(`replace operation does not apply: doc is missing key: ${path}`);
        set(f.con, f.key, opValue(op));
        break;
      }
      case 'move': {
        const from = opString(op, 'from');
        if (from === undefined) fail('operation, missing from field');
        const f = findObject(root, from);
        if (!f) fail(`move operation does not apply: doc is missing from path: ${from}`);
        const g = get(f.con, f.key);
        if (!g.ok) fail(`error in move for path: '${f.key}'`);
        remove(f.con, f.key);
        if (path === undefined) fail('operation missing path field');
        const t = findObject(root, path);
        if (!t) fail(`move operation does not apply: doc is missing destination path: ${path}`);
        add(t.con, t.key, g.v);
        break;
      }
      case 'copy': {
        const from = opString(op, 'from');
        if (from === undefined) fail('operation, missing from field');
        const f = findObject(root, from);
        if (!f) fail(`copy operation does not apply: doc is missing from path: ${from}`);
        const g = get(f.con, f.key);
        if (!g.ok) fail(`error in copy for from: '${from}'`);
        if (path === undefined) fail('operation missing path field');
        const t = findObject(root, path);
        if (!t) fail(`copy operation does not apply: doc is missing destination path: ${path}`);
        add(t.con, t.key, g.v === undefined ? null : structuredClone(g.v));
        break;
      }
      case 'test': {
        if (path === undefined) fail('test operation failed to decode path');
        const want = opValue(op);
        if (path === '') {
          if (!nodeEqual(root, want)) fail(`testing value ${path} failed`);
          break;
        }
        const f = findObject(root, path);
        if (!f) fail(`test operation does not apply: is missing path: ${path}`);
        const g = get(f.con, f.key);
        if (!g.ok) fail(`error in test for path: '${f.key}'`);
        if (g.v === undefined || g.v === null) {
          // An absent `value` would nil-dereference in v4 (a panic → 500); treated here like null.
          if (want === null || want === undefined) break;
          fail(`testing value ${path} failed`);
        }
        if (want === undefined || !nodeEqual(g.v, want)) fail(`testing value ${path} failed`);
        break;
      }
      default:
        fail(`Unexpected kind: ${kind}`);
    }
  }
  return root;
}
