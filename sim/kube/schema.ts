// Decoding a JSON object "into a typed Go struct" and encoding it back, which is what the apiserver does to
// every patched or posted object: unknown fields are dropped (and reported), omitempty zero values vanish
// (`unschedulable:false`, `taints:[]`, `annotations:{}`), non-pointer structs are always present
// (`spec:{}`), times are re-rendered (metav1.Time to whole seconds, MicroTime to 6 digits). JSON-patch
// `test` results depend on this, so stored objects are always kept in this normalized form.
import { isObject, jsonTypeName } from './json.js';

export type Schema =
  | { k: 'str' | 'bool' | 'int' | 'num' | 'time' | 'mtime' | 'qty' | 'any' }
  | { k: 'map'; v: Schema }
  | { k: 'list'; v: Schema }
  | { k: 'struct'; name: string; f: Record<string, Field>; open?: boolean };

export interface Field {
  s: Schema;
  /** omitempty */
  o?: boolean;
  /** pointer: nil is omitted, but a zero value is kept */
  p?: boolean;
}

export const str: Schema = { k: 'str' };
export const bool: Schema = { k: 'bool' };
export const int: Schema = { k: 'int' };
export const num: Schema = { k: 'num' };
export const time: Schema = { k: 'time' };
export const mtime: Schema = { k: 'mtime' };
export const qty: Schema = { k: 'qty' };
export const any: Schema = { k: 'any' };
export const map = (v: Schema): Schema => ({ k: 'map', v });
export const list = (v: Schema): Schema => ({ k: 'list', v });
export const struct = (name: string, f: Record<string, Field>, open = false): Schema => ({ k: 'struct', name, f, open });
/** field helpers: f(x) plain, o(x) omitempty, p(x) omitempty pointer */
export const f = (s: Schema): Field => ({ s });
export const o = (s: Schema): Field => ({ s, o: true });
export const p = (s: Schema): Field => ({ s, o: true, p: true });

export class DecodeError extends Error {}

export interface NormalizeResult {
  value: any;
  /** dotted paths of dropped unknown fields, as the apiserver names them in warnings */
  unknown: string[];
}

const goType: Record<string, string> = {
  str: 'string',
  bool: 'bool',
  int: 'int64',
  num: 'float64',
  time: 'v1.Time',
  mtime: 'v1.MicroTime',
  qty: 'resource.Quantity',
};

