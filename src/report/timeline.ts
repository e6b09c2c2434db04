// The run's timeline for the job summary: one bar per node over the run's time axis, each phase of
// its roll drawn with its own character, a row for the moments the roll held new starts back (the
// settle gate, the health gates, the time budget, the maintenance windows), and the most nodes in flight at once. Plain text in a <pre> block,
// so it renders in any job summary without images; pure, from the decision records and the holds.
//
// Only single-width ASCII is drawn in the chart (node names included: anything else becomes `?`),
// so the columns line up in any monospace font; free text (a hold's detail) only ever ends a line.
import { formatDuration } from '../core/format.js';
import type { DecisionRecord, RollHold } from '../core/model/record.js';
import { stepPhase, type StepPhase } from '../core/steps.js';
import { escapeHtml, oneLine, truncateText } from './escape.js';
import { outcomeLabel } from './log.js';

export interface TimelineInput {
  /** in roll order (the order the run started them) */
  records: readonly DecisionRecord[];
  holds?: readonly RollHold[];
  /** the run's own count of the most nodes in flight at once, checked against the bars */
  inFlightMax?: number;
}

export interface TimelineOptions {
  /** columns of the time axis */
  width?: number;
  /** the most bytes the HTML section may take; node rows past it are counted, not drawn */
  maxBytes?: number;
}

/** The chart as text lines, and what the bars say, for the summary and for tests. */
export interface Timeline {
  lines: string[];
  /** the most nodes in flight at once, from the bars' own start and end */
  inFlightMax: number;
  /** node rows not drawn to stay within maxBytes */
  omitted: number;
}

export const TIMELINE_WIDTH = 60;
const TICK_EVERY = 15;
const MAX_NAME = 24;
const MAX_HOLD_LINES = 20;
const MAX_DETAIL = 240;
const HOLDS_LABEL = '(holds)';

const PHASE_CHAR: Record<StepPhase, string> = {
  claim: 'C',
  drain: 'D',
  reboot: 'R',
  'cri-restart': 'W',
  ready: '^',
  proof: 'P',
  release: 'U',
  other: '-',
};
const SETTLE = 'S';
const BUDGET = '!';
const WINDOW = '#';
/** said only under a timeline that has the mark, so a run without maintenance windows reads as before */
const WINDOW_LEGEND = '# maintenance window: none open, nothing new started from here';
/** the stops that end the roll's starts: drawn as one mark, not a span */
const STOP_MARK: Partial<Record<RollHold['kind'], string>> = { budget: BUDGET, window: WINDOW };

const LEGEND = [
  'C claim  D drain  R reboot  W wait for Talos to restart cri  P proof  ^ wait for Ready  U release',
  '- any other step  S settle or health gate holding a drain or a start  ! time budget: nothing new started from here',
];

interface Bar {
  name: string;
  outcome: string;
  startMs: number;
  endMs: number;
  segments: Array<{ phase: StepPhase; startMs: number; endMs: number }>;
}

interface Hold {
  kind: RollHold['kind'];
  startMs: number;
  endMs?: number;
  detail: string;
  node?: string;
}

const time = (iso: string | undefined): number | undefined => {
  const t = iso === undefined ? Number.NaN : Date.parse(iso);
  return Number.isFinite(t) ? t : undefined;
};

/** A record drawn as a bar: only a record of a node the run started (apply mode) has its start and end. */
function barOf(r: DecisionRecord, suffix: string): Bar | undefined {
  const startMs = time(r.startedAt);
  if (startMs === undefined) return undefined;
  const endMs = Math.max(startMs, time(r.endedAt) ?? startMs + Math.max(0, r.durationMs || 0));
  const segments = r.steps.flatMap((s) => {
    const phase = stepPhase(s.name);
    const at = time(s.startedAt);
    if (phase === 'other' || at === undefined) return [];
    return [{ phase, startMs: at, endMs: at + Math.max(0, Number.isFinite(s.durationMs) ? s.durationMs : 0) }];
  });
  return { name: chartName(r.node, suffix), outcome: outcomeLabel(r.outcome), startMs, endMs, segments };
}

