'use strict';
// Client-side rendering shared by the fake talosctl executable and the TypeScript sim (which loads it
// with createRequire). It lives here, as plain CommonJS, because the executable must start without a
// TypeScript compile step, and the same code must not exist twice.
//
// The sim sends text with time placeholders; the executable resolves them against ITS OWN clock and
// time zone at print time (as talosctl does: `time.Since(ts)` and `time.Unix(s,0).Format` run on the
// client), then runs Go's text/tabwriter over table segments.

const SEP = '\u0000';

/** Placeholder for `time.Since(ts).Round(time.Second).String()`; ts in ms on the node's wall clock. */
function agoMark(tsMs) {
  return `${SEP}A${Math.round(tsMs)}${SEP}`;
}

/** Placeholder for talosctl's `ls -l` LASTMOD cell; unix seconds (already truncated by the node). */
function lsTimeMark(unixSec) {
  return `${SEP}L${Math.trunc(unixSec)}${SEP}`;
}

/** Go's Duration.String() for a whole number of seconds (what Round(time.Second) leaves). */
function goDurationSeconds(totalSeconds) {
  if (totalSeconds === 0) return '0s';
  const neg = totalSeconds < 0;
  let s = Math.abs(totalSeconds);
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  let out = '';
  if (h > 0) out = `${h}h${m}m${s}s`;
  else if (m > 0) out = `${m}m${s}s`;
  else out = `${s}s`;
  return (neg ? '-' : '') + out;
}

/** time.Duration(ms).Round(time.Second): halves round away from zero. Returns whole seconds. */
function roundToSecond(ms) {
  const neg = ms < 0;
  const a = Math.abs(ms);
  const r = a % 1000;
  const q = (a - r) / 1000;
  const rounded = r + r < 1000 ? q : q + 1;
  return neg ? -rounded : rounded;
}

/** "(D ago)" duration text as talosctl prints it, for an event stamped tsMs, seen at nowMs. */
function agoText(tsMs, nowMs) {
  return goDurationSeconds(roundToSecond(nowMs - tsMs));
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const SIX_MONTHS_MS = 6 * 24 * 30 * 3600 * 1000;

function pad2(n) {
  return n < 10 ? `0${n}` : String(n);
}

/**
 * The broken-down local time of a unix instant in the zone this process runs in. Node honours TZ for
 * Date's local getters, as Go honours it for time.Local; the action runs talosctl with TZ=UTC.
 */
function isUtcZone(tz) {
  return tz === 'UTC' || tz === '' || tz === 'Etc/UTC' || tz === ':UTC';
}

/** Intl formatters by zone, for a client whose TZ is not this process's (the twin's front door). */
const zoneFormats = new Map();

function zoneFormat(tz) {
  let f = zoneFormats.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    zoneFormats.set(tz, f);
  }
  return f;
}

/**
 * Whether a client with TZ `tz` (undefined: unset) can render its times in this process: a UTC zone,
 * this process's own TZ, or a zone name ICU knows (the same tables Node's local getters use under that
 * TZ). Anything else (an unset TZ while this process has one, a POSIX rule such as `JST-9`) cannot be
 * reproduced here, so the twin's front door hands such a call back to a process of its own.
 */
function zoneRenderable(tz) {
  if (isUtcZone(tz) || tz === process.env.TZ) return true;
  if (tz === undefined || tz.startsWith(':')) return false;
  try {
    zoneFormat(tz);
    return true;
  } catch {
    return false;
  }
}

function localParts(unixSec, tz) {
  const d = new Date(unixSec * 1000);
  if (tz !== undefined && tz !== process.env.TZ && !isUtcZone(tz)) {
    // another zone than this process's (zoneRenderable said ICU knows it): its wall clock by name
    const p = {};
    for (const part of zoneFormat(tz).formatToParts(d)) p[part.type] = Number(part.value);
    return { year: p.year, month: p.month - 1, day: p.day, hour: p.hour, minute: p.minute, second: p.second };
  }
  if (isUtcZone(tz)) {
    return {
      year: d.getUTCFullYear(),
      month: d.getUTCMonth(),
      day: d.getUTCDate(),
      hour: d.getUTCHours(),
      minute: d.getUTCMinutes(),
      second: d.getUTCSeconds(),
    };
  }
  return {
    year: d.getFullYear(),
    month: d.getMonth(),
    day: d.getDate(),
    hour: d.getHours(),
    minute: d.getMinutes(),
    second: d.getSeconds(),
  };
}

/**
 * LASTMOD of `talosctl ls -l`: `Jan _2 15:04:05` when the file is younger than 180 days by the
 * client's clock (future instants included), else `Jan _2 2006 15:04`.
 */
function lsTimeText(unixSec, nowMs, tz) {
  const p = localParts(unixSec, tz === undefined ? process.env.TZ : tz);
  const day = p.day < 10 ? ` ${p.day}` : String(p.day);
  if (nowMs - unixSec * 1000 < SIX_MONTHS_MS) {
    return `${MONTHS[p.month]} ${day} ${pad2(p.hour)}:${pad2(p.minute)}:${pad2(p.second)}`;
  }
  return `${MONTHS[p.month]} ${day} ${p.year} ${pad2(p.hour)}:${pad2(p.minute)}`;
}

