// The run's side of the start checks' stops (docs/start-checks.md): the checks that need nothing the run
// takes, asked before anything is taken, and a `partial` stop as the result says it (the check's line,
// its report name, what it found as data).
import { partialCause } from '../core/model/rolloutResult.js';
import type { StartAnswer, StartCheck, StartCheckFinding } from '../core/model/startCheck.js';
import type { RunContext } from './context.js';
import type { Listing, ScopedFindings } from './listing.js';

/** The start checks that need nothing the run takes, asked once before anything is taken (apply): their first `stop`, if any. */
export async function askBeforeAnything(
  ctx: RunContext,
  checks: readonly StartCheck[],
  first: Listing,
): Promise<Extract<StartAnswer, { kind: 'stop' }> | undefined> {
  const q = { node: first.selected[0], nowMs: ctx.clock.now(), inFlight: [], finished: [], left: first.selected.length, log: ctx.log };
  for (const check of checks.filter((c) => c.beforeAnything)) {
    const a = await check.ask(q);
    if (a.kind === 'stop') return a;
  }
  return undefined;
}

/** A run a start check stopped before anything was taken: `partial`, every selected node left, nothing read past the listing. */
export function stoppedBeforeAnything(
  ctx: RunContext,
  first: Listing,
  stop: Extract<StartAnswer, { kind: 'stop'; ends: 'partial' }>,
): ScopedFindings {
  return {
    result: 'partial',
    records: [],
    notReached: first.selected.map((n) => n.name),
    upToDate: first.upToDate,
    ...partialOf(stop.message, stop),
    holds: ctx.holds.all,
    scope: first.scope,
  };
}

/** A `partial` result's fields: the check's line as the notice, its report name, what it found as data. */
export function partialOf(notice: string, stop: StartCheckFinding): Pick<ScopedFindings, 'notice' | 'stoppedBy' | 'stop'> {
  const stoppedBy = partialCause(stop.check);
  return { notice, ...(stoppedBy ? { stoppedBy } : {}), stop: { check: stop.check, value: stop.value, message: stop.message } };
}