function holdOf(h: RollHold): Hold | undefined {
  const startMs = time(h.startedAt);
  if (startMs === undefined) return undefined;
  const endMs = time(h.endedAt);
  return { kind: h.kind, startMs, endMs: endMs === undefined ? undefined : Math.max(startMs, endMs), detail: h.detail, node: h.node };
}

/**
 * A name as the chart writes it: printable ASCII only, without the domain `suffix` every node shares
 * (`.eu-west-1.compute.internal`), and a long one cut in the middle (the head and the tail kept:
 * nodes of one pool usually differ at the end), the same way on every row.
 */
export function chartName(name: string, suffix = ''): string {
  const full = String(name);
  const short = suffix && full.endsWith(suffix) ? full.slice(0, -suffix.length) : full;
  const ascii = short.replace(/[^\x20-\x7e]/g, '?');
  if (ascii.length <= MAX_NAME) return ascii;
  const head = Math.floor((MAX_NAME - 1) / 2);
  return `${ascii.slice(0, head)}~${ascii.slice(ascii.length - (MAX_NAME - 1 - head))}`;
}

/**
 * The domain every node name ends with (from a `.` on), left out of the chart when a name would be
 * cut otherwise (cloud node names: `ip-10-0-1-23.eu-west-1.compute.internal`); '' when none.
 */
export function sharedDomain(names: readonly string[]): string {
  if (names.length === 0 || names.every((n) => n.length <= MAX_NAME)) return '';
  let suffix = names[0];
  for (const n of names) {
    let i = 0;
    while (i < suffix.length && i < n.length && suffix[suffix.length - 1 - i] === n[n.length - 1 - i]) i++;
    suffix = suffix.slice(suffix.length - i);
  }
  const dot = suffix.indexOf('.');
  if (dot < 0) return '';
  suffix = suffix.slice(dot);
  // a name that is nothing but the suffix keeps it
  return names.some((n) => n.length <= suffix.length) ? '' : suffix;
}

/**
 * The most nodes in flight at once, from the bars: at each start, the nodes started by then and
 * not yet ended. A node ending in the same millisecond another starts is not counted with it (the
 * run ends a node before it starts the next).
 */
export function barsInFlightMax(bars: ReadonlyArray<{ startMs: number; endMs: number }>): number {
  let max = 0;
  for (const b of bars) {
    const n = bars.filter((o) => o === b || (o.startMs <= b.startMs && o.endMs > b.startMs)).length;
    max = Math.max(max, n);
  }
  return max;
}

