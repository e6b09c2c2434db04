// Test-side builders of talosctl 1.13 output. goTabwriter ports Go's text/tabwriter (minwidth 0,
// tabwidth 0, padding 3, pad ' ', flags 0) so constructed outputs follow the same rules as the real
// client: column blocks, a flush at every line without a tab, widths in runes.
import { formatGoDuration } from '../../../../src/adapters/talos/cli/parse/goDuration.js';

interface Line {
  cells: string[];
  newline: boolean;
}

export function goTabwriter(input: string, padding = 3): string {
  let out = '';
  let pending: Line[] = [];
  const raw = input.split('\n');
  raw.forEach((text, i) => {
    const last = i === raw.length - 1;
    if (last && text === '') return;
    const cells = text.split('\t');
    pending.push({ cells, newline: !last });
    // a completed line with a single cell cannot affect later lines: Go flushes there
    if (!last && cells.length === 1) {
      out += format(pending, padding);
      pending = [];
    }
  });
  return out + format(pending, padding);
}

function width(s: string): number {
  return Array.from(s).length;
}

function format(lines: Line[], padding: number): string {
  const widths: number[] = [];
  let s = '';
  const writeLines = (l0: number, l1: number): void => {
    for (let i = l0; i < l1; i++) {
      lines[i].cells.forEach((c, j) => {
        s += c;
        if (j < widths.length) s += ' '.repeat(widths[j] - width(c));
      });
      if (lines[i].newline) s += '\n';
    }
  };
  const fmt = (line0: number, line1: number): void => {
    const column = widths.length;
    for (let t = line0; t < line1; t++) {
      if (column >= lines[t].cells.length - 1) continue;
      writeLines(line0, t);
      line0 = t;
      let w = 0;
      for (; t < line1; t++) {
        const cells = lines[t].cells;
        if (column >= cells.length - 1) break;
        w = Math.max(w, width(cells[column]) + padding);
      }
      widths.push(w);
      fmt(line0, t);
      widths.pop();
      line0 = t;
    }
    writeLines(line0, line1);
  };
  fmt(0, lines.length);
  return s;
}

export interface ServiceBlock {
  node: string;
  id?: string;
  state: string;
  health: string;
  lastHealthMessage?: string;
  /** newest first: [state, message, ago in ms] */
  events: Array<[string, string, number]>;
}

/** What formatters.RenderServicesInfo writes for these blocks. */
export function serviceOutput(blocks: ServiceBlock[]): string {
  let t = '';
  for (const b of blocks) {
    t += `NODE\t${b.node}\nID\t${b.id ?? 'cri'}\nSTATE\t${b.state}\nHEALTH\t${b.health}\n`;
    if (b.lastHealthMessage) t += `LAST HEALTH MESSAGE\t${b.lastHealthMessage}\n`;
    let label = 'EVENTS';
    for (const [state, msg, ago] of b.events) {
      t += `${label}\t[${state}]: ${msg} (${formatGoDuration(ago)} ago)\n`;
      label = '';
    }
  }
  return goTabwriter(t);
}

export interface LsEntry {
  node: string;
  mode: string;
  uid?: number;
  gid?: number;
  size: number;
  lastMod: string;
  label?: string;
  name: string;
}

/** `ls -l` as list.go prints it: the header always, then one row per entry. */
export function lsOutput(rows: LsEntry[]): string {
  let t = 'NODE\tMODE\tUID\tGID\tSIZE(B)\tLASTMOD\tLABEL\tNAME\n';
  for (const r of rows) t += `${r.node}\t${r.mode}\t${r.uid ?? 0}\t${r.gid ?? 0}\t${r.size}\t${r.lastMod}\t${r.label ?? ''}\t${r.name}\n`;
  return goTabwriter(t);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** LASTMOD as talosctl renders it with TZ=UTC for a file modified at `mtimeMs` seen at `nowMs`. */
export function renderLastMod(mtimeMs: number, nowMs: number): string {
  const d = new Date(Math.floor(mtimeMs / 1000) * 1000);
  const p = (n: number): string => String(n).padStart(2, '0');
  const day = String(d.getUTCDate()).padStart(2, ' ');
  if (nowMs - d.getTime() < 180 * 86_400_000) {
    return `${MONTHS[d.getUTCMonth()]} ${day} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}`;
  }
  return `${MONTHS[d.getUTCMonth()]} ${day} ${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}`;
}

/** One `get -o yaml` document as output/yaml.go and cosi's metadata marshalling print it. */
export function cosiDoc(o: {
  node: string;
  namespace: string;
  type: string;
  id: string;
  version?: number;
  owner?: string;
  created: string;
  updated: string;
  spec: string[];
}): string {
  return [
    `node: ${o.node}`,
    'metadata:',
    `    namespace: ${o.namespace}`,
    `    type: ${o.type}`,
    `    id: ${o.id}`,
    `    version: ${o.version ?? 1}`,
    `    owner: ${o.owner ?? ''}`.replace(/ +$/, ''),
    '    phase: running',
    `    created: ${o.created}`,
    `    updated: ${o.updated}`,
    'spec:',
    ...o.spec.map((l) => `    ${l}`),
    '',
  ].join('\n');
}

/** Documents of one `get` call: `---` between them. */
export function cosiStream(docs: string[]): string {
  return docs.join('---\n');
}
