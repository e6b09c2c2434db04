// The health gates as a person reads them (docs/gates.md "What a gate's value says"): a gate's typed
// value (src/core/model/gates.ts GateValue) in words, one line per gate, and the failing gates in one
// line (the log, the hold's detail, the stop's notice). The words say the object that failed (kind,
// namespace, name, escaped here) and what its test found (the type of the expression's result, a
// classified error, the storage rule): never the object's content, which the value does not carry.
// Every sink these lines reach writes them through the masking port (src/action/masked.ts).
import type { CelErrorCause, CelResultType, GateFinding, GateObjectRef, GateValue, StorageRule } from '../core/model/gates.js';
import { oneLine } from './escape.js';

/**
 * An object's name, namespace or kind is cluster text: folded onto one line, never cut here. A cut
 * before the masking port could split a registered secret the port would then not see whole; the
 * apiserver bounds them already (a name is a DNS subdomain, at most 253 characters; a namespace a
 * label, at most 63).
 */
const name = (s: string) => oneLine(s);

const STORAGE_WORDS: Record<StorageRule, string> = {
  'pv-failed': 'phase Failed',
  'pvc-lost': 'phase Lost',
  'attach-error': 'status.attachError is set',
  'detach-error': 'status.detachError is set',
  'robustness-degraded': 'robustness degraded',
  'robustness-faulted': 'robustness faulted',
};

const ERROR_WORDS: Record<CelErrorCause, string> = {
  'missing-field': 'field not found',
  'no-overload': 'no matching overload',
  'type-mismatch': 'type mismatch',
  conversion: 'a conversion failed',
  'index-out-of-range': 'index out of range',
  'division-by-zero': 'division by zero',
  overflow: 'a value out of range',
  regex: 'invalid regular expression',
  'duplicate-key': 'duplicate map key',
  other: 'the expression failed (its message is not shown: it may quote the object)',
};

const ARTICLE: Record<CelResultType, string> = {
  string: 'a string',
  bytes: 'bytes',
  map: 'a map',
  list: 'a list',
  null: 'null',
  type: 'a type',
  timestamp: 'a timestamp',
  duration: 'a duration',
  message: 'a message',
};

/** What one object's test found, in words: `false`, `returned a string, not a boolean`, `error: field not found: status`. */
export function findingText(f: GateFinding): string {
  switch (f.type) {
    case 'boolean':
      return 'false';
    case 'number':
      return `returned the number ${f.value ?? 'NaN or infinity'}, not a boolean`;
    case 'storage':
      return STORAGE_WORDS[f.rule];
    case 'error': {
      const detail =
        f.cause === 'missing-field' && f.field
          ? `: ${f.field}`
          : f.cause === 'no-overload' && (f.operator || f.types)
            ? `${f.operator ? ` for ${f.operator}` : ''}${f.types ? ` applied to (${f.types.join(', ')})` : ''}`
            : f.cause === 'type-mismatch' && f.types?.length === 2
              ? `: expected ${f.types[0]}, got ${f.types[1]}`
              : '';
      return `error: ${ERROR_WORDS[f.cause]}${detail}`;
    }
    case 'string':
    case 'bytes':
    case 'map':
    case 'list':
    case 'null':
    case 'type':
    case 'timestamp':
    case 'duration':
    case 'message':
      return `returned ${ARTICLE[f.type]}, not a boolean`;
  }
}

/** `Volume longhorn-system/pvc-1`, `PersistentVolume pv-1` */
export function objectText(o: GateObjectRef): string {
  return `${name(o.kind)} ${o.namespace ? `${name(o.namespace)}/` : ''}${name(o.name)}`;
}

const count = (n: number, kind: string) => `${n} ${kind}${n === 1 ? '' : 's'}`;

/** A gate's value in words: `3 Volumes, all hold`, `Volume longhorn-system/pvc-1: robustness degraded (and 2 more of 5)`. */
export function gateValueText(v: GateValue): string {
  if (v.unread !== undefined) return `could not be read: the listing failed (${name(v.unread)})`;
  const kind = name(v.kind);
  const selected = v.selected ?? 0;
  const f = v.failing;
  if (!f) return selected === 0 ? `no ${kind} selected` : `${count(selected, kind)}, all hold`;
  const more = f.count > 1 ? ` (and ${f.count - 1} more of ${selected})` : '';
  return `${objectText(f.object)}: ${findingText(f.finding)}${more}`;
}

/** `health gate storage/longhorn-volumes: holds (3 Volumes, all hold)`, one per gate. */
export function gateLines(values: readonly GateValue[]): string[] {
  if (values.length === 0) return ['health gates: none to check (no gate kind is served)'];
  return values.map((v) => `health gate ${v.name}: ${v.holds ? 'holds' : 'does not hold'} (${gateValueText(v)})`);
}

/** The gates that do not hold, one line each (`name: value`), for a log line, a hold's detail or a stop's message. */
export function failingLine(values: readonly GateValue[]): string {
  return values
    .filter((v) => !v.holds)
    .map((v) => `${v.name}: ${gateValueText(v)}`)
    .join('; ');
}