/** Builds the chart; undefined when there is nothing to draw (plan mode, or no node started and no hold). */
export function buildTimeline(input: TimelineInput, options: TimelineOptions = {}): Timeline | undefined {
  const width = Math.max(TICK_EVERY, options.width ?? TIMELINE_WIDTH);
  const suffix = sharedDomain(input.records.filter((r) => time(r.startedAt) !== undefined).map((r) => r.node));
  const bars = input.records.map((r) => barOf(r, suffix)).filter((b): b is Bar => !!b);
  const holds = (input.holds ?? []).map(holdOf).filter((h): h is Hold => !!h);
  if (bars.length === 0 && holds.length === 0) return undefined;

  const t0 = Math.min(...bars.map((b) => b.startMs), ...holds.map((h) => h.startMs));
  const t1 = Math.max(...bars.map((b) => b.endMs), ...holds.map((h) => h.endMs ?? h.startMs));
  const spanMs = Math.max(1, t1 - t0);
  const axis = new Axis(t0, spanMs, width);
  const nameWidth = Math.max(HOLDS_LABEL.length, ...bars.map((b) => b.name.length));
  const pad = ' '.repeat(nameWidth + 1);
  const rule = `${pad}+${Array.from({ length: width }, (_, c) => (c > 0 && c % TICK_EVERY === 0 ? '+' : '-')).join('')}+`;

  const inFlight = barsInFlightMax(bars);
  const counted = input.inFlightMax === undefined || input.inFlightMax === inFlight ? '' : `; the run counted ${input.inFlightMax}`;
  const head = [
    `${bars.length ? `${bars.length} ${bars.length === 1 ? 'node' : 'nodes'}` : 'no node started'} from ${clock(t0)} to ${clock(t1, t0)} (${formatDuration(t1 - t0)}); one column = ${formatDuration(spanMs / width)}`,
    ...(suffix ? [`node names without their shared domain ${suffix}`] : []),
    `${pad}${axis.labels()}`,
    rule,
  ];
  const tail = [
    ...(holds.length ? [`${HOLDS_LABEL.padEnd(nameWidth)} |${holdsRow(axis, holds)}|`] : []),
    rule,
    `most nodes in flight at once: ${inFlight}${counted}`,
    ...LEGEND,
    ...(holds.some((h) => h.kind === 'window') ? [WINDOW_LEGEND] : []),
    ...holdLines(holds, t0, suffix),
  ];

  const rows = bars.map((b) => `${b.name.padEnd(nameWidth)} |${barRow(axis, b)}| ${b.outcome}`);
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  const note = (n: number) =>
    `... ${n} more ${n === 1 ? 'node' : 'nodes'} not drawn (the summary's size limit): the table has each one's start and end`;
  let used = sectionBytes([...head, ...tail, note(rows.length)]);
  let kept = 0;
  for (const row of rows) {
    const size = lineBytes(row) + 1;
    if (used + size > maxBytes) break;
    used += size;
    kept++;
  }
  const omitted = rows.length - kept;
  return {
    lines: [...head, ...rows.slice(0, kept), ...tail, ...(omitted ? [note(omitted)] : [])],
    inFlightMax: inFlight,
    omitted,
  };
}

/** The time axis: instants to columns. */
class Axis {
  constructor(
    readonly t0: number,
    readonly spanMs: number,
    readonly width: number,
  ) {}

  /** the column an instant falls in */
  col(t: number): number {
    return clamp(Math.floor(((t - this.t0) * this.width) / this.spanMs), 0, this.width - 1);
  }

  /** the last column a span ending at `t` (exclusive) reaches, never before the one it starts in */
  lastCol(start: number, t: number): number {
    return Math.max(this.col(start), clamp(Math.ceil(((t - this.t0) * this.width) / this.spanMs) - 1, 0, this.width - 1));
  }

  /** elapsed times above the rule's ticks: 0 at its left edge, one every TICK_EVERY columns, the whole span at its right edge */
  labels(): string {
    const end = formatDuration(this.spanMs);
    const endAt = Math.max(0, this.width + 2 - end.length);
    let line = '0s';
    for (let c = TICK_EVERY; c < this.width; c += TICK_EVERY) {
      const text = formatDuration((c * this.spanMs) / this.width);
      const at = 1 + c; // the rule's `+` of column c
      if (at > line.length && at + text.length < endAt) line = line.padEnd(at) + text;
    }
    return line.padEnd(Math.max(endAt, line.length + 1)) + end;
  }
}

const clamp = (n: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, n));

/**
 * One node's bar: `-` over its whole run, then each phase over the columns its steps cover. A phase
 * shorter than a column still gets one (the later of two phases sharing a column moves one column
 * on), so every phase a node went through shows, in order.
 */
function barRow(axis: Axis, bar: Bar): string {
  const cells = Array<string>(axis.width).fill(' ');
  for (let c = axis.col(bar.startMs); c <= axis.lastCol(bar.startMs, bar.endMs); c++) cells[c] = PHASE_CHAR.other;
  const spans = bar.segments.map((s) => ({ ch: PHASE_CHAR[s.phase], a: axis.col(s.startMs), b: axis.lastCol(s.startMs, s.endMs) }));
  for (let i = 1; i < spans.length; i++) {
    const prev = spans[i - 1];
    const cur = spans[i];
    if (cur.a > prev.b) continue;
    if (cur.a > prev.a) prev.b = cur.a - 1;
    else {
      prev.b = prev.a;
      cur.a = prev.a + 1;
      cur.b = Math.max(cur.b, cur.a);
    }
  }
  // pushed past the right edge: pull back from the end, each keeping one column
  let limit = axis.width - 1;
  for (let i = spans.length - 1; i >= 0; i--) {
    const s = spans[i];
    if (s.b <= limit) break;
    s.b = limit;
    s.a = Math.min(s.a, s.b);
    limit = s.a - 1;
  }
  for (const s of spans) for (let c = Math.max(0, s.a); c <= s.b; c++) cells[c] = s.ch;
  return cells.join('');
}

