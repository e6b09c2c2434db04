// Go's time.Duration text: talosctl prints event ages with Duration.String() ("3m25s ago") and takes
// --timeout flags through time.ParseDuration. Integer nanoseconds (BigInt) keep `2m0.5s` and `0.1s`
// exact; doubles would not.
import { ParseError, excerpt } from '../../../parseError.js';

const UNIT_NS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n, // U+00B5, what Duration.String() prints
  μs: 1_000n, // U+03BC, also accepted by time.ParseDuration
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const PART = /(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/y;

/** Parse a Go duration (`0s`, `3m25s`, `-4s`, `2m0.5s`, `1µs`) to nanoseconds. */
export function parseGoDurationNs(text: string): bigint {
  let i = 0;
  let sign = 1n;
  if (text[0] === '-' || text[0] === '+') {
    sign = text[0] === '-' ? -1n : 1n;
    i = 1;
  }
  const body = text.slice(i);
  if (body === '0') return 0n;
  if (body === '') throw new ParseError('Go duration', `empty duration ${excerpt(text)}`);
  let total = 0n;
  let pos = 0;
  while (pos < body.length) {
    PART.lastIndex = pos;
    const m = PART.exec(body);
    if (!m || (m[1] === '' && (m[2] === undefined || m[2] === ''))) {
      throw new ParseError('Go duration', `unexpected text at offset ${pos + i} in ${excerpt(text)}`);
    }
    const unit = UNIT_NS[m[3]];
    const whole = m[1] === '' ? 0n : BigInt(m[1]);
    let frac = 0n;
    if (m[2]) {
      // scale the fraction digits to the unit without floating point
      const digits = m[2];
      frac = (BigInt(digits) * unit) / 10n ** BigInt(digits.length);
    }
    total += whole * unit + frac;
    pos = PART.lastIndex;
  }
  return sign * total;
}

/** Parse a Go duration to milliseconds (fractional below 1 ms, e.g. `1µs` → 0.001). */
export function parseGoDuration(text: string): number {
  const ns = parseGoDurationNs(text);
  const ms = ns / 1_000_000n;
  const rest = ns % 1_000_000n;
  return Number(ms) + Number(rest) / 1e6;
}

/** Go's Duration.String() for a whole number of nanoseconds. */
export function formatGoDurationNs(d: bigint): string {
  if (d === 0n) return '0s';
  const neg = d < 0n;
  let u = neg ? -d : d;
  let out: string;
  if (u < 1_000_000_000n) {
    let prec: number;
    let unit: string;
    if (u < 1_000n) {
      prec = 0;
      unit = 'ns';
    } else if (u < 1_000_000n) {
      prec = 3;
      unit = 'µs';
    } else {
      prec = 6;
      unit = 'ms';
    }
    const [frac, int] = fmtFrac(u, prec);
    out = `${int}${frac}${unit}`;
  } else {
    const [frac, secs] = fmtFrac(u, 9);
    u = secs;
    out = `${u % 60n}${frac}s`;
    u /= 60n;
    if (u > 0n) {
      out = `${u % 60n}m${out}`;
      u /= 60n;
      if (u > 0n) out = `${u}h${out}`;
    }
  }
  return neg ? `-${out}` : out;
}

/** Go's Duration.String() for milliseconds (rounded to whole nanoseconds). */
export function formatGoDuration(ms: number): string {
  if (!Number.isFinite(ms)) throw new RangeError(`not a finite duration: ${ms}`);
  const whole = Math.trunc(ms);
  const ns = BigInt(whole) * 1_000_000n + BigInt(Math.round((ms - whole) * 1e6));
  return formatGoDurationNs(ns);
}

// Go's fmtFrac: the fraction of v/10^prec without trailing zeros (no dot when it is zero).
function fmtFrac(v: bigint, prec: number): [string, bigint] {
  let s = '';
  let print = false;
  for (let i = 0; i < prec; i++) {
    const digit = v % 10n;
    print = print || digit !== 0n;
    if (print) s = `${digit}${s}`;
    v /= 10n;
  }
  return [print ? `.${s}` : '', v];
}
