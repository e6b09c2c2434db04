// The start checks of a run, in the order they are asked (docs/start-checks.md): one line per check,
// each one file per layer (its rule in src/rules/, its words in src/report/, its check here). The
// scheduler (src/pipeline/scheduler.ts) asks this list through the port (src/core/model/startCheck.ts)
// and knows none of them; plan mode asks the same list for its predictions (src/pipeline/predict.ts).
// A new start condition is one file here and one line below ("A new start condition" in docs/start-checks.md).
import type { NodeState } from '../../core/model/node.js';
import type { StartCheck } from '../../core/model/startCheck.js';
import type { RunContext } from '../context.js';
import { budgetCheck, type BudgetRoll } from './budget.js';
import { healthGatesCheck } from './healthGates.js';
import { settleCheck, type PlannedDrains } from './settle.js';
import { silenceCheck } from './silence.js';
import { unsatisfiableDrainCheck } from './unsatisfiableDrain.js';
import { windowsCheck } from './windows.js';

/** What the checks read of the roll as it goes: the resolved max-unavailable, and the budget's numbers. */
export interface ChecksRoll extends BudgetRoll {
  maxUnavailable: number;
  /** the nodes the first listing selected to roll (the silence's `$NODES`) */
  selected: readonly NodeState[];
}

/** The run's start checks, built once per run from its context; `planned`: plan mode's drains, for the settle gate's forecast. */
export function startChecks(ctx: RunContext, roll: ChecksRoll, planned?: PlannedDrains): StartCheck[] {
  return [
    ...silenceCheck(ctx, roll.selected), // an Alertmanager silence for the roll, opt-in (docs/alert-silence.md)
    settleCheck(ctx.settle, () => roll.maxUnavailable, planned),
    ...(ctx.gates ? [healthGatesCheck(ctx.gates)] : []),
    windowsCheck(ctx.config.maintenanceWindows ?? [], ctx.holds),
    budgetCheck(ctx.config.timeBudgetMs, roll, ctx.holds),
    unsatisfiableDrainCheck(ctx), // a drain that can never finish: the node refused before its claim (docs/refused-drains.md)
  ] as StartCheck[];
}
