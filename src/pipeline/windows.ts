// The maintenance windows in a run (docs/windows.md): asked on the run's clock before the first
// start (src/pipeline/run.ts: before the pre-flight check, the Talos client and the Lease, so a run
// outside every window claims nothing) and before each start (src/pipeline/scheduler.ts). The
// decision is src/rules/windows.ts's, the words src/report/windows.ts's.
import { closedNow, windowsAt } from '../rules/windows.js';
import { windowClosedNotice, windowPlanLine } from '../report/windows.js';
import type { RunContext } from './context.js';

/** Before a start: undefined when a window is open (or none is configured), else the notice saying when the next opens. */
export function windowClosed(ctx: Pick<RunContext, 'config' | 'clock'>): string | undefined {
  const closed = closedNow(ctx.config.maintenanceWindows ?? [], ctx.clock.now());
  return closed ? windowClosedNotice(closed) : undefined;
}

/** Plan: whether a window is open now (until when) and when the next opens; undefined when none is configured. */
export function windowPlan(ctx: Pick<RunContext, 'config' | 'clock'>): string | undefined {
  const windows = ctx.config.maintenanceWindows ?? [];
  const now = windowsAt(windows, ctx.clock.now());
  if (!now) return undefined;
  const after = now.open && now.untilMs !== undefined ? windowsAt(windows, now.untilMs) : undefined;
  return windowPlanLine(now, after && !after.open ? after : undefined);
}
