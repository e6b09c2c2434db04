// The health gates as a person reads them (docs/gates.md): one line per gate, its value escaped for
// the log and the summary (the value quotes cluster objects and CEL errors).
import type { GateValue } from '../core/model/gates.js';
import { oneLine, truncateText } from './escape.js';

const MAX_VALUE = 300;

/** `health gate storage/longhorn-volumes: holds (3 Volumes, all hold)`, one per gate. */
export function gateLines(values: readonly GateValue[]): string[] {
  if (values.length === 0) return ['health gates: none to check (no gate kind is served)'];
  return values.map((v) => `health gate ${v.name}: ${v.holds ? 'holds' : 'does not hold'} (${truncateText(oneLine(v.value), MAX_VALUE)})`);
}
