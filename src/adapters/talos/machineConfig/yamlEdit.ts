// The smallest text edit that sets one mapping path of a YAML document to a map of strings, keeping
// every other byte. Why not parse, set and re-render: Talos reads its config with Go's YAML, which
// keeps YAML 1.1's octals (`permissions: 0644` is 420), while a YAML 1.2 library reads `0644` as
// 644 and writes it back so: a re-rendered document would change a file's mode, and every comment,
// quote and indentation the operator wrote (docs/talos-api.md, "The edit keeps every other byte").
// - The value at the path exists: its own source range is replaced, in its own style (a block map
//   by block lines at its column, whole lines; anything else by a flow map).
// - A key on the path is missing: the smallest new entry is inserted at the end of the deepest map
//   that exists, as a block at its keys' column (or as a flow pair inside a flow map); an empty value
//   (`registries:`, `registries: {}`) becomes a block below its key.
// A value is written plain when every reader, Go's YAML included, reads it back as the same string
// (an unchanged username keeps its line byte for byte), else double-quoted (a JSON string is a YAML
// double-quoted scalar). Pure; the error never quotes the text.
// - Anchors (`auth: &c {…}` for one host, `auth: *c` for another): an alias reads the anchored node,
//   so editing that node in place would change every host whose value is an alias of it, and the check
//   after the edit (verify.ts) would refuse it on every rerun. So when the target map is an anchor that
//   is aliased elsewhere, the new map replaces it without the anchor, and the first alias becomes the
//   anchor with the old map written inline, its keys' and values' own text copied (never re-rendered:
//   `012345` stays Go's octal int); later aliases read it there, so every other host keeps its value.
//   A map above the target that is an aliased anchor, an alias on the way to the target, or an
//   aliased anchor inside the target cannot be edited without changing another value: refused up
//   front, naming the anchor.
import { isAlias, isMap, isPair, isScalar, isSeq, parseDocument, visit, type Alias, type Document, type Pair, type YAMLMap } from 'yaml';

export type Tree = { [key: string]: string | Tree };

/** Why the edit could not be made; names the path, never a value. */
export class YamlEditError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'YamlEditError';
  }
}

interface Ranged {
  range?: [number, number, number] | null;
}

/** `docText` with the mapping at `path` set to `value` (replaced whole); every byte outside the edit kept. */
export function setMapAt(docText: string, path: string[], value: Tree): string {
  if (path.length === 0) throw new YamlEditError('an empty path');
  const doc = parseDocument(docText);
  if (doc.errors.length > 0) throw new YamlEditError('the document is not valid YAML');
  if (!isMap(doc.contents)) throw new YamlEditError('the document is not a mapping');
  const eol = docText.includes('\r\n') ? '\r\n' : '\n';
  const step = indentStep(docText, doc.contents);
  let map: YAMLMap = doc.contents;
  for (let i = 0; i < path.length; i++) {
    const here = path.slice(0, i + 1).join('.');
    // an edit inside `map` is an edit of every value that is an alias of it
    refuseShared(doc, map, path.slice(0, i).join('.') || 'the document');
    const pair = map.items.find((p) => isScalar(p.key) && String(p.key.value) === path[i]);
    const rest = nest(path.slice(i + 1), value);
    if (!pair) return insertPair(docText, map, path[i], rest, eol, step);
    const v = pair.value;
    // the target itself may be an alias: its text is replaced by the new map, the anchor keeps its value
    if (i === path.length - 1 || isEmptyValue(v)) {
      const aliases = isMap(v) || isSeq(v) ? aliasesOf(doc, v) : [];
      for (const inner of anchoredBelow(doc, v)) refuseShared(doc, inner, `a value inside ${here}`);
      if (aliases.length === 0) return replaceValue(docText, pair, rest, eol, step);
      return replaceAnchored(docText, pair, here, aliases[0], rest, eol, step);
    }
    if (isAlias(v))
      throw new YamlEditError(
        `${here} is an alias (*${v.source}) of a value another key holds: give it a value of its own in the machine config, then rerun`,
      );
    if (!isMap(v)) throw new YamlEditError(`${here} is not a mapping`);
    map = v;
  }
  /* c8 ignore next */
  throw new YamlEditError('unreachable');
}

/** The aliases that read `node`, in the text's order (an anchor may be redefined: only those resolving to this node). */
function aliasesOf(doc: Document, node: unknown): Alias[] {
  const out: Alias[] = [];
  visit(doc, {
    Alias(_key, a) {
      if (a.resolve(doc) === node) out.push(a);
    },
  });
  return out.sort((a, b) => a.range![0] - b.range![0]);
}

