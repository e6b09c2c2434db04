// Maintenance windows (docs/windows.md): when a node may start. Plain data: the `maintenance-windows`
// input as validated, and what the rule (src/rules/windows.ts) makes of it at one instant.

/** One window: it opens at each start of `start` (a cron in `timezone`) and stays open `durationMs` of elapsed time. */
export interface MaintenanceWindow {
  /** the cron as given: 5 fields (minute first) or 6 (seconds first) */
  start: string;
  durationMs: number;
  /** an IANA time zone; UTC when the item names none */
  timezone: string;
}

/** The windows at one instant: open (until when the union of the open windows closes), or closed (when the next one opens). */
export type WindowsAt =
  | {
      open: true;
      /** ms since the epoch when no window is open any more */
      untilMs?: number;
      /** instead of untilMs: the union goes on past the rule's look-ahead, open at least until then */
      atLeastUntilMs?: number;
      /** the zone of the window whose end `untilMs` is, to say it in */
      timezone: string;
    }
  | {
      open: false;
      /** ms since the epoch when the next window opens; undefined: no cron fires again */
      nextMs?: number;
      timezone: string;
    };

/** The windows as plan mode says them: now (open until when, or closed with the next opening), and, when open, the next opening after they close. */
export interface WindowsForecast {
  now: WindowsAt;
  /** open now: when the next window opens after the union closes (absent: it is open at the look-ahead's end, or none opens again) */
  afterClose?: Extract<WindowsAt, { open: false }>;
}
