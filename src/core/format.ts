// The one duration formatter, and the one count of things (`plural`): every report (job summary, log groups, annotations, evidence reasons,
// error messages) writes a span of time the same way, so a figure in a reason can be compared with
// the figure in the duration column next to it.
//
// Style: `850 ms`, `12.3 s` below a minute; from a minute on, Go's notation (`3m25s`, `1h0m0s`,
// `258h12m31s`), the notation talosctl's `(D ago)` and the action's own duration inputs use.
// Truncates, never rounds up: 59 999 ms is `59.9 s`, not `60.0 s`. Pure.

/** A duration for humans; a negative one keeps its sign (a node clock ahead of ours), a non-finite one is `—`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '—';
  const sign = ms < 0 ? '-' : '';
  const a = Math.abs(ms);
  if (a < 1000) return `${sign}${Math.floor(a)} ms`;
  if (a < 60_000) return `${sign}${(Math.floor(a / 100) / 10).toFixed(1)} s`;
  const total = Math.floor(a / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return `${sign}${h > 0 ? `${h}h` : ''}${m}m${s}s`;
}

/**
 * The same formatter for a measured magnitude (a gap, a half-width): spans under a millisecond in
 * µs (nanosecond API readings), and no trailing `.0`, so `+7 s ± 1.5 s` shows the reading's precision
 * and not invented digits. The sign is the caller's.
 */
export function formatMagnitude(ms: number): string {
  const a = Math.abs(ms);
  if (a > 0 && a < 1) return `${Math.round(a * 1000)} µs`;
  return formatDuration(a).replace(/\.0 s$/, ' s');
}

/** A count and its noun, in the plural unless it is one: `1 node`, `3 nodes`, `0 attempts`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
