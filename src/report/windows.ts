// The maintenance windows' texts (docs/windows.md): the notice of a run the windows stopped, and
// plan mode's line. Each instant is said as ISO 8601 with the offset it has in the window's zone,
// then the zone, e.g. `2026-12-07T02:00:00+01:00 (Europe/Copenhagen)`, so a reader in any zone sees
// the window's own wall time and the absolute instant at once.
import type { WindowsAt } from '../core/model/windows.js';

/** `2026-12-07T02:00:00+01:00 (Europe/Copenhagen)`; whole seconds (a cron fires on whole seconds). */
export function formatZoned(ms: number, timezone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  const wall = Date.UTC(+parts.year, +parts.month - 1, +parts.day, +parts.hour, +parts.minute, +parts.second);
  const offsetMin = Math.round((wall - Math.floor(ms / 1000) * 1000) / 60_000);
  const sign = offsetMin < 0 ? '-' : '+';
  const abs = Math.abs(offsetMin);
  const offset = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset} (${timezone})`;
}

/** When the next window opens, as a clause: `the next opens at …`, or that none ever opens again. */
export function nextOpening(w: Extract<WindowsAt, { open: false }>): string {
  return w.nextMs === undefined ? 'no window opens again' : `the next opens at ${formatZoned(w.nextMs, w.timezone)}`;
}

/** Apply: the notice when no window is open before a start (the publisher adds how many nodes are left). */
export function windowClosedNotice(w: Extract<WindowsAt, { open: false }>): string {
  return `outside every maintenance window: no further node was started; ${nextOpening(w)}`;
}

/** Plan: is a window open now (until when), and when the next opens (the log's line). */
export function windowPlanLine(w: WindowsAt, next?: Extract<WindowsAt, { open: false }>): string {
  return `maintenance windows: ${windowsNowText(w, next)}`;
}

/** The windows now, as the summary says them after its own label: open until when and the next opening, or closed. */
export function windowsNowText(w: WindowsAt, next?: Extract<WindowsAt, { open: false }>): string {
  if (w.open) {
    const until =
      w.untilMs !== undefined
        ? `until ${formatZoned(w.untilMs, w.timezone)}`
        : `at least until ${formatZoned(w.atLeastUntilMs ?? 0, w.timezone)}`;
    const then = next ? `; after it closes, ${nextOpening(next)}` : '';
    return `open now, ${until}${then}`;
  }
  return `none open now, a run would start no node; ${nextOpening(w)}`;
}
