// Tables printed through Go's text/tabwriter (padding 3, space padding, no flags), as talosctl's
// `ls -l`, `etcd status` and `etcd alarm list` do. Cells themselves contain spaces (`Aug  4 09:03:27`,
// `20 MB`, `9.8 MB (48.99%)`), so splitting on whitespace is wrong. tabwriter pads every cell of a
// column to one width and the header is a row like any other, so each cell starts at the code-point
// offset where its header name starts. Go counts widths in runes, hence Array.from below.
import { ParseError, excerpt } from '../../../parseError.js';

export interface TableColumns {
  /** column titles in order, exactly as printed (`SIZE(B)`, `DB SIZE`) */
  names: readonly string[];
}

export interface ParsedTable {
  /** the column titles found, in order */
  columns: string[];
  /** one record per data row, keyed by column title */
  rows: Array<Record<string, string>>;
}

/**
 * Parse a tabwriter table whose header must be exactly one of `headers` (first match wins).
 * The last column is not padded by tabwriter; `trimLast` strips the trailing spaces that appear when
 * that last cell is empty (tabwriter still pads the cell before it).
 */
export function parseTabTable(format: string, text: string, headers: ReadonlyArray<readonly string[]>, trimLast: boolean): ParsedTable {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0) throw new ParseError(format, 'no header line (empty output)');
  const header = lines[0];
  let names: readonly string[] | undefined;
  for (const candidate of headers) {
    if (headerPattern(candidate).test(header)) {
      names = candidate;
      break;
    }
  }
  if (!names) throw new ParseError(format, `unexpected header ${excerpt(header)}`);

  const headerCps = Array.from(header);
  const offsets: number[] = [];
  let from = 0;
  for (const name of names) {
    const at = indexOfCps(headerCps, Array.from(name), from);
    offsets.push(at);
    from = at + Array.from(name).length;
  }

  const rows: Array<Record<string, string>> = [];
  for (let li = 1; li < lines.length; li++) {
    const cps = Array.from(lines[li]);
    const last = offsets[offsets.length - 1];
    if (cps.length < last) throw new ParseError(format, `row ${li} is shorter than the header: ${excerpt(lines[li])}`);
    const row: Record<string, string> = {};
    for (let c = 0; c < names.length; c++) {
      const start = offsets[c];
      const end = c + 1 < offsets.length ? offsets[c + 1] : cps.length;
      if (c + 1 < offsets.length) {
        // tabwriter leaves at least `padding` spaces before the next column; anything else means the
        // row is not aligned with the header and the cells cannot be trusted.
        const gap = cps.slice(end - 3, end).join('');
        if (gap !== '   ') throw new ParseError(format, `row ${li} is not aligned with column ${names[c + 1]}: ${excerpt(lines[li])}`);
      }
      let cell = cps.slice(start, end).join('');
      if (c + 1 < offsets.length || trimLast) cell = cell.replace(/ +$/, '');
      // a file name may begin with a space; no other cell may
      if (cell.startsWith(' ') && (c + 1 < offsets.length || trimLast))
        throw new ParseError(format, `row ${li} column ${names[c]} starts with a space: ${excerpt(lines[li])}`);
      row[names[c]] = cell;
    }
    rows.push(row);
  }
  return { columns: [...names], rows };
}

function headerPattern(names: readonly string[]): RegExp {
  const esc = names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${esc.join(' {3,}')}$`);
}

function indexOfCps(hay: string[], needle: string[], from: number): number {
  outer: for (let i = from; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}
