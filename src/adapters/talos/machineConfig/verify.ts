// The checks made on a patched machine config without the node (verifyPatched: it parses, each
// host's effective credential is the desired one, and nothing else changed), and after an apply the
// comparison of the config sent with the one read back (readBackDrift: Talos keeps the bytes an apply
// sent, so any other difference is another writer's). Pure (no I/O); an error names documents, never
// their text.
import type { CredentialChange } from '../../../core/authPatch.js';
import {
  LEGACY_PATH,
  MachineConfigError,
  documentLabel,
  effectiveOf,
  isObj,
  labelOf,
  legacyLabel,
  parseConfig,
  pieceOf,
  sameFields,
  v1alpha1Index,
  withNewline,
  type ParsedConfig,
  type Tree,
} from './documents.js';
import { desiredOf, isPending, planFor } from './plan.js';

/**
 * The checks a plan (and every apply, before it sends) makes on the patched text without the node:
 * every document parses; the documents are the config's own, in its order, each with its own text
 * unless written here (appended ones last); the v1alpha1 document reads as before but for the auth
 * maps written; and each host's effective credential is the desired one. Returns one line per check;
 * throws MachineConfigError naming the document when one fails (a defect of the edit: nothing is sent).
 */
export function verifyPatched(beforeText: string, afterText: string, changes: CredentialChange[]): string[] {
  return verifyParsed(beforeText, parseConfig(beforeText), afterText, parseConfig(afterText, 'the patched machine config'), changes);
}

export function verifyParsed(
  beforeText: string,
  before: ParsedConfig,
  afterText: string,
  after: ParsedConfig,
  changes: CredentialChange[],
): string[] {
  const fail = (why: string, doc: string) => {
    throw new MachineConfigError(`the patched machine config fails a check (nothing was sent): ${why}`, doc);
  };
  const desired = desiredOf(changes);
  const written = new Set(
    planFor(before.values, changes)
      .filter(isPending)
      .map((p) => p.label),
  );
  const v1 = v1alpha1Index(before.values);
  for (const [i, v] of before.values.entries()) {
    const label = labelOf(v, i);
    if (labelOf(after.values[i], i) !== label) fail(`document ${i + 1} is no longer ${label}`, label);
    const ours = i === v1 ? desired.some((d) => written.has(legacyLabel(d.host))) : written.has(label);
    if (!ours && withNewline(pieceOf(beforeText, before.docs, i)) !== withNewline(pieceOf(afterText, after.docs, i)))
      fail(`${label} changed`, label);
  }
  for (const [i, v] of after.values.slice(before.values.length).entries()) {
    const label = labelOf(v, before.values.length + i);
    if (!written.has(label)) fail(`${label} was added`, label);
  }
  if (v1 >= 0) {
    // unshared: YAML aliases read one object, and structuredClone would keep them one, so writing one
    // host's auth map would write every alias of it in the expectation too and hide that change
    const expected = unshared(before.values[v1]) as Tree;
    for (const d of desired) if (written.has(legacyLabel(d.host))) setPlain(expected, LEGACY_PATH(d.host), { ...d.fields });
    if (!same(expected, after.values[v1])) fail('the v1alpha1 document reads differently outside the auth maps written', 'v1alpha1');
  }
  const effective = effectiveOf(after.values);
  const lines = [`the patched config parses: ${after.values.length} documents, each other one byte for byte as it was`];
  for (const d of desired) {
    const e = effective.get(d.host);
    if (!e || !sameFields(e.fields, d.fields))
      fail(`Talos would not read the new credential for ${d.host}`, e?.from ?? documentLabel(d.host));
    lines.push(
      `${d.host}: Talos will read the new credential from ${e!.from}${e!.from === documentLabel(d.host) ? ' (a RegistryAuthConfig document wins over machine.registries)' : ''}`,
    );
  }
  lines.push('nothing else changes: every byte outside the places written is the config’s own');
  return lines;
}

function setPlain(root: Tree, path: string[], value: unknown): void {
  let at = root;
  for (const k of path.slice(0, -1)) {
    if (!isObj(at[k])) at[k] = {};
    at = at[k] as Tree;
  }
  at[path[path.length - 1]] = value;
}

/** A deep copy in which no two places share an object, as the text reads once every alias is written out. */
function unshared(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(unshared);
  if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unshared(x)]));
  return v;
}

/** Deep equality of plain YAML values, key order ignored. */
function same(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  }
  if (isObj(a) || isObj(b)) {
    if (!isObj(a) || !isObj(b)) return false;
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && same(a[k], b[k]));
  }
  return a === b;
}

/**
 * The documents whose text differs between the config sent and the config read back (by label; a
 * document only one of them has is named too). Talos keeps the bytes an apply sent
 * (container.NewReadonly), so anything here is another writer's.
 */
export function readBackDrift(sentText: string, afterText: string): string[] {
  if (sentText === afterText) return [];
  let after: ParsedConfig;
  const sent = parseConfig(sentText, 'the machine config sent');
  try {
    after = parseConfig(afterText, 'the machine config read back');
  } catch {
    return ['the whole config (the text read back is not valid YAML)'];
  }
  const out: string[] = [];
  const n = Math.max(sent.docs.length, after.docs.length);
  for (let i = 0; i < n; i++) {
    const a = i < sent.docs.length ? pieceOf(sentText, sent.docs, i) : undefined;
    const b = i < after.docs.length ? pieceOf(afterText, after.docs, i) : undefined;
    if (a !== b) out.push(labelOf(i < after.values.length ? after.values[i] : sent.values[i], i));
  }
  // texts that differ only outside every document (a trailing newline, a comment before the first)
  return out.length > 0 ? out : ['the text around the documents'];
}
