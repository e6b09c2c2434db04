// The maintenance windows as a start check (docs/windows.md): outside every window nothing new starts
// and the roll ends `partial`; nodes in flight finish. Asked before anything is taken too (the
// pre-flight check, the Talos client, the Lease: src/pipeline/run.ts, src/pipeline/checkStops.ts), so a run outside every window
// claims nothing. The decision is src/rules/windows.ts's, the words src/report/windows.ts's.
import type { StartAnswer, StartCheck, StartQuestion } from '../../core/model/startCheck.js';
import type { MaintenanceWindow, WindowsAt, WindowsForecast } from '../../core/model/windows.js';
import { closedNow, windowsForecast } from '../../rules/windows.js';
import { windowClosedNotice, windowPlanLine } from '../../report/windows.js';
import type { HoldRecorder } from '../holds.js';

export const WINDOW = 'window';

/** A stop: the windows closed now, with the next opening and its zone; plan's forecast: the windows now and after. */
export type WindowsValue = Extract<WindowsAt, { open: false }> | WindowsForecast;

export function windowsCheck(windows: readonly MaintenanceWindow[], holds: HoldRecorder): StartCheck<WindowsValue> {
  return {
    name: WINDOW,
    beforeAnything: true,
    ask: (q) => Promise.resolve(ask(q)),
    forecast: (q) => Promise.resolve(forecast(q)),
  };

  function ask(q: StartQuestion): StartAnswer<WindowsValue> {
    const closed = closedNow(windows, q.nowMs);
    if (!closed) return { kind: 'start' };
    const message = windowClosedNotice(closed);
    // from this moment nothing new starts: the timeline marks it
    holds.start('window', q.nowMs, message, q.node.name);
    q.log.info(message);
    return { kind: 'stop', ends: 'partial', check: WINDOW, value: closed, message };
  }

  /** plan: whether a window is open now (until when) and when the next opens */
  function forecast(q: StartQuestion): StartAnswer<WindowsValue> | undefined {
    const w = windowsForecast(windows, q.nowMs);
    if (!w) return undefined;
    const message = windowPlanLine(w.now, w.afterClose);
    q.log.info(message);
    const found = { check: WINDOW, value: w, message };
    return w.now.open ? { kind: 'start', ...found } : { kind: 'hold', ...found };
  }
}
