// The start-check port (docs/start-checks.md): one answer to "may the next node start?". Every
// condition that may hold or stop a node's start (the settle gate, the storage and user health gates,
// the maintenance windows, the time budget, a drain that can never finish, an Alertmanager silence)
// is one StartCheck; the scheduler asks the list in order and knows none of them by name, as kured's
// reboot blockers are one list behind one interface. Plain data and the interface, no I/O.
import type { NodeState } from './node.js';
import type { SilenceReport } from './silence.js';

/** The names of the start checks, each one file per layer; the result, the summary and the report name a check by it. */
export type StartCheckName = string;

/**
 * What a check found, as data (never a sentence): the summary, the outputs and the report render it.
 * `value` is the check's own typed value (a window's next opening with its zone, a gate's typed
 * findings, the budget's numbers, the budget blocking a drain with its pods).
 */
export interface StartCheckFinding<V = unknown> {
  check: StartCheckName;
  value: V;
  /** the one line the log and the summary say (rendered by the check's report file, from `value`) */
  message: string;
}

/** What one check answers before a node starts. */
export type StartAnswer<V = unknown> =
  /**
   * nothing of this check holds the start; a forecast (plan mode) may still say what it found
   * (the windows open until when, every gate's value, the workloads the settle gate would wait for)
   */
  | ({ kind: 'start' } & Partial<StartCheckFinding<V>>)
  /** not yet: look again at `lookAgainAtMs` (the run's clock), after a poll interval when undefined, or as soon as a node in flight ends */
  | ({ kind: 'hold'; lookAgainAtMs?: number } & StartCheckFinding<V>)
  /**
   * no further node starts in this run; nodes in flight finish. `ends: 'partial'`: the run ends
   * `partial`, stopped by this check; `ends: 'failed'`: the run fails with `error`.
   */
  | ({ kind: 'stop'; ends: 'partial' } & StartCheckFinding<V>)
  | ({ kind: 'stop'; ends: 'failed'; error: Error } & StartCheckFinding<V>)
  /** this node is not started (its record's outcome is `refused`, with `nextStep`); the roll goes on with the next node */
  | ({ kind: 'refuse'; nextStep: string } & StartCheckFinding<V>);

/** What a check is asked with: the node about to start and where the roll is. */
export interface StartQuestion {
  node: NodeState;
  /** the run's clock */
  nowMs: number;
  /** nodes of this run in flight now */
  inFlight: readonly string[];
  /** nodes of this run that ended */
  finished: readonly string[];
  /** selected nodes not started yet, `node` included */
  left: number;
  /** the log of the roll (not of one node): a check says what it waits for here */
  log: { info(message: string): void };
}

/**
 * What checks with a lifetime add to the run's result when the roll has ended, each under its own key
 * (the result, the summary and the report file read them there). A new check that reports adds its key
 * here and returns it from `result`; the pipeline gathers them without knowing which check gave which.
 */
export interface StartCheckReports {
  /** apply with `alertmanager-url`, a roll that started: the silences held for it, their ids, and what failed (docs/alert-silence.md) */
  silence?: SilenceReport;
}

/** One condition on a node's start. Optional hooks are for checks with a lifetime (a silence created before the first start, expired at the end). */
export interface StartCheck<V = unknown> {
  readonly name: StartCheckName;
  /**
   * true: `ask` needs nothing the run takes (no pre-flight check, no Talos client, no Lease, no
   * discovery), so the run asks it once more before any of them: a run it stops (the maintenance
   * windows) claims nothing. Only a `stop` answer counts there.
   */
  readonly beforeAnything?: boolean;
  /** before the roll's first start (after the claims' pre-checks, before any claim); a throw here is the check's own failure */
  begin?(): Promise<void>;
  /** asked before each start, in the list's order; the first answer that is not `start` wins */
  ask(q: StartQuestion): Promise<StartAnswer<V>>;
  /** plan mode: what `ask` would answer now for `node`, with no wait and no write; undefined: nothing to say */
  forecast?(q: StartQuestion): Promise<StartAnswer<V> | undefined>;
  /** the roll ended (every way, cancellation included): release what `begin` took; never throws */
  end?(): Promise<void>;
  /** after the roll (and `end`): what this check adds to the run's result (see StartCheckReports); never throws */
  result?(): StartCheckReports;
}