/** Where an alias sits, for a message: the key whose value it is. */
function holderOf(doc: Document, alias: Alias): string {
  let holder = 'a value';
  visit(doc, {
    Alias(_key, a, path) {
      const parent = path[path.length - 1];
      if (a === alias && isPair(parent) && isScalar(parent.key)) holder = `${String(parent.key.value)}'s value`;
    },
  });
  return holder;
}

/** Refuses an edit inside `node` when `node` is an anchor another value is an alias of: that value would change too. */
function refuseShared(doc: Document, node: unknown, where: string): void {
  const anchor = (node as { anchor?: string }).anchor;
  if (!anchor) return;
  const aliases = aliasesOf(doc, node);
  if (aliases.length === 0) return;
  throw new YamlEditError(
    `${where} is the anchor &${anchor}, which ${holderOf(doc, aliases[0])} is an alias of: an edit inside it would change both; write the alias out (give each its own value) in the machine config, then rerun`,
  );
}

/** The anchored nodes inside `node` (not `node` itself): replacing `node`'s text removes their anchors. */
function anchoredBelow(doc: Document, node: unknown): unknown[] {
  const out: unknown[] = [];
  if (!isMap(node) && !isSeq(node)) return out;
  visit(node, (_key, n) => {
    if (n !== node && (n as { anchor?: string } | null)?.anchor) out.push(n);
  });
  return out;
}

/**
 * Replaces an anchored map that `first` (and maybe later aliases) read: the first alias becomes the
 * anchor with the old map inline, then the map is replaced and its anchor removed. The edits run from
 * the end of the text to its start (an alias always follows its anchor), so each one's offsets hold.
 */
function replaceAnchored(text: string, pair: Pair, here: string, first: Alias, obj: Tree, eol: string, step: number): string {
  const v = pair.value as YAMLMap & Ranged;
  const anchor = v.anchor!;
  const moved = splice(text, first.range![0], first.range![1], `&${anchor} ${inlineCopy(text, v, here)}`);
  const replaced = replaceValue(moved, pair, obj, eol, step);
  const colon = colonAfter(text, (pair.key as Ranged).range![1]);
  const at = text.indexOf(`&${anchor}`, colon);
  if (at < 0 || at > v.range![0]) throw new YamlEditError(`the anchor &${anchor} of ${here} is not where its map starts`);
  const from = text[at - 1] === ' ' ? at - 1 : at;
  return splice(replaced, from, at + anchor.length + 1, '');
}

/** Flow indicators a plain scalar may hold in a block map but not inside a flow map. */
const FLOW_INDICATOR = /[,[\]{}]/;

/**
 * The map as one flow map, each key's and value's own text copied (a YAML 1.1 octal stays one);
 * a plain scalar that would not read the same inside a flow map is written double-quoted when it is a
 * string. Anything else (a nested collection, an alias, a multi-line scalar) is refused.
 */
function inlineCopy(text: string, map: YAMLMap & Ranged, here: string): string {
  const one = (node: unknown): string => {
    if (!isScalar(node) || !node.range)
      throw new YamlEditError(`${here} holds a value that cannot be written inline; give each host its own map`);
    const src = text.slice(node.range[0], node.range[1]);
    const plainOk = node.type === 'PLAIN' && !FLOW_INDICATOR.test(src);
    const quotedOk = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE';
    if (!src.includes('\n') && (plainOk || quotedOk) && !(node as { anchor?: string }).anchor && !(node as { tag?: string }).tag)
      return src;
    if (typeof node.value === 'string') return JSON.stringify(node.value);
    throw new YamlEditError(`${here} holds a value that cannot be written inline; give each host its own map`);
  };
  if (map.flow && !text.slice(map.range![0], map.range![1]).includes('\n')) return text.slice(map.range![0], map.range![1]);
  return `{${map.items.map((p) => `${one(p.key)}: ${one(p.value)}`).join(', ')}}`;
}

function nest(rest: string[], value: Tree): Tree {
  return rest.reduceRight<Tree>((inner, key) => ({ [key]: inner }), value);
}

/** `key:` with nothing, `~`, `null` or `{}`: a value the edit may replace by the new entry. */
function isEmptyValue(v: unknown): boolean {
  if (v === null || v === undefined) return true;
  if (isScalar(v)) return v.value === null;
  return isMap(v) && v.flow === true && v.items.length === 0;
}

