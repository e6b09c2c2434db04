// The text of an untyped value parsed from JSON or YAML, in the two senses the readers need. Never
// an object's default stringification (`[object Object]`).

/** A string as it is; anything else (absent, a number, an object) as ''. For fields the writer always writes as strings. */
export function stringOrEmpty(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/**
 * Any scalar as its text (a string as it is, a number, bigint or boolean through String); anything
 * else as ''. For fields a reader takes as a string whatever their type: YAML types `password: 1234`
 * as a number, Talos reads it as the string; protobuf JSON may carry an int64 as a number or a bigint.
 */
export function scalarText(v: unknown): string {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean' ? String(v) : '';
}
