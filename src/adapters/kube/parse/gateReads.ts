// The health gates' reads parsed (docs/gates.md): which kinds the cluster serves (`kubectl api-resources`,
// once per run) and every object of the gates' kinds in one listing (`kubectl get a,b,c -A -o json`, or
// the HTTP client's lists of them). Parsing only, no I/O: which objects pass is src/rules/gates.ts's.
import type { GateObject, ServedKind } from '../../../core/model/gates.js';
import { ParseError, excerpt } from '../../parseError.js';
import { jsonString, type Json } from './json.js';

/**
 * `kubectl api-resources` as printed: a header (NAME SHORTNAMES APIVERSION NAMESPACED KIND) and one
 * row per resource, each column starting where its header does (kubectl prints through a tabwriter;
 * SHORTNAMES may be blank). Subresources are not listed by it.
 */
export function servedKindsFromTable(text: string): ServedKind[] {
  const lines = text.split('\n').filter((l) => l.trim());
  if (lines.length === 0) return [];
  const header = lines[0];
  const cols = ['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND'].map((h) => header.search(new RegExp(`\\b${h}\\b`)));
  if (cols.some((c) => c < 0)) throw new ParseError('kubectl api-resources', `unexpected header ${excerpt(header)}`);
  const cell = (line: string, i: number) => line.slice(cols[i], i + 1 < cols.length ? cols[i + 1] : undefined).trim();
  return lines.slice(1).map((line) => {
    const apiVersion = cell(line, 2);
    const slash = apiVersion.indexOf('/');
    const namespaced = cell(line, 3);
    if (!apiVersion || (namespaced !== 'true' && namespaced !== 'false')) {
      throw new ParseError('kubectl api-resources', `a row that does not parse: ${excerpt(line)}`);
    }
    return {
      resource: cell(line, 0),
      group: slash < 0 ? '' : apiVersion.slice(0, slash),
      version: slash < 0 ? apiVersion : apiVersion.slice(slash + 1),
      namespaced: namespaced === 'true',
      kind: cell(line, 4),
    };
  });
}

/** The objects of a `kubectl get … -o json` List, each with its group, kind and labels. */
export function gateObjectsFromList(raw: unknown): GateObject[] {
  const items = (raw as Json | null)?.items;
  if (!Array.isArray(items)) throw new ParseError('kubectl get -o json', 'the answer is not a List');
  return items.map((item: Json) => {
    const apiVersion = jsonString(item.apiVersion);
    const meta = (item.metadata ?? {}) as Json;
    const slash = apiVersion.indexOf('/');
    const labels = (meta.labels ?? {}) as Record<string, string>;
    const namespace = jsonString(meta.namespace);
    return {
      group: slash < 0 ? '' : apiVersion.slice(0, slash),
      kind: jsonString(item.kind),
      ...(namespace ? { namespace } : {}),
      name: jsonString(meta.name),
      labels,
      object: item,
    };
  });
}
