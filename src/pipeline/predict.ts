// Plan mode's predictions of what would hold or stop the roll now, side by side: the run's start checks
// (src/pipeline/startChecks/index.ts) asked for their `forecast`, each saying its own line in the log,
// and what each found put where the result carries it (src/core/model/rolloutResult.ts): the workloads
// the settle gate would wait for, every health gate's value, the maintenance windows now and next.
import type { NodeState } from '../core/model/node.js';
import type { RolloutFindings } from '../core/model/rolloutResult.js';
import type { StartCheck } from '../core/model/startCheck.js';
import { windowPlanLine } from '../report/windows.js';
import type { RunContext } from './context.js';
import { GATE } from './startChecks/healthGates.js';
import { SETTLE, type SettleValue } from './startChecks/settle.js';
import { WINDOW, type WindowsValue } from './startChecks/windows.js';
import type { GateValue } from '../core/model/gates.js';

/** What plan's result carries of the start checks' forecasts. */
export type Predictions = Pick<RolloutFindings, 'settleWaits' | 'gates' | 'windows' | 'windowsAt'>;

/** Every start check's forecast for the first node the roll would start, in the list's order. */
export async function predictStarts(ctx: RunContext, checks: readonly StartCheck[], first: NodeState): Promise<Predictions> {
  const q = { node: first, nowMs: ctx.clock.now(), inFlight: [], finished: [], left: 0, log: ctx.log };
  const found = new Map<string, unknown>();
  for (const check of checks) {
    const a = await check.forecast?.(q);
    if (a && 'check' in a && a.check !== undefined) found.set(a.check, a.value);
  }
  const settle = found.get(SETTLE) as SettleValue | undefined;
  const gates = found.get(GATE) as GateValue[] | undefined;
  const windows = found.get(WINDOW) as WindowsValue | undefined;
  const windowsAt = windows && 'now' in windows ? windows : undefined;
  return {
    ...(windowsAt ? { windows: windowPlanLine(windowsAt.now, windowsAt.afterClose), windowsAt } : {}),
    ...(settle && 'wouldWaitFor' in settle ? { settleWaits: settle.wouldWaitFor } : {}),
    ...(gates ? { gates } : {}),
  };
}