/** The settle gate's and the health gates' waits as spans, the budget's and the windows' stop as a mark (drawn last: it ends the roll's starts). */
function holdsRow(axis: Axis, holds: Hold[]): string {
  const cells = Array<string>(axis.width).fill(' ');
  for (const h of holds.filter((x) => !STOP_MARK[x.kind])) {
    const end = h.endMs ?? axis.t0 + axis.spanMs;
    for (let c = axis.col(h.startMs); c <= axis.lastCol(h.startMs, end); c++) cells[c] = SETTLE;
  }
  for (const h of holds) if (STOP_MARK[h.kind]) cells[axis.col(h.startMs)] = STOP_MARK[h.kind]!;
  return cells.join('');
}

/** One line per hold: when, which node it held, and what it waited for (or the budget's message). */
function holdLines(holds: Hold[], t0: number, suffix: string): string[] {
  const lines = holds.slice(0, MAX_HOLD_LINES).map((h) => {
    const at = formatDuration(h.startMs - t0);
    const when = STOP_MARK[h.kind]
      ? `at ${at}`
      : h.endMs === undefined
        ? `from ${at}, still holding`
        : `${at} to ${formatDuration(h.endMs - t0)}`;
    const node = h.node ? ` (${chartName(h.node, suffix)})` : '';
    const what =
      h.kind === 'budget'
        ? `${BUDGET} time budget`
        : h.kind === 'window'
          ? `${WINDOW} maintenance window`
          : h.kind === 'gate'
            ? `${SETTLE} health gate`
            : `${SETTLE} settle gate`;
    return `${what} ${when}${node}: ${truncateText(oneLine(h.detail), MAX_DETAIL)}`;
  });
  if (holds.length > MAX_HOLD_LINES) lines.push(`... ${holds.length - MAX_HOLD_LINES} more holds`);
  return lines;
}

/** `10:03:00Z`, with the date before it when it is not the day of `dayOf` (the axis' start). */
function clock(ms: number, dayOf?: number): string {
  const iso = new Date(ms).toISOString();
  const date = dayOf !== undefined && new Date(dayOf).toISOString().slice(0, 10) === iso.slice(0, 10) ? '' : `${iso.slice(0, 10)} `;
  return `${date}${iso.slice(11, 19)}Z`;
}

/** A line of the chart in the <pre> block: HTML-escaped, and `|` as an entity (a Markdown renderer must not see a table). */
function escapeLine(line: string): string {
  return escapeHtml(line).replace(/\|/g, '&#124;');
}

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
const lineBytes = (line: string): number => bytes(escapeLine(line));
/** The section's heading (the demo and the e2e tests find the chart by it). */
export const TIMELINE_HEADING = '<h3>Timeline of the roll</h3>';
const OPEN = `${TIMELINE_HEADING}\n<pre>`;
const CLOSE = '</pre>';
const sectionBytes = (lines: string[]): number => bytes(OPEN) + bytes(CLOSE) + lines.reduce((n, l) => n + lineBytes(l) + 1, 0);

/** The summary's section: a heading and the chart in a <pre> block, no blank line in it; undefined when there is nothing to draw. */
export function renderTimeline(input: TimelineInput, options: TimelineOptions = {}): string | undefined {
  const t = buildTimeline(input, options);
  if (!t) return undefined;
  const html = `${OPEN}${t.lines.map(escapeLine).join('\n')}${CLOSE}`;
  if (options.maxBytes !== undefined && bytes(html) > options.maxBytes) return undefined;
  return html;
}