/** Sets the pair's value to `obj`: a block map keeps its lines' column, an empty value becomes a block below the key. */
function replaceValue(text: string, pair: Pair, obj: Tree, eol: string, step: number): string {
  const v = pair.value as (Ranged & { flow?: boolean }) | null;
  const keyStart = (pair.key as Ranged).range![0];
  const col = column(text, keyStart);
  if (isMap(v) && !v.flow) {
    const start = v.range![0];
    const end = lineEnd(text, contentEnd(v));
    return splice(text, start, end, blockLines(obj, column(text, start), step).join(eol).trimStart());
  }
  const colon = colonAfter(text, (pair.key as Ranged).range![1]);
  const valueEnd = v?.range ? v.range[1] : colon + 1;
  // a comment after the value on its line would end up after the new block: stay on the line (flow)
  const blockOk = isEmptyValue(v) && text.slice(valueEnd, lineEnd(text, valueEnd)).trim() === '';
  if (blockOk) return splice(text, colon + 1, valueEnd, eol + blockLines(obj, col + step, step).join(eol));
  const start = v?.range ? v.range[0] : colon + 1;
  return splice(text, start, valueEnd, `${start === colon + 1 ? ' ' : ''}${flow(obj)}`);
}

/** Adds `key: obj` to the map: a block line after its last entry, or a flow pair before its `}`. */
function insertPair(text: string, map: YAMLMap & Ranged, key: string, obj: Tree | string, eol: string, step: number): string {
  const entry: Tree = { [key]: obj };
  if (map.flow) {
    const close = text.lastIndexOf('}', map.range![1] - 1);
    if (close < map.range![0]) throw new YamlEditError(`the flow map holding ${key} has no closing brace`);
    const inner = flow(entry).slice(1, -1);
    return splice(text, close, close, map.items.length > 0 ? `, ${inner}` : inner);
  }
  const at = lineEnd(text, contentEnd(map));
  return splice(text, at, at, eol + blockLines(entry, column(text, map.range![0]), step).join(eol));
}

/** Where a block collection's content ends: the end of its last entry's value (trailing comments excluded). */
function contentEnd(node: unknown): number {
  if (isMap(node) && !node.flow && node.items.length > 0) {
    const last = node.items[node.items.length - 1];
    return last.value === null || last.value === undefined ? (last.key as Ranged).range![1] : contentEnd(last.value);
  }
  if (isSeq(node) && !node.flow && node.items.length > 0) return contentEnd(node.items[node.items.length - 1]);
  return (node as Ranged).range![1];
}

function colonAfter(text: string, keyEnd: number): number {
  const i = text.indexOf(':', keyEnd);
  if (i < 0) throw new YamlEditError('a key without its colon');
  return i;
}

function lineEnd(text: string, at: number): number {
  // a range may end after the line's newline already (a block scalar's, a map's)
  const from = at > 0 && text[at - 1] === '\n' ? at - 1 : at;
  const i = text.indexOf('\n', from);
  const end = i < 0 ? text.length : i;
  return end > 0 && text[end - 1] === '\r' ? end - 1 : end;
}

function column(text: string, at: number): number {
  return at - (text.lastIndexOf('\n', at - 1) + 1);
}

function splice(text: string, start: number, end: number, insert: string): string {
  return text.slice(0, start) + insert + text.slice(end);
}

/** The indentation the document's author uses: the first nested block map's, else 2. */
function indentStep(text: string, root: YAMLMap & Ranged): number {
  const rootCol = root.range ? column(text, root.range[0]) : 0;
  for (const p of root.items) {
    const v = p.value;
    if (isMap(v) && !v.flow && v.range) {
      const d = column(text, v.range[0]) - rootCol;
      if (d > 0) return d;
    }
  }
  return 2;
}

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_.\-/]*$/;
const key = (k: string) => (PLAIN_KEY.test(k) && !/^(true|false|null|yes|no|on|off|y|n|~)$/i.test(k) ? k : JSON.stringify(k));
// Plain only when no YAML reader types it otherwise: starts with a letter, no indicator, not a bool/null
// word of YAML 1.1 or 1.2 (a digit first could be an int, a float, an octal or a timestamp).
const PLAIN_VALUE = /^[A-Za-z][A-Za-z0-9._/+=@-]*$/;
const TYPED_WORD = /^(true|false|null|yes|no|on|off|y|n)$/i;
const scalar = (s: string) => (PLAIN_VALUE.test(s) && !TYPED_WORD.test(s) ? s : JSON.stringify(s));

function blockLines(obj: Tree, indent: number, step: number): string[] {
  const pad = ' '.repeat(indent);
  const out: string[] = [];
  for (const [k, v] of Object.entries(obj)) {
    if (typeof v === 'string') out.push(`${pad}${key(k)}: ${scalar(v)}`);
    else if (Object.keys(v).length === 0) out.push(`${pad}${key(k)}: {}`);
    else out.push(`${pad}${key(k)}:`, ...blockLines(v, indent + step, step));
  }
  return out;
}

function flow(obj: Tree | string): string {
  if (typeof obj === 'string') return scalar(obj);
  return `{${Object.entries(obj)
    .map(([k, v]) => `${key(k)}: ${flow(v)}`)
    .join(', ')}}`;
}
