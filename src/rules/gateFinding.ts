// The description rule of a health gate's value (docs/gates.md "What a gate's value says"): what one
// object made of a CEL gate becomes a typed GateFinding, never the object's content. Pure.
//
// - The boolean `true` satisfies the gate (undefined here); `false` is said as the boolean it is.
// - A number is said with its value (a number is no object's content a person could not be shown;
//   it still leaves through the masking port like every text).
// - Any other result is said by its type alone: `string`, `bytes`, `map`, `list`, `null`, `type`,
//   `timestamp`, `duration`, `message`. A string field is the usual mistake (`self.status.phase`
//   instead of `self.status.phase == "Ready"`), and its value may be anything: a connection string,
//   a token, a message quoting one.
// - An error is classified by the library's message (@bufbuild/cel 0.6.1: src/access.ts
//   `field not found`, src/planner.ts `found no matching overload`, `type mismatch`, `map key
//   conflict`, src/std/cast.ts and src/std/math.ts the conversions, overflows and divisions), and the
//   message itself is dropped: it quotes values (`Unable to convert string '<value>' to bool`,
//   `Cannot convert <value> to a BigInt`, `field not found: <a map key taken from the object>`). What
//   is kept is bounded and from no object: a missing field's name only when the expression itself
//   spells it, an overload's operator and the type names the library prints (`_>_`, `string, int`).
//   A message of no known form is `other`.
import type { CelErrorCause, CelOutcome, GateFinding } from '../core/model/gates.js';

/** A missing field's name kept only when it is a name, short, and the expression spells it. */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_\-.]{0,62}$/;
/** An operator or function as the library names it: `_>_`, `_?_:_`, `size`, `matches`. */
const OPERATOR = /^[A-Za-z0-9_<>=!+\-*/%?:&|[\].]{1,40}$/;
/** A type name as the library prints one: `string`, `map(string, dyn)`, `google.protobuf.Timestamp`. */
const TYPE_NAME = /^[A-Za-z_][A-Za-z0-9_.]*(\([A-Za-z0-9_., ()]*\))?$/;
const MAX_TYPE = 60;
const MAX_TYPES = 4;

/** What one object made of a CEL gate: undefined when it satisfies it (the boolean `true`), else the typed finding. */
export function celFinding(outcome: CelOutcome, expression: string): GateFinding | undefined {
  switch (outcome.type) {
    case 'boolean':
      return outcome.value ? undefined : { type: 'boolean', value: false };
    case 'number':
      return Number.isFinite(outcome.value) ? { type: 'number', value: outcome.value } : { type: 'number' };
    case 'error':
      return celErrorFinding(outcome.message, expression);
    case 'string':
    case 'bytes':
    case 'map':
    case 'list':
    case 'null':
    case 'type':
    case 'timestamp':
    case 'duration':
    case 'message':
      return { type: outcome.type };
  }
}

/** An evaluation error, classified; its message is never kept (see the header). */
export function celErrorFinding(message: string, expression: string): GateFinding {
  const m = String(message);
  const missing = /^field not found: (.*)$/s.exec(m);
  if (missing) {
    const name = missing[1];
    return FIELD_NAME.test(name) && spells(expression, name)
      ? { type: 'error', cause: 'missing-field', field: name }
      : { type: 'error', cause: 'missing-field' };
  }
  if (m === 'unresolved attribute') return { type: 'error', cause: 'missing-field' };
  const overload = /^found no matching overload for '([^']*)' applied to '(.*)'$/s.exec(m);
  if (overload) {
    const operator = OPERATOR.test(overload[1]) ? { operator: overload[1] } : {};
    const types = operandTypes(overload[2]);
    return { type: 'error', cause: 'no-overload', ...operator, ...(types ? { types } : {}) };
  }
  const unbound = /^unbound function: (.*)$/s.exec(m);
  if (unbound) return { type: 'error', cause: 'no-overload', ...(OPERATOR.test(unbound[1]) ? { operator: unbound[1] } : {}) };
  const mismatch = /^type mismatch: expected (.*), got (.*)$/s.exec(m) ?? /^type mismatch: (iterable) vs (.*)$/s.exec(m);
  if (mismatch) {
    const types = typeNames([mismatch[1], mismatch[2]]);
    return { type: 'error', cause: 'type-mismatch', ...(types ? { types } : {}) };
  }
  return { type: 'error', cause: causeOf(m) };
}

/** The causes known by a fixed phrase of the library's message. */
const PHRASES: ReadonlyArray<[RegExp, CelErrorCause]> = [
  [
    /^(Unable to convert|Cannot convert|Failed to parse (timestamp|duration)|Failed to decode bytes|type cannot be converted|Error converting)\b/,
    'conversion',
  ],
  [/^index .* out of bounds\b/s, 'index-out-of-range'],
  [/\b(divide|modulus) by zero$/, 'division-by-zero'],
  [/^u?int overflow during\b|^(int32|uint32|duration|timestamp) out of range$/, 'overflow'],
  [/^error parsing regexp\b|^Invalid regular expression\b/, 'regex'],
  [/^map key conflict\b/, 'duplicate-key'],
];

function causeOf(message: string): CelErrorCause {
  return PHRASES.find(([re]) => re.test(message))?.[1] ?? 'other';
}

/** Whether the expression spells `name` as a whole word (an identifier, a quoted key): the user's text, not the object's. */
function spells(expression: string, name: string): boolean {
  let at = expression.indexOf(name);
  while (at >= 0) {
    const before = expression[at - 1];
    const after = expression[at + name.length];
    if (!(before && /[A-Za-z0-9_]/.test(before)) && !(after && /[A-Za-z0-9_]/.test(after))) return true;
    at = expression.indexOf(name, at + 1);
  }
  return false;
}

/** `string.(int)`, `(string, int)`, `(map(string, dyn))`: the type names, split at the top level; undefined when any is not one. */
function operandTypes(text: string): string[] | undefined {
  const open = text.indexOf('(');
  if (open < 0 || !text.endsWith(')')) return undefined;
  const target = open > 0 && text[open - 1] === '.' ? [text.slice(0, open - 1)] : open > 0 ? undefined : [];
  if (!target) return undefined;
  const inner = text.slice(open + 1, -1);
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    if (inner[i] === '(') depth++;
    else if (inner[i] === ')') depth--;
    else if (inner[i] === ',' && depth === 0) {
      parts.push(inner.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (inner.trim()) parts.push(inner.slice(start).trim());
  return typeNames([...target, ...parts]);
}

function typeNames(names: string[]): string[] | undefined {
  if (names.length === 0 || names.length > MAX_TYPES) return undefined;
  return names.every((n) => n.length <= MAX_TYPE && TYPE_NAME.test(n)) ? names : undefined;
}