function typeError(v: unknown, s: Schema, path: string, structName: string): DecodeError {
  const t = s.k === 'struct' ? s.name : s.k === 'map' ? 'map[string]' : s.k === 'list' ? '[]' : (goType[s.k] ?? s.k);
  const where = path ? `Go struct field ${structName}.${path}` : 'Go value';
  return new DecodeError(`json: cannot unmarshal ${jsonTypeName(v)} into ${where} of type ${t}`);
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

function utcSeconds(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Every time already decoded, by its text (one map per layout): every write decodes every time field of
 * the object again (a Node has a dozen), nearly always one decoded before. normalizeTime is a pure
 * function of its text, so the remembered answer is the answer; a text that fails is not remembered (it
 * throws afresh). Cleared when full, so a long run keeps no more than `timesKept` of each.
 */
const decodedTimes = { sec: new Map<string, string>(), micro: new Map<string, string>() };
const timesKept = 10_000;

/** metav1.Time: RFC 3339 in, whole seconds UTC out. */
export function normalizeTime(v: string, micro: boolean): string {
  const seen = micro ? decodedTimes.micro : decodedTimes.sec;
  const known = seen.get(v);
  if (known !== undefined) return known;
  const out = parseTime(v, micro);
  if (seen.size >= timesKept) seen.clear();
  seen.set(v, out);
  return out;
}

function parseTime(v: string, micro: boolean): string {
  const m = rfc3339.exec(v);
  const layout = micro ? '2006-01-02T15:04:05.000000Z07:00' : '2006-01-02T15:04:05Z07:00';
  if (!m)
    throw new DecodeError(`parsing time ${JSON.stringify(v)} as ${JSON.stringify(layout)}: cannot parse ${JSON.stringify(v)} as "2006"`);
  const frac = m[7] ?? '';
  if (micro && frac.length !== 7) {
    // time.Parse with an explicit .000000 in the layout requires exactly six digits.
    throw new DecodeError(
      `parsing time ${JSON.stringify(v)} as ${JSON.stringify(layout)}: cannot parse ${JSON.stringify(v.slice(19))} as ".000000"`,
    );
  }
  const base = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${m[8]!.toUpperCase()}`);
  if (Number.isNaN(base)) throw new DecodeError(`parsing time ${JSON.stringify(v)}: month or day out of range`);
  return micro ? `${utcSeconds(base)}${frac}Z` : `${utcSeconds(base)}Z`;
}

export function nowTime(ms = Date.now()): string {
  return `${utcSeconds(ms)}Z`;
}

export function nowMicro(ms = Date.now()): string {
  return `${utcSeconds(ms)}.${pad(ms % 1000, 3)}000Z`;
}

/** Drops nulls inside free-form values, as a typed decode of omitempty pointers would. */
function cleanAny(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(cleanAny);
  if (isObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== null && x !== undefined) out[k] = cleanAny(x);
    return out;
  }
  return v;
}

function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === '' || v === false || v === 0) return true;
  if (Array.isArray(v)) return v.length === 0;
  return false;
}

/** The zero value Go would encode for an absent non-pointer field, or undefined when it encodes nothing. */
function zeroOf(s: Schema, ctx: Ctx, path: string): unknown {
  switch (s.k) {
    case 'str':
      return '';
    case 'bool':
      return false;
    case 'int':
    case 'num':
      return 0;
    case 'struct':
      return norm({}, s, path, ctx, s.name);
    default:
      return undefined;
  }
}

interface Ctx {
  unknown: string[];
}

type Struct = Extract<Schema, { k: 'struct' }>;

/** A struct's fields as an array, made once per schema: Object.entries of the fields on every decode was a cost of its own. */
const fieldLists = new WeakMap<Struct, Array<[string, Field]>>();
function fieldsOf(s: Struct): Array<[string, Field]> {
  let fl = fieldLists.get(s);
  if (!fl) {
    fl = Object.entries(s.f);
    fieldLists.set(s, fl);
  }
  return fl;
}

function norm(v: unknown, s: Schema, path: string, ctx: Ctx, structName: string): unknown {
  switch (s.k) {
    case 'any':
      return cleanAny(v);
    case 'str':
      if (typeof v !== 'string') throw typeError(v, s, path, structName);
      return v;
    case 'bool':
      if (typeof v !== 'boolean') throw typeError(v, s, path, structName);
      return v;
    case 'int':
      if (typeof v !== 'number' || !Number.isInteger(v)) throw typeError(v, s, path, structName);
      return v;
    case 'num':
      if (typeof v !== 'number') throw typeError(v, s, path, structName);
      return v;
    case 'qty':
      if (typeof v === 'number') return String(v);
      if (typeof v !== 'string') throw typeError(v, s, path, structName);
      return v;
    case 'time':
    case 'mtime':
      if (typeof v !== 'string') throw typeError(v, s, path, structName);
      return normalizeTime(v, s.k === 'mtime');
    case 'map': {
      if (!isObject(v)) throw typeError(v, s, path, structName);
      const out: Record<string, unknown> = {};
      // Map entries are never omitted, whatever their value (an annotation "" stays).
      for (const key of Object.keys(v).sort()) {
        const x = v[key];
        if (x === null) {
          out[key] = s.v.k === 'str' ? '' : null;
          continue;
        }
        out[key] = norm(x, s.v, `${path}.${key}`, ctx, structName);
      }
      return out;
    }
    case 'list': {
      if (!Array.isArray(v)) throw typeError(v, s, path, structName);
      return v.map((x) =>
        x === null ? (s.v.k === 'struct' ? norm({}, s.v, path, ctx, s.v.name) : null) : norm(x, s.v, path, ctx, structName),
      );
    }
    case 'struct': {
      if (!isObject(v)) throw typeError(v, s, path, structName);
      const out: Record<string, unknown> = {};
      for (const [name, fd] of fieldsOf(s)) {
        const x = v[name];
        if (x === undefined || x === null) {
          if (fd.p) continue;
          const z = fd.o && fd.s.k !== 'struct' ? undefined : zeroOf(fd.s, ctx, path ? `${path}.${name}` : name);
          if (z !== undefined) out[name] = z;
          continue;
        }
        const val = norm(x, fd.s, path ? `${path}.${name}` : name, ctx, s.name);
        if (fd.o && !fd.p && fd.s.k !== 'struct' && (isZero(val) || (fd.s.k === 'map' && Object.keys(val as object).length === 0)))
          continue;
        out[name] = val;
      }
      for (const name of Object.keys(v)) {
        if (name in s.f) continue;
        if (s.open) {
          const x = v[name];
          if (x !== null && x !== undefined) out[name] = cleanAny(x);
        } else {
          ctx.unknown.push(path ? `${path}.${name}` : name);
        }
      }
      return out;
    }
  }
}

export function normalize(obj: unknown, s: Schema): NormalizeResult {
  const ctx: Ctx = { unknown: [] };
  const value = norm(obj, s, '', ctx, s.k === 'struct' ? s.name : '');
  return { value, unknown: ctx.unknown };
}
