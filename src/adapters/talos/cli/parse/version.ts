// `talosctl version` (cmd/talosctl/cmd/talos/version.go): `Client:` block, then `Server:` and one
// block per node, each line a TAB, `Key:`, padding to column 13, the value (`Built:` is followed by
// spaces only in release builds).
import { ParseError, excerpt } from '../../../parseError.js';

export interface ServerVersion {
  node: string;
  tag: string;
  sha?: string;
}

const FORMAT = 'version';
const FIELD = /^\t([A-Za-z][A-Za-z /]*):(?: +(.*))?$/;

/** Server Tag per NODE, in output order. An empty `Server:` section (every node failed) gives []. */
export function parseVersion(text: string): ServerVersion[] {
  const lines = text.split('\n');
  const serverAt = lines.indexOf('Server:');
  if (serverAt < 0) throw new ParseError(FORMAT, 'no "Server:" line');
  const out: ServerVersion[] = [];
  let cur: ServerVersion | undefined;
  for (let i = serverAt + 1; i < lines.length; i++) {
    const line = lines[i];
    if (line === '') continue;
    const m = FIELD.exec(line);
    if (!m) throw new ParseError(FORMAT, `line ${i + 1} is not "\\tKey: value": ${excerpt(line)}`);
    const key = m[1];
    const value = (m[2] ?? '').replace(/ +$/, '');
    if (key === 'NODE') {
      if (cur && !cur.tag) throw new ParseError(FORMAT, `node ${excerpt(cur.node)} has no Tag`);
      cur = { node: value, tag: '' };
      out.push(cur);
      continue;
    }
    if (!cur) throw new ParseError(FORMAT, `line ${i + 1} comes before any NODE: ${excerpt(line)}`);
    if (key === 'Tag') cur.tag = value;
    if (key === 'SHA') cur.sha = value;
  }
  if (cur && !cur.tag) throw new ParseError(FORMAT, `node ${excerpt(cur.node)} has no Tag`);
  return out;
}
