// Instants known within bounds: checks and compact rendering, shared by the evidence rule (its
// reasons) and the report (its columns). Pure.
import { formatMagnitude } from './format.js';
import type { Instant } from './model/readings.js';

/** The bounds of an instant or of a span of instants, in epoch ms (fractional on the API path). */
export interface Bounds {
  earliestMs: number;
  latestMs: number;
}

/** Both bounds finite and in order: anything else is an unparseable reading, never an instant. */
export function isValidInstant(i: Instant | undefined): i is Instant {
  return i !== undefined && Number.isFinite(i.earliestMs) && Number.isFinite(i.latestMs) && i.earliestMs <= i.latestMs;
}

/**
 * A gap known to lie in [lowMs, highMs], as midpoint ± half-width: `+412 ms ± 2 ms`, `+7 s ± 1.5 s`,
 * `-300 ms ± 1 s`. An exact gap shows `± 0 ms`, so the reader always sees how well it is known.
 */
export function formatGap(lowMs: number, highMs: number): string {
  const mid = (lowMs + highMs) / 2;
  const half = Math.max(0, (highMs - lowMs) / 2);
  const sign = mid < 0 ? '-' : '+';
  return `${sign}${formatMagnitude(mid)} ± ${half < 0.0005 ? '0 ms' : formatMagnitude(half)}`;
}

/**
 * An instant in UTC, as compact as its bounds allow and without digits the bounds invented:
 * - known to the millisecond or better: `10:15:44.412Z`;
 * - exactly one whole second (a truncated RFC 3339 or `ls -l` reading): `10:15:44Z`;
 * - exactly one whole minute (an `ls -l` row older than 180 days): `10:15Z`;
 * - anything wider (an age placed in the runner window): midpoint ± half-width, `10:15:44.5Z ± 1.3 s`.
 * The date is prefixed (`2026-08-20 10:15:44Z`) unless it is the UTC day of `referenceMs` (the run's
 * day): a column of today's instants stays short, and an instant from another day cannot be misread.
 */
export function formatInstant(b: Bounds, referenceMs?: number): string {
  const { earliestMs: lo, latestMs: hi } = b;
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return '—';
  const width = hi - lo;
  let text: string;
  let at: number;
  if (width < 1) {
    at = lo;
    text = `${clock(lo).slice(0, 12)}Z`;
  } else if (lo % 1000 === 0 && width === 999) {
    at = lo;
    text = `${clock(lo).slice(0, 8)}Z`;
  } else if (lo % 60_000 === 0 && width === 59_999) {
    at = lo;
    text = `${clock(lo).slice(0, 5)}Z`;
  } else {
    at = (lo + hi) / 2;
    const c = clock(Math.round(at / 100) * 100);
    text = `${c.slice(0, 10)}Z ± ${formatMagnitude(width / 2)}`;
  }
  const day = new Date(Math.floor(at)).toISOString().slice(0, 10);
  const refDay = referenceMs !== undefined && Number.isFinite(referenceMs) ? new Date(referenceMs).toISOString().slice(0, 10) : undefined;
  return day === refDay ? text : `${day} ${text}`;
}

/** `HH:MM:SS.mmm` of an epoch ms instant (floored to the millisecond). */
function clock(ms: number): string {
  return new Date(Math.floor(ms)).toISOString().slice(11, 23);
}

// RFC 3339 §5.6, `date-time`: the `T` and `Z` may be lower case; any number of fractional digits.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/;

/** An RFC 3339 timestamp: the whole second it names and its fractional digits as written. */
export interface Rfc3339Time {
  /** epoch ms of the whole second */
  secondMs: number;
  /** the digits after the decimal point, '' when there are none */
  fraction: string;
}

/**
 * The one RFC 3339 parser (Kubernetes MicroTime, COSI metadata as talosctl prints it). Undefined for
 * anything else, including a date no RFC 3339 writer prints: Date.parse would roll Feb 30 over into
 * March and 24:00 into the next day.
 */
export function parseRfc3339(text: string): Rfc3339Time | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number);
  const day = new Date(Date.UTC(y, mo - 1, d));
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) return undefined;
  const secondMs = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${m[8].toUpperCase()}`);
  return Number.isNaN(secondMs) ? undefined : { secondMs, fraction: m[7] ?? '' };
}

/** Epoch ms of an RFC 3339 timestamp, digits below the millisecond truncated; undefined when it is none. */
export function rfc3339Ms(text: string): number | undefined {
  const t = parseRfc3339(text);
  return t && t.secondMs + Number(t.fraction.slice(0, 3).padEnd(3, '0'));
}
