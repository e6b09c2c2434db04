// The settle gate's words (docs/settle.md): what it waits for, in one line, and plan mode's line. The
// waits are src/pipeline/settle.ts's, the decisions src/rules/settle.ts's.
import { workloadName } from '../core/workloads.js';
import type { Unsettled } from '../rules/settle.js';

/** One line naming what the gate waits for. */
export function describeUnsettled(list: readonly Unsettled[]): string {
  return list.map((u) => `${workloadName(u.workload)}: ${u.why}`).join('; ');
}

/** Plan: the workloads the drains would wait for. */
export function settleForecastLine(waits: readonly string[]): string {
  return `settle gate: the drains would wait for ${waits.length ? waits.join(', ') : 'no workload'} to be available again`;
}
