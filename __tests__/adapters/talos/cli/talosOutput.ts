// Test-side builders of talosctl 1.13 output. The table layout is the twin's port of Go's
// text/tabwriter (sim/bin/talosfmt.cjs, through sim/talos/format.ts: minwidth 0, tabwidth 0,
// padding 3, pad ' ', flags 0), so constructed outputs follow the same rules as the real client
// and the fake talosctl: column blocks, a flush at every line without a tab, widths in runes.
import { formatGoDuration } from '../../../../src/adapters/talos/cli/parse/goDuration.js';
import { tabwrite } from '../../../../sim/talos/format.js';

export function goTabwriter(input: string, padding = 3): string {
  return tabwrite(input, padding);
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
