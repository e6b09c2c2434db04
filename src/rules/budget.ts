// May a new node start within the run's time budget? Pure: times in, a decision with its numbers out.
//
// The rule: a node starts only when the time left covers what that node may take at worst, so that
// the budget, not the job's timeout, ends the run: every node started runs to its own end (released,
// verified, or left by its own rules) before the budget is spent.
// "At worst" is the sum of the node's own deadlines — every long wait it may go through, each ended by
// its own timeout (nodeDeadlines below) — or the longest a node of its kind took so far in this run,
// if that is longer. The sum is not lowered by what earlier nodes took: a node that drained in a
// minute says nothing about the next one, whose drain a PodDisruptionBudget may hold for the whole
// drain-timeout, and whether a node needs a reboot at all is only known after its claim.
// Not counted: the short calls between the waits (reads, patches; each with its own deadline of
// seconds to a minute), which the longest observed time covers in a healthy cluster. docs/large-clusters.md says
// to keep a few minutes between `time-budget` and the job's timeout for them and the post step.
// Workers and control planes are weighed on their own observed times (a control plane also waits on
// the quorum gate and drains system pods).
// Nodes that failed or were refused are not special-cased: either one stops the roll, so no later
// start is ever weighed against them.
// A denied start ends the roll cleanly (result `partial`): nodes in flight finish by their own rules,
// and a rerun skips every node that carries the verified revision. See docs/parallel.md.
import type { Role } from '../core/model/node.js';
import { formatDuration, plural } from '../core/format.js';

export interface FinishedNode {
  role: Role;
  /** wall time from the node's start to the end of its run */
  tookMs: number;
}

/** The deadlines of one node's long waits: the inputs, and the fixed margins the adapters add to them. */
export interface DeadlineInputs {
  drainTimeoutMs: number;
  readyTimeoutMs: number;
  criRestartWaitMs: number;
  /** verify-image is set: one more wait of up to ready-timeout */
  verifyImage: boolean;
  /** how long past `--timeout` a `kubectl drain` may run before it is killed */
  drainKillGraceMs: number;
  /**
   * how long past ready-timeout the Talos path's reboot may run when the boot id before it was read:
   * talosctl's `reboot --wait` until it is killed, nothing over the API (its port says: RebootGrace)
   */
  rebootGraceMs: number;
  /** the same when the role may not read the boot id: the read is refused at once, its bound unspent, and talosctl reboots */
  rebootWithoutBootIdGraceMs: number;
  /** the boot id read before the reboot: its own bound, outside ready-timeout (src/pipeline/bootIdBefore.ts) */
  bootIdReadMs: number;
  /** the wait for `/readyz` after a transport failure, before the one retry */
  readyzWaitMs: number;
  /** `settle-timeout`: the settle gate's wait before the drain (0 or absent: no gate) */
  settleTimeoutMs?: number;
}

/** The inputs a node's long waits are made of: what a user lowers to fit a shorter time-budget. */
export type DeadlineInputName = 'drain-timeout' | 'ready-timeout' | 'settle-timeout' | 'cri-restart-wait';

export interface Deadline {
  what: string;
  ms: number;
  /** the input this wait is made of, and its value; the rest of `ms` is a fixed margin of the adapters */
  from: { input: DeadlineInputName; ms: number };
}

/** Every long wait one node may go through, in order, each at its own deadline. */
export function nodeDeadlines(d: DeadlineInputs): Deadline[] {
  const drain = { input: 'drain-timeout', ms: d.drainTimeoutMs } as const;
  const ready = { input: 'ready-timeout', ms: d.readyTimeoutMs } as const;
  const waits: Deadline[] = [
    ...(d.settleTimeoutMs
      ? [
          {
            what: 'the settle gate before the drain',
            ms: d.settleTimeoutMs,
            from: { input: 'settle-timeout' as const, ms: d.settleTimeoutMs },
          },
        ]
      : []),
    { what: 'the wait for Talos to restart cri', ms: d.criRestartWaitMs, from: { input: 'cri-restart-wait', ms: d.criRestartWaitMs } },
    { what: 'the drain', ms: d.drainTimeoutMs + d.drainKillGraceMs, from: drain },
    {
      what: 'the wait for /readyz and a second drain after a transport failure',
      ms: d.readyzWaitMs + d.drainTimeoutMs + d.drainKillGraceMs,
      from: drain,
    },
    {
      what: 'the boot id read and the reboot',
      // either the read within its bound and the reboot, or a read refused at once and talosctl's reboot
      ms: d.readyTimeoutMs + Math.max(d.bootIdReadMs + d.rebootGraceMs, d.rebootWithoutBootIdGraceMs),
      from: ready,
    },
    { what: 'the wait for /readyz and for Ready', ms: d.readyzWaitMs + d.readyTimeoutMs, from: ready },
  ];
  if (d.verifyImage) waits.push({ what: 'verify-image', ms: d.readyTimeoutMs, from: ready });
  return waits;
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
  /** the node's own deadlines (nodeDeadlines) */
  deadlines: readonly Deadline[];
  /** selected nodes not started yet (including the one asked about), for the message */
  left: number;
}

