// `talosctl -n A ls -l PATH` (cmd/talosctl/cmd/talos/list.go, identical v1.11–v1.13): a tabwriter
// table `NODE MODE UID GID SIZE(B) LASTMOD LABEL NAME`. On ≤1.13 the header is printed before any
// result, so a failed listing still prints it (header-only stdout); a 1.14 client prints nothing.
import { ParseError, excerpt } from '../../../parseError.js';
import { parseTabTable } from './table.js';

export interface LsRow {
  /** the NODE cell: the address as passed to `-n` */
  node: string;
  /** Go FileMode.String(): `-rw-------`, `drwxr-xr-x`, `Lrwxrwxrwx` */
  mode: string;
  uid: number;
  gid: number;
  size: number;
  /** the LASTMOD cell exactly as printed */
  lastMod: string;
  /** SELinux label, '' when the file has none */
  label: string;
  /** relative name (`.` for the listed directory itself), without the ` -> target` of a symlink */
  name: string;
  linkTarget?: string;
}

const FORMAT = 'ls -l';
const COLUMNS = ['NODE', 'MODE', 'UID', 'GID', 'SIZE(B)', 'LASTMOD', 'LABEL', 'NAME'] as const;
// Go FileMode.String(): type/attribute letters (or a lone `-`), then rwx for owner, group, other
const FILE_MODE = /^(-|[dalTLDpSugct?]+)[rwx-]{9}$/;
const UINT = /^\d+$/;

export function parseLsLong(text: string): LsRow[] {
  if (text === '') return [];
  const table = parseTabTable(FORMAT, text, [COLUMNS], false);
  return table.rows.map((r, i) => {
    const where = `row ${i + 1}`;
    if (!r.NODE) throw new ParseError(FORMAT, `${where}: empty NODE`);
    if (!FILE_MODE.test(r.MODE)) throw new ParseError(FORMAT, `${where}: MODE ${excerpt(r.MODE)} is not a Go file mode`);
    for (const c of ['UID', 'GID', 'SIZE(B)'] as const) {
      if (!UINT.test(r[c])) throw new ParseError(FORMAT, `${where}: ${c} ${excerpt(r[c])} is not a number`);
    }
    if (!SHORT.test(r.LASTMOD) && !LONG.test(r.LASTMOD)) {
      throw new ParseError(FORMAT, `${where}: LASTMOD ${excerpt(r.LASTMOD)} is neither "Jan _2 15:04:05" nor "Jan _2 2006 15:04"`);
    }
    if (r.NAME === '') throw new ParseError(FORMAT, `${where}: empty NAME`);
    let name = r.NAME;
    let linkTarget: string | undefined;
    // Only symlinks get ` -> target`; a regular name may contain the same characters.
    if (r.MODE.startsWith('L')) {
      const at = name.indexOf(' -> ');
      if (at < 0) throw new ParseError(FORMAT, `${where}: symlink without " -> target"`);
      linkTarget = name.slice(at + 4);
      name = name.slice(0, at);
    }
    return {
      node: r.NODE,
      mode: r.MODE,
      uid: Number(r.UID),
      gid: Number(r.GID),
      size: Number(r['SIZE(B)']),
      lastMod: r.LASTMOD,
      label: r.LABEL,
      name,
      linkTarget,
    };
  });
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MON = `(${MONTHS.join('|')})`;
// Go's `_2` pads the day with a space: `Aug  4`, `Aug 14`.
const SHORT = new RegExp(`^${MON} ( [1-9]|[1-3][0-9]) ([0-9]{2}):([0-9]{2}):([0-9]{2})$`);
const LONG = new RegExp(`^${MON} ( [1-9]|[1-3][0-9]) ([0-9]{4,}) ([0-9]{2}):([0-9]{2})$`);

const DAY_MS = 86_400_000;
/** talosctl prints the short form when client_now − t < 180×24h, the future included. */
const SHORT_BEFORE_MS = 180 * DAY_MS;
/** how far into the future a year-less date may be placed: the rest of a 365-day window */
const SHORT_AFTER_MS = 185 * DAY_MS;

export interface LastMod {
  /** the earliest instant the truncated text stands for (UTC, as rendered with TZ=UTC) */
  mtimeMs: number;
  /** 1000 for `Jan _2 15:04:05`, 60000 for `Jan _2 2006 15:04` */
  precisionMs: number;
}

/**
 * Interpret a LASTMOD cell rendered with TZ=UTC. The short form has no year: pick the one year that
 * puts the instant in (now − 180 d, now + 185 d]. That window is 365 days long, so at most one
 * year fits; none fits for Feb 29 without a leap year nearby, or when the clocks disagree wildly.
 */
export function interpretLastMod(text: string, clientNowMs: number): LastMod {
  const s = SHORT.exec(text);
  if (s) {
    const [month, day, hh, mm, ss] = [MONTHS.indexOf(s[1]), Number(s[2].trim()), Number(s[3]), Number(s[4]), Number(s[5])];
    checkClock(text, hh, mm, ss);
    const year = new Date(clientNowMs).getUTCFullYear();
    const fits: number[] = [];
    for (const y of [year - 1, year, year + 1]) {
      const t = utc(y, month, day, hh, mm, ss);
      if (t === undefined) continue;
      if (t > clientNowMs - SHORT_BEFORE_MS && t <= clientNowMs + SHORT_AFTER_MS) fits.push(t);
    }
    if (fits.length !== 1) {
      throw new ParseError(
        FORMAT,
        `no year puts LASTMOD ${excerpt(text)} within 180 days before or 185 days after the client clock ${new Date(clientNowMs).toISOString()}`,
      );
    }
    return { mtimeMs: fits[0], precisionMs: 1000 };
  }
  const l = LONG.exec(text);
  if (l) {
    const [month, day, y, hh, mm] = [MONTHS.indexOf(l[1]), Number(l[2].trim()), Number(l[3]), Number(l[4]), Number(l[5])];
    checkClock(text, hh, mm, 0);
    const t = utc(y, month, day, hh, mm, 0);
    if (t === undefined) throw new ParseError(FORMAT, `LASTMOD ${excerpt(text)} is not a calendar date`);
    return { mtimeMs: t, precisionMs: 60_000 };
  }
  throw new ParseError(FORMAT, `LASTMOD ${excerpt(text)} is neither "Jan _2 15:04:05" nor "Jan _2 2006 15:04"`);
}

function checkClock(text: string, hh: number, mm: number, ss: number): void {
  if (hh > 23 || mm > 59 || ss > 59) throw new ParseError(FORMAT, `LASTMOD ${excerpt(text)} is not a time of day`);
}

/** Date.UTC, or undefined when the day does not exist in that month and year (Feb 29, Apr 31). */
function utc(y: number, month: number, day: number, hh: number, mm: number, ss: number): number | undefined {
  const d = new Date(0);
  d.setUTCFullYear(y, month, day);
  d.setUTCHours(hh, mm, ss, 0);
  if (d.getUTCFullYear() !== y || d.getUTCMonth() !== month || d.getUTCDate() !== day) return undefined;
  return d.getTime();
}
