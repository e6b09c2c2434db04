// What every kubectl JSON parser reads objects with. No I/O.

/** An object of kubectl's JSON output. */
export type Json = Record<string, unknown>;

/** A JSON value as a string: strings as they are, numbers in decimal, anything else (absent, object) as ''. */
export function jsonString(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
}
