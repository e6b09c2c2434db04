// The one place that knows what a secret looks like and removes it from text.
//
// Why more than the values themselves: a tool that fails on the credential patch may echo it in the
// form it handled it in. containerd and the Docker config carry `base64(user:password)` in `auth`, a
// registry's basic auth header carries the same, YAML/JSON/TOML quoting escapes `"` and `\`, and an
// error may quote a base64 blob of the whole patch in which the secret starts at any byte offset.
// The runner's own log masking (core.setSecret) replaces only the registered strings and only in the
// log: the job summary, the step outputs and the saved state are written as they are. So every form
// is registered, and every text that leaves the action passes through a Redactor at its sink
// (src/action/masked.ts). Nothing the action parses ever does: a masked byte would be a wrong reading.
import type { AuthFields } from './model/credential.js';

export const REDACTED = '***';

/**
 * The floor on a derived form's length: a base64 text, a base64 fragment or a URL-encoded spelling
 * shorter than 8 characters is not registered. Why 8: a derived form is made of letters and digits
 * that occur everywhere (a 4-byte password's base64 fragments are 4–5 characters, `YWJj`, `Ymlu`, and
 * such strings sit inside every certificate, node name, uid and owner token the action prints), while
 * 8 base64 characters carry 48 bits, so a chance match in unrelated text is negligible. Masking a
 * chance match is not harmless: it rewrites the run's words in the log, the summary and the outputs.
 * The cost: inside a longer base64 text, a secret shorter than 7 bytes is not found at every byte
 * alignment (its fragments there are 7 characters or fewer); its own base64, padding included, is
 * 8 characters from 4 bytes up and still counts. The values themselves (the password,
 * `auth`, the identity token, `user:password`, what `auth` decodes to) are always registered whatever
 * their length, as the runner registers a secret (core.setSecret), and so is a value's JSON spelling
 * (Redactor.add): it differs from the value only where it has a backslash, which none of the text the
 * action prints around it has.
 */
export const MIN_DERIVED = 8;

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

/**
 * The base64 of `value` as it appears inside a longer base64 text: for each of the three byte
 * alignments, the characters that depend only on `value`'s bytes (the padding's and the
 * neighbours' bits are cut off at both ends).
 */
function base64Fragments(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const out: string[] = [];
  for (const offset of [0, 1, 2]) {
    const encoded = b64(Buffer.concat([Buffer.alloc(offset), bytes]));
    const first = Math.ceil((offset * 8) / 6);
    const last = Math.floor(((offset + bytes.length) * 8) / 6);
    out.push(encoded.slice(first, last));
  }
  return out;
}

/** How a string is written inside a JSON or TOML basic string (the same escapes for the characters a secret holds). */
function quoted(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}

/** `base64(user:password)` decoded, when `auth` is one: its password is a secret of its own. */
function decodedAuth(auth: string): string[] {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(auth)) return [];
  const text = Buffer.from(auth, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0 || b64(text) !== auth) return [];
  return [text, text.slice(colon + 1)];
}

/**
 * Every form of a credential that must never be shown: the password, `auth` and identity token as
 * given; `user:password` and what `auth` decodes to; the base64 of each (whole, and the fragments that
 * appear inside a longer base64 text); their JSON/TOML-escaped and URL-encoded spellings. The username
 * alone is not a secret and is not included.
 */
export function secretForms(credentials: Iterable<AuthFields>): string[] {
  const values = new Set<string>();
  for (const f of credentials) {
    for (const v of [f.password, f.auth, f.identitytoken]) if (v) values.add(v);
    if (f.password) values.add(`${f.username}:${f.password}`);
    if (f.auth) for (const v of decodedAuth(f.auth)) if (v) values.add(v);
  }
  const forms = new Set<string>(values);
  for (const v of values) {
    for (const derived of [b64(v), ...base64Fragments(v), quoted(v), encodeURIComponent(v)]) {
      if (derived !== v && derived.length >= MIN_DERIVED) forms.add(derived);
    }
  }
  return [...forms];
}

/** Replaces every registered string with `***`; the longest first, so a form is never half-replaced by a shorter one. */
export class Redactor {
  private readonly values = new Set<string>();
  private ordered: string[] = [];

  constructor(values: Iterable<string> = []) {
    for (const v of values) this.add(v);
  }

  /**
   * Registers `value`, and its spelling inside a JSON string (the outputs and the saved state are JSON).
   * Returns false when it was registered already (or is empty).
   */
  add(value: string): boolean {
    if (!value || this.values.has(value)) return false;
    this.values.add(value);
    this.values.add(quoted(value));
    this.ordered = [...this.values].sort((a, b) => b.length - a.length);
    return true;
  }

  redact(text: string): string {
    let out = text;
    for (const v of this.ordered) if (out.includes(v)) out = out.split(v).join(REDACTED);
    return out;
  }

  /** A copy of plain data (objects, arrays, strings) with every string redacted; other values as they are. */
  redactData<T>(value: T): T {
    if (typeof value === 'string') return this.redact(value) as T;
    if (Array.isArray(value)) return (value as unknown[]).map((v): unknown => this.redactData(v)) as T;
    if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
      return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, this.redactData(v)])) as T;
    }
    return value;
  }
}
