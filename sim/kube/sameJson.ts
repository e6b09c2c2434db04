// Whether two values have the same canonical() encoding (json.ts), decided without building either
// string. The store compares every write with the object it replaces (a write identical apart from its
// RV keeps the old RV), and the kubelets' heartbeats make such a write every 2 s per node, so the two
// key-sorted encodings of a whole Node were the twin's largest cost per write. Walking both objects
// stops at the first difference and allocates nothing.
//
// The verdict must be canonical(a) === canonical(b), exactly. For JSON values (null, booleans, strings,
// finite numbers, arrays, plain objects) that is structural equality with object keys unordered and
// undefined-valued keys absent; -0 and 0 both encode "0". canonical() gives other values encodings of their
// own (NaN and undefined in an array encode `null`, a Date `{}`, a function `undefined`), so wherever such
// a value meets its counterpart the walk answers UNSURE and the caller compares the encodings instead.
// A definite difference anywhere is final: canonical() output parses back unambiguously, so two equal
// encodings have equal encodings at every position.
import { canonical } from './json.js';

const DIFFERENT = 0;
const SAME = 1;
const UNSURE = 2;
type Verdict = typeof DIFFERENT | typeof SAME | typeof UNSURE;

/** 'n' null, 's' string, 'b' boolean, 'f' finite number, 'a' array, 'o' plain object; '' anything else. */
function kindOf(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return 's';
    case 'boolean':
      return 'b';
    case 'number':
      return Number.isFinite(v) ? 'f' : '';
    case 'object': {
      if (v === null) return 'n';
      if (Array.isArray(v)) return 'a';
      const proto = Object.getPrototypeOf(v);
      return proto === Object.prototype || proto === null ? 'o' : '';
    }
    default:
      return '';
  }
}

function compare(a: unknown, b: unknown): Verdict {
  // the same value (-0 and 0 included) encodes the same; an object compared with itself too
  if (a === b) return SAME;
  const ka = kindOf(a);
  const kb = kindOf(b);
  if (ka === '' || kb === '') return UNSURE;
  if (ka !== kb) return DIFFERENT;
  if (ka === 'a') return compareArrays(a as unknown[], b as unknown[]);
  if (ka === 'o') return compareObjects(a as Record<string, unknown>, b as Record<string, unknown>);
  // distinct strings, booleans or finite numbers (not ±0, caught above) encode differently
  return DIFFERENT;
}

function compareArrays(a: unknown[], b: unknown[]): Verdict {
  if (a.length !== b.length) return DIFFERENT;
  let verdict: Verdict = SAME;
  for (let i = 0; i < a.length; i++) {
    const v = compare(a[i], b[i]);
    if (v === DIFFERENT) return DIFFERENT;
    if (v === UNSURE) verdict = UNSURE;
  }
  return verdict;
}

function compareObjects(a: Record<string, unknown>, b: Record<string, unknown>): Verdict {
  let verdict: Verdict = SAME;
  let count = 0;
  for (const k of Object.keys(a)) {
    const x = a[k];
    if (x === undefined) continue;
    count++;
    // canonical() skips undefined-valued keys, so b must hold k with a value
    if (!Object.prototype.hasOwnProperty.call(b, k)) return DIFFERENT;
    const y = b[k];
    if (y === undefined) return DIFFERENT;
    const v = compare(x, y);
    if (v === DIFFERENT) return DIFFERENT;
    if (v === UNSURE) verdict = UNSURE;
  }
  // every key of a is in b; equal sets when b has no other key with a value
  for (const k of Object.keys(b)) if (b[k] !== undefined) count--;
  return count === 0 ? verdict : DIFFERENT;
}

/** canonical(a) === canonical(b), without building them when both are JSON values. */
export function sameJson(a: unknown, b: unknown): boolean {
  const v = compare(a, b);
  return v === UNSURE ? canonical(a) === canonical(b) : v === SAME;
}
