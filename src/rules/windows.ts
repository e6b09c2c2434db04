// Maintenance windows (docs/windows.md): is a window open at an instant, until when, and when does
// the next one open. Pure: windows and an instant in, the answer out; the start check asks before each
// start (src/pipeline/startChecks/windows.ts). Judged in absolute time: a window is open at `now` iff one of its
// starts s (computed by croner in the window's zone) has s <= now < s + duration; a duration is
// elapsed time, so a window over a DST change lasts exactly its duration. The windows' union counts:
// where they overlap or touch, the run sees one longer window. What croner does with a start inside
// the spring-forward gap or the repeated autumn hour is written down beside the tests that show it
// (__tests__/rules/windows.test.ts) and in docs/windows.md.
import { Cron } from 'croner';
import type { MaintenanceWindow, WindowsAt, WindowsForecast } from '../core/model/windows.js';

/** How far the union's end is followed: a window set that stays open longer is said to be open "at least until" then. */
export const WINDOW_LOOKAHEAD_MS = 2 * 24 * 3_600_000;
/**
 * Windows followed in that search; a frequent cron with a long duration (open all the time in effect)
 * stops here rather than at the horizon (croner takes about a millisecond per start in a zone).
 */
const MAX_STEPS = 24;
/**
 * croner answers "the next start after t" by wall time in the zone, so asked from inside a DST change it
 * can skip a start: from 03:00 CEST on 2026-03-29 it no longer sees that day's 02:30 (which it puts at
 * 03:30 CEST when asked from before the jump), and from 02:45 CEST on 2026-10-25 it skips the 02:30 of
 * the repeated hour (02:30 CET). So a start is looked for along croner's own chain of starts from this
 * long before t: a skip only hides a start within the shift of the change (at most 2 hours, Antarctica/Troll)
 * after where the chain began, before t. The starts are then one set of instants whenever they are asked.
 */
const CHAIN_MARGIN_MS = 3 * 3_600_000;
/** A cron firing more often than this along the margin has no gap worth the walk: asked directly instead. */
const MAX_CHAIN_STEPS = 20;

/** The first start of `cron` strictly after `t`, the same whenever it is asked (see CHAIN_MARGIN_MS). */
export function startAfter(cron: Cron, t: number): number | undefined {
  let s = cron.nextRun(new Date(t - CHAIN_MARGIN_MS))?.getTime();
  for (let steps = 0; s !== undefined && s <= t; steps++) {
    s = steps < MAX_CHAIN_STEPS ? cron.nextRun(new Date(s))?.getTime() : cron.nextRun(new Date(t))?.getTime();
  }
  return s;
}

type Compiled = Array<{ w: MaintenanceWindow; cron: Cron }>;

/** Before a start: undefined when a window is open (or there is none), else when the next opens. Does not follow the union. */
export function closedNow(windows: readonly MaintenanceWindow[], nowMs: number): Extract<WindowsAt, { open: false }> | undefined {
  if (windows.length === 0) return undefined;
  const crons = compile(windows);
  return covering(crons, nowMs) ? undefined : nextOpening(crons, nowMs);
}

/** The windows at `nowMs`, open until when (the union followed) or when the next opens; undefined when there is none. */
export function windowsAt(windows: readonly MaintenanceWindow[], nowMs: number): WindowsAt | undefined {
  if (windows.length === 0) return undefined;
  const crons = compile(windows);
  let open = covering(crons, nowMs);
  if (!open) return nextOpening(crons, nowMs);
  // the union: while a window covers the current end (overlapping or starting just as it closes), follow it
  for (let steps = 0; steps < MAX_STEPS && open.endMs - nowMs <= WINDOW_LOOKAHEAD_MS; steps++) {
    const next = covering(crons, open.endMs);
    if (!next) return { open: true, untilMs: open.endMs, timezone: open.w.timezone };
    open = next;
  }
  return { open: true, atLeastUntilMs: open.endMs, timezone: open.w.timezone };
}

/** Plan: the windows at `nowMs` and, when open, when the next opens after they close; undefined when there is none. */
export function windowsForecast(windows: readonly MaintenanceWindow[], nowMs: number): WindowsForecast | undefined {
  const now = windowsAt(windows, nowMs);
  if (!now) return undefined;
  const after = now.open && now.untilMs !== undefined ? windowsAt(windows, now.untilMs) : undefined;
  return after && !after.open ? { now, afterClose: after } : { now };
}

function compile(windows: readonly MaintenanceWindow[]): Compiled {
  return windows.map((w) => ({ w, cron: new Cron(w.start, { timezone: w.timezone }) }));
}

/** A window open at `at`: the earliest start whose window still covers it (the first start strictly after at - duration). */
function covering(crons: Compiled, at: number): { w: MaintenanceWindow; endMs: number } | undefined {
  for (const { w, cron } of crons) {
    const s = startAfter(cron, at - w.durationMs);
    if (s !== undefined && s <= at) return { w, endMs: s + w.durationMs };
  }
  return undefined;
}

function nextOpening(crons: Compiled, nowMs: number): Extract<WindowsAt, { open: false }> {
  let first: { atMs: number; timezone: string } | undefined;
  for (const { w, cron } of crons) {
    const s = startAfter(cron, nowMs);
    if (s !== undefined && (!first || s < first.atMs)) first = { atMs: s, timezone: w.timezone };
  }
  return first ? { open: false, nextMs: first.atMs, timezone: first.timezone } : { open: false, timezone: crons[0].w.timezone };
}
