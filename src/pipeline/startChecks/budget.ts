// The time budget as a start check (docs/parallel.md): a node starts only when the time left covers
// what it may take at worst; else nothing new starts and the roll ends `partial`. The rule and its
// line are src/rules/budget.ts's.
import type { StartAnswer, StartCheck, StartQuestion } from '../../core/model/startCheck.js';
import { budgetAllows, type BudgetDecision, type Deadline, type FinishedNode } from '../../rules/budget.js';
import type { HoldRecorder } from '../holds.js';

export const BUDGET = 'budget';

/** What the budget weighs: the run's start, one node's own deadlines, what the nodes that finished took. */
export interface BudgetRoll {
  runStartMs: number;
  deadlines: readonly Deadline[];
  times: readonly FinishedNode[];
}

export function budgetCheck(budgetMs: number | undefined, roll: BudgetRoll, holds: HoldRecorder): StartCheck<BudgetDecision> {
  return {
    name: BUDGET,
    ask: (q) => Promise.resolve(ask(q)),
  };

  function ask(q: StartQuestion): StartAnswer<BudgetDecision> {
    const b = budgetAllows({
      budgetMs,
      runStartMs: roll.runStartMs,
      nowMs: q.nowMs,
      role: q.node.role,
      finished: roll.times,
      deadlines: roll.deadlines,
      left: q.left,
    });
    if (b.allowed) return { kind: 'start' };
    // from this moment nothing new starts: the timeline marks it
    holds.start('budget', q.nowMs, b.message, q.node.name);
    q.log.info(b.message);
    return { kind: 'stop', ends: 'partial', check: BUDGET, value: b, message: b.message };
  }
}
