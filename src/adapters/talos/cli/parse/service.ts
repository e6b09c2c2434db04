// `talosctl -n A[,B] service <id>` single-service view (formatters.RenderServicesInfo, ≤1.13 and 1.14
// clients alike): `LABEL<TAB>value` lines through one tabwriter, one block per node, events newest
// first as `[State]: msg (D ago)`.
//
// The label column width is not a constant: it is the longest label of a tabwriter column block + 3
// (9 without a LAST HEALTH MESSAGE, 22 with one), and a message containing a newline prints a line
// with no tab, which ends the block, so the lines after it get a width of their own (3 for a run of
// empty labels). Lines are therefore recognised by their label and ≥ 3 spaces, not by a fixed width;
// a line that matches no label continues the previous multi-line message.
import { parseGoDuration } from './goDuration.js';
import { ParseError, excerpt } from '../../../parseError.js';

export interface ServiceNodeView {
  /** the NODE line: the address exactly as passed to `-n` */
  node: string;
  id: string;
  state: string;
  /** `OK`, `Fail` or `?` */
  health: string;
  /** present only when talosctl printed the line (it does only when non-empty) */
  lastHealthMessage?: string;
  /** newest first, as printed */
  events: PrintedEvent[];
}

/** One event line as printed: its age is relative to the moment talosctl printed it (the adapter places it). */
export interface PrintedEvent {
  state: string;
  message: string;
  /** `time.Since(ts).Round(time.Second)` in ms (negative when the node clock is ahead of the runner) */
  agoMs: number;
  /** the age exactly as printed, e.g. `2h59m50s` */
  ageText: string;
}

const FORMAT = 'service';
const LABELED = /^(NODE|ID|STATE|HEALTH|LAST HEALTH MESSAGE|EVENTS) {3,}(.*)$/s;
const UNLABELED_EVENT = /^ {3,}(\[[A-Za-z]+\]: .*)$/s;
// The age is the LAST parenthesised group: messages carry their own parentheses and quotes.
const EVENT = /^\[([A-Za-z]+)\]: ([\s\S]*) \(([-+]?[0-9][0-9.]*(?:ns|us|µs|μs|ms|s|m|h)(?:[0-9.]+(?:ns|us|µs|μs|ms|s|m|h))*) ago\)$/;

type Field = 'NODE' | 'ID' | 'STATE' | 'HEALTH' | 'LAST HEALTH MESSAGE' | 'EVENTS' | '';

export function parseServiceView(text: string): ServiceNodeView[] {
  const lines = text.split('\n');
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0) throw new ParseError(FORMAT, 'empty output');

  // First pass: join physical lines into logical `label: value` entries.
  const entries: Array<{ label: Field; value: string; line: number }> = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const labeled = LABELED.exec(line);
    if (labeled) {
      entries.push({ label: labeled[1] as Field, value: labeled[2], line: i + 1 });
      continue;
    }
    const unlabeled = UNLABELED_EVENT.exec(line);
    if (unlabeled) {
      entries.push({ label: '', value: unlabeled[1], line: i + 1 });
      continue;
    }
    const prev = entries[entries.length - 1];
    if (!prev || (prev.label !== 'EVENTS' && prev.label !== '' && prev.label !== 'LAST HEALTH MESSAGE')) {
      throw new ParseError(FORMAT, `line ${i + 1} has no known label: ${excerpt(line)}`);
    }
    prev.value += `\n${line}`;
  }

  const views: ServiceNodeView[] = [];
  let cur: ServiceNodeView | undefined;
  let expect: Field[] = ['NODE'];
  for (const e of entries) {
    if (!expect.includes(e.label)) {
      throw new ParseError(
        FORMAT,
        `line ${e.line}: expected ${expect.map((x) => x || '(event continuation)').join(' or ')}, got ${e.label || 'an unlabelled event'}`,
      );
    }
    switch (e.label) {
      case 'NODE':
        cur = { node: e.value, id: '', state: '', health: '', events: [] };
        views.push(cur);
        expect = ['ID'];
        break;
      case 'ID':
        cur!.id = e.value;
        expect = ['STATE'];
        break;
      case 'STATE':
        cur!.state = e.value;
        expect = ['HEALTH'];
        break;
      case 'HEALTH':
        cur!.health = e.value;
        expect = ['LAST HEALTH MESSAGE', 'EVENTS', 'NODE'];
        break;
      case 'LAST HEALTH MESSAGE':
        cur!.lastHealthMessage = e.value;
        expect = ['EVENTS', 'NODE'];
        break;
      case 'EVENTS':
      case '':
        cur!.events.push(parseEvent(e.value, e.line));
        expect = ['', 'NODE'];
        break;
    }
  }
  if (!expect.includes('NODE')) {
    throw new ParseError(FORMAT, 'output ends inside a node block');
  }
  return views;
}

/**
 * Why a cri block cannot be read as evidence, or undefined when it can. talosctl prints the EVENTS
 * label only with the first event, so a block without it carries no history at all. The service
 * runner logs Preparing/Starting/Running events before a service can be Running, so a cri block
 * without events was cut short or came from a client that did not print them: reading it as "no
 * start event" would let the start be proved by ServicePID alone on an output we did not understand.
 * (The generic parser above still accepts an event-less block: a service that never ran has none.)
 */
export function unreadableCriView(view: ServiceNodeView): string | undefined {
  if (view.events.length === 0) return `the cri block of ${view.node} has no EVENTS section (state ${view.state || 'unknown'})`;
  return undefined;
}

export function parseEvent(text: string, line = 0): PrintedEvent {
  const m = EVENT.exec(text);
  if (!m) throw new ParseError(FORMAT, `line ${line}: event is not "[State]: message (D ago)": ${excerpt(text)}`);
  return { state: m[1], message: m[2], agoMs: parseGoDuration(m[3]), ageText: m[3] };
}