/** Placeholder for go-humanize Time() of a unix-seconds instant (`ls -lH`). */
function humanizeTimeMark(unixSec) {
  return `${SEP}H${Math.trunc(unixSec)}${SEP}`;
}

const SEC = 1000;
const DAY = 24 * 3600 * SEC;
const MONTH = 30 * DAY;
const YEAR = 12 * MONTH;
// go-humanize's defaultMagnitudes: [upper bound, format, divisor]
const MAGNITUDES = [
  [SEC, 'now', 1],
  [2 * SEC, '1 second %s', 1],
  [60 * SEC, '%d seconds %s', SEC],
  [120 * SEC, '1 minute %s', 1],
  [3600 * SEC, '%d minutes %s', 60 * SEC],
  [7200 * SEC, '1 hour %s', 1],
  [DAY, '%d hours %s', 3600 * SEC],
  [2 * DAY, '1 day %s', 1],
  [7 * DAY, '%d days %s', DAY],
  [14 * DAY, '1 week %s', 1],
  [MONTH, '%d weeks %s', 7 * DAY],
  [2 * MONTH, '1 month %s', 1],
  [YEAR, '%d months %s', MONTH],
  [18 * MONTH, '1 year %s', 1],
  [2 * YEAR, '2 years %s', 1],
  [37 * YEAR, '%d years %s', YEAR],
  [Infinity, 'a long while %s', 1],
];

/** go-humanize Time(then): relative to nowMs, "ago" or "from now". */
function humanizeTimeText(unixSec, nowMs) {
  let diff = nowMs - unixSec * 1000;
  let label = 'ago';
  if (diff < 0) {
    diff = -diff;
    label = 'from now';
  }
  const mag = MAGNITUDES.find((m) => m[0] > diff) || MAGNITUDES[MAGNITUDES.length - 1];
  return mag[1].replace('%d', String(Math.trunc(diff / mag[2]))).replace('%s', label);
}

/** Replaces the sim's time placeholders using the given clock reading and zone. */
function resolveMarks(text, nowMs, tz) {
  if (text.indexOf(SEP) < 0) return text;
  return text.replace(/\u0000([ALH])(-?\d+)\u0000/g, (_m, kind, num) => {
    const n = Number(num);
    if (kind === 'A') return agoText(n, nowMs);
    if (kind === 'L') return lsTimeText(n, nowMs, tz);
    return humanizeTimeText(n, nowMs);
  });
}

function runeCount(s) {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * Go text/tabwriter with minwidth 0, tabwidth 0, padchar ' ', no flags (what talosctl uses), for text
 * that contains only '\t' and '\n' as control characters. A line with a single cell flushes the writer,
 * so column blocks restart after it, exactly as in Go.
 */
function tabwrite(text, padding) {
  const pad = padding === undefined ? 3 : padding;
  const raw = text.split('\n');
  let out = '';
  let block = [];
  for (let i = 0; i < raw.length; i++) {
    const last = i === raw.length - 1;
    if (last) {
      if (raw[i] !== '') block.push({ cells: raw[i].split('\t'), nl: false });
      break;
    }
    const cells = raw[i].split('\t');
    block.push({ cells, nl: true });
    if (cells.length === 1) {
      out += formatBlock(block, pad);
      block = [];
    }
  }
  out += formatBlock(block, pad);
  return out;
}

function formatBlock(lines, padding) {
  const widths = [];
  let out = '';
  const cellW = lines.map((l) => l.cells.map(runeCount));

  const writeLines = (line0, line1) => {
    for (let i = line0; i < line1; i++) {
      const { cells, nl } = lines[i];
      for (let j = 0; j < cells.length; j++) {
        const c = cells[j];
        if (c.length > 0) out += c;
        if (j < widths.length) out += ' '.repeat(Math.max(0, widths[j] - cellW[i][j]));
      }
      if (nl) out += '\n';
    }
  };

  const format = (line0In, line1) => {
    let line0 = line0In;
    const column = widths.length;
    for (let t = line0; t < line1; t++) {
      if (column >= lines[t].cells.length - 1) continue;
      writeLines(line0, t);
      line0 = t;
      let width = 0;
      for (; t < line1; t++) {
        if (column >= lines[t].cells.length - 1) break;
        const w = cellW[t][column] + padding;
        if (w > width) width = w;
      }
      widths.push(width);
      format(line0, t);
      widths.pop();
      line0 = t;
      // Go's loop increment then skips line t; harmless, as it has no cell in this column.
    }
    writeLines(line0, line1);
  };

  format(0, lines.length);
  return out;
}

module.exports = {
  agoMark,
  lsTimeMark,
  goDurationSeconds,
  roundToSecond,
  agoText,
  lsTimeText,
  humanizeTimeMark,
  humanizeTimeText,
  resolveMarks,
  tabwrite,
  runeCount,
  zoneRenderable,
};
