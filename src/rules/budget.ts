// May a new node start within the run's time budget? Pure: times in, a decision with its numbers out.
//
// The rule: a node starts only when the time left is at least what a node of its kind may take.
// "May take" is the longest any node of that kind took so far in this run — but only once one of
// them has rebooted. Whether a node needs a reboot is decided from evidence read AFTER its claim, so
// before the start it is unknown; a reboot (drain + reboot + Ready) costs minutes where a skip costs
// seconds, so skipped nodes alone say nothing about what the next node may take. Until a node of the
// kind has rebooted, the estimate is the configured bound, `drain-timeout + ready-timeout` (the
// caller passes it), or the longest observed if that is longer.
// Workers and control planes are estimated apart: a control plane also waits on the quorum gate and
// drains system pods, so its time says little about a worker's, and the other way round.
// Nodes that failed or were refused are not special-cased: either one stops the roll, so no later
// start is ever weighed against them.
// A denied start ends the roll cleanly (result `partial`): nodes in flight finish by their own rules,
// and a rerun skips every node that carries the verified revision. See docs/parallel.md.
import type { Role } from '../model.js';
import { formatDuration } from '../format.js';

export interface FinishedNode {
  role: Role;
  /** wall time from the node's start to the end of its run */
  tookMs: number;
  /** true when the node was rebooted (its time includes a drain, a reboot and the wait for Ready) */
  rebooted: boolean;
}

export interface BudgetInput {
  /** `time-budget`; undefined: no budget, every start is allowed */
  budgetMs: number | undefined;
  /** when the run started (the clock of `nowMs`) */
  runStartMs: number;
  nowMs: number;
  /** the kind of the node about to start */
  role: Role;
  /** the nodes of this run that finished so far, any kind */
  finished: readonly FinishedNode[];
  /** what a node may take before one of its kind rebooted: drain-timeout + ready-timeout */
  boundMs: number;
  /** selected nodes not started yet (including the one asked about), for the message */
  left: number;
}

export interface BudgetDecision {
  allowed: boolean;
  /** time left in the budget (negative when overrun); undefined without a budget */
  remainingMs?: number;
  /** what a node of this kind may take */
  neededMs: number;
  /** `observed`: the longest time a node of this kind took in this run; `bound`: drain-timeout + ready-timeout; `none`: no budget */
  basis: 'observed' | 'bound' | 'none';
  /** one line for the log and, when not allowed, the notice */
  message: string;
}

const KIND: Record<Role, string> = { worker: 'a worker', 'control-plane': 'a control plane' };

export function budgetAllows(input: BudgetInput): BudgetDecision {
  const { budgetMs, role, boundMs } = input;
  if (budgetMs === undefined) return { allowed: true, neededMs: 0, basis: 'none', message: 'no time-budget' };
  const same = input.finished.filter((f) => f.role === role);
  const longest = same.reduce((m, f) => Math.max(m, f.tookMs), 0);
  const basis = same.some((f) => f.rebooted) ? 'observed' : 'bound';
  const neededMs = basis === 'observed' ? longest : Math.max(boundMs, longest);
  const remainingMs = budgetMs - (input.nowMs - input.runStartMs);
  const allowed = remainingMs >= neededMs;

  const left = `${formatDuration(Math.max(0, remainingMs))} left`;
  const why =
    basis === 'observed'
      ? `${KIND[role]} took up to ${formatDuration(neededMs)} so far`
      : `${KIND[role]} may take up to ${formatDuration(neededMs)} (drain-timeout + ready-timeout; none has rebooted in this run yet)`;
  const verdict = allowed ? 'a new node may start' : `no new node started; ${input.left} node${input.left === 1 ? '' : 's'} left`;
  return { allowed, remainingMs, neededMs, basis, message: `time-budget: ${left}, ${why}: ${verdict}` };
}
