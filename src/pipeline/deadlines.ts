// One node's own deadlines under the run's inputs, with the margins the clients' ports declare, and the
// refusal of a time-budget none of them fits in (the rule: src/rules/budget.ts).
import type { RebootGrace } from '../adapters/types.js';
import { InputError } from '../core/errors.js';
import { budgetTooShort, nodeDeadlines } from '../rules/budget.js';
import { BOOT_ID_READ_MS } from './bootIdBefore.js';
import type { RunContext } from './context.js';
import { READYZ_WAIT_MS } from './apiserver.js';

/** One node's own deadlines; an apply whose time-budget none fits in is refused as an input error. */
export function refuseShortBudget(ctx: RunContext, grace: RebootGrace) {
  const deadlines = deadlinesOf(ctx, grace);
  const tooShort = ctx.config.mode === 'apply' ? budgetTooShort(ctx.config.timeBudgetMs, deadlines) : undefined;
  if (tooShort) throw new InputError('time-budget', tooShort);
  return deadlines;
}

/**
 * One node's own deadlines under this run's inputs, with the margins the clients' ports declare
 * (src/rules/budget.ts): kubectl's past a drain's timeout, the Talos path's past a reboot's.
 */
function deadlinesOf(ctx: RunContext, grace: RebootGrace) {
  const { config } = ctx;
  return nodeDeadlines({
    drainTimeoutMs: config.drainTimeoutMs,
    readyTimeoutMs: config.readyTimeoutMs,
    criRestartWaitMs: config.criRestartWaitMs,
    verifyImage: !!config.verifyImage,
    drainKillGraceMs: ctx.kube.drainKillGraceMs,
    rebootGraceMs: grace.withBootIdMs,
    rebootWithoutBootIdGraceMs: grace.withoutBootIdMs,
    bootIdReadMs: BOOT_ID_READ_MS,
    readyzWaitMs: READYZ_WAIT_MS,
    settleTimeoutMs: ctx.settle.timeoutMs,
  });
}