export interface BudgetDecision {
  allowed: boolean;
  /** time left in the budget (negative when overrun); undefined without a budget */
  remainingMs?: number;
  /** what a node of this kind may take */
  neededMs: number;
  /** `deadlines`: the sum of the node's own deadlines; `observed`: the longest a node of this kind took in this run, when longer; `none`: no budget */
  basis: 'deadlines' | 'observed' | 'none';
  /** one line for the log and, when not allowed, the notice */
  message: string;
}

/**
 * A budget shorter than the sum of one node's own deadlines lets no node start at all: every run would
 * end `partial` with nothing done, which a scheduled job would repeat forever without a word of error.
 * That is a configuration mistake, so it is refused before anything runs (undefined: the budget fits).
 * The refusal says what the sum is made of (each input, how many times it counts, and the fixed
 * margins), so a user knows which inputs to lower, and how far lowering the largest alone would go.
 */
export function budgetTooShort(budgetMs: number | undefined, deadlines: readonly Deadline[]): string | undefined {
  if (budgetMs === undefined) return undefined;
  const sum = deadlines.reduce((s, d) => s + d.ms, 0);
  if (budgetMs >= sum) return undefined;
  const parts = deadlines.map((d) => `${d.what} ${formatDuration(d.ms)}`).join(' + ');
  const inputs = new Map<DeadlineInputName, { ms: number; times: number }>();
  for (const d of deadlines) {
    const e = inputs.get(d.from.input) ?? { ms: d.from.ms, times: 0 };
    e.times++;
    inputs.set(d.from.input, e);
  }
  const terms = [...inputs].sort(([, a], [, b]) => b.ms * b.times - a.ms * a.times);
  const margins = sum - terms.reduce((s, [, e]) => s + e.ms * e.times, 0);
  const formula = terms.map(([name, e]) => `${e.times > 1 ? `${e.times} × ` : ''}${name} (${formatDuration(e.ms)})`).join(' + ');
  const [name, top] = terms[0];
  const over = sum - budgetMs;
  const alone =
    top.ms * top.times > over
      ? `lowering ${name} alone to ${formatDuration(Math.floor((top.ms * top.times - over) / top.times))} would just fit one node, with no time left to start another`
      : `lowering ${name} alone cannot make it fit`;
  return (
    `${formatDuration(budgetMs)} is shorter than what one node may take at worst, ${formatDuration(sum)} (${parts}), so no node could start. ` +
    `That worst case is ${formula} + ${formatDuration(margins)} of fixed margins: lower ${terms.map(([n]) => n).join(', ')} until it is well below time-budget ` +
    `(the difference is the time in which nodes may start; ${alone}), or raise time-budget above ${formatDuration(sum)}. ` +
    'docs/parallel.md, "Sizing a short job", shows how'
  );
}

const KIND: Record<Role, string> = { worker: 'a worker', 'control-plane': 'a control plane' };

export function budgetAllows(input: BudgetInput): BudgetDecision {
  const { budgetMs, role } = input;
  if (budgetMs === undefined) return { allowed: true, neededMs: 0, basis: 'none', message: 'no time-budget' };
  const sum = input.deadlines.reduce((s, d) => s + d.ms, 0);
  const longest = input.finished.filter((f) => f.role === role).reduce((m, f) => Math.max(m, f.tookMs), 0);
  const basis = longest > sum ? 'observed' : 'deadlines';
  const neededMs = Math.max(sum, longest);
  const remainingMs = budgetMs - (input.nowMs - input.runStartMs);
  const allowed = remainingMs >= neededMs;

  const left = `${formatDuration(Math.max(0, remainingMs))} left`;
  const why =
    basis === 'observed'
      ? `${KIND[role]} took up to ${formatDuration(neededMs)} so far`
      : `${KIND[role]} may take up to ${formatDuration(neededMs)} (the sum of its own deadlines)`;
  const verdict = allowed ? 'a new node may start' : `no new node started; ${plural(input.left, 'node')} left`;
  return { allowed, remainingMs, neededMs, basis, message: `time-budget: ${left}, ${why}: ${verdict}` };
}
