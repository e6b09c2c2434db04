// The credential patch applied to a machine config's multi-document text, without Talos's merge:
// a `RegistryAuthConfig` patch document replaces the config's document of the same name whole
// (Talos's merge never clears a field with a zero value, so switching `auth` ↔ `username/password`
// by merging would keep the old field), and a legacy `machine.registries.config.<host>.auth`
// replaces that map in the v1alpha1 document. Every other document keeps its text and its place.
// Anything else in a patch is not ours to interpret: classifyCredentialPatch says so and the
// caller leaves the patch to talosctl.
// Pure (no I/O). The config holds every credential of the cluster: no error here quotes its text,
// only document numbers, kinds, names and line/column positions.
import { type Document, isMap, parseAllDocuments } from 'yaml';

type Tree = Record<string, unknown>;
const isObj = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One change the credential patch makes. */
export type CredentialChange =
  | { form: 'document'; name: string; /** the patch document's own text */ text: string; value: Tree }
  | { form: 'legacy'; host: string; auth: Tree };

export type PatchClass = { ours: true; changes: CredentialChange[] } | { ours: false; why: string };

/** Why a config could not be patched here; `document` names the document (kind/name or its position). */
export class MachineConfigError extends Error {
  constructor(
    message: string,
    readonly document?: string,
  ) {
    super(message);
    this.name = 'MachineConfigError';
  }
}

const AUTH_KEYS = new Set(['username', 'password', 'auth', 'identityToken']);
const DOCUMENT_KEYS = new Set(['apiVersion', 'kind', 'name', ...AUTH_KEYS]);

/** Whether the patch is one of the two credential forms, and what it changes. */
export function classifyCredentialPatch(text: string): PatchClass {
  const docs = parseAllDocuments(text);
  const changes: CredentialChange[] = [];
  for (const [i, doc] of docs.entries()) {
    if (doc.errors.length > 0) return { ours: false, why: `patch document ${i + 1} is not valid YAML` };
    const v = doc.toJS() as unknown;
    if (v === null || v === undefined) continue;
    if (!isObj(v)) return { ours: false, why: `patch document ${i + 1} is not a mapping (a JSON 6902 patch?)` };
    if (v.kind === 'RegistryAuthConfig') {
      const extra = Object.keys(v).filter((k) => !DOCUMENT_KEYS.has(k));
      if (extra.length > 0) return { ours: false, why: `patch document ${i + 1} (RegistryAuthConfig) also sets ${extra.join(', ')}` };
      if (typeof v.name !== 'string' || !v.name.trim())
        return { ours: false, why: `patch document ${i + 1} (RegistryAuthConfig) has no name` };
      changes.push({ form: 'document', name: v.name, text: sliceOf(text, docs, i), value: v });
      continue;
    }
    const legacy = legacyAuths(v);
    if (typeof legacy === 'string') return { ours: false, why: `patch document ${i + 1} ${legacy}` };
    changes.push(...legacy);
  }
  if (changes.length === 0) return { ours: false, why: 'the patch changes no registry credential' };
  return { ours: true, changes };
}

/** The hosts' auth maps of a v1alpha1 patch document carrying only them; a reason when it carries more. */
function legacyAuths(v: Tree): CredentialChange[] | string {
  if (v.kind !== undefined) return `is a ${typeof v.kind === 'string' ? v.kind : 'kind-tagged'} document`;
  const { version, machine, ...rest } = v;
  if (Object.keys(rest).length > 0 || (version !== undefined && version !== 'v1alpha1'))
    return `sets more than machine.registries.config.<host>.auth (${Object.keys(v).join(', ')})`;
  const only = (o: unknown, key: string) => isObj(o) && Object.keys(o).length === 1 && isObj(o[key]);
  if (!only(machine, 'registries') || !only((machine as Tree).registries, 'config'))
    return 'sets more than machine.registries.config.<host>.auth';
  const out: CredentialChange[] = [];
  for (const [host, entry] of Object.entries(((machine as Tree).registries as Tree).config as Tree)) {
    if (!isObj(entry) || Object.keys(entry).length !== 1 || !isObj(entry.auth)) return `sets more than the auth of ${host}`;
    if (entry.auth.$patch !== undefined || Object.keys(entry.auth).some((k) => !AUTH_KEYS.has(k)))
      return `sets fields of ${host}'s auth other than ${[...AUTH_KEYS].join(', ')}`;
    out.push({ form: 'legacy', host, auth: entry.auth });
  }
  return out;
}

/** Where a parsed document starts in the text (its `---` included); the parser always records it. */
function startOf(doc: Document): number {
  if (!doc.range) throw new Error('yaml: a parsed document has no range');
  return doc.range[0];
}

/** The text of document i: from its start to the next one's (trailing comments and `...` included). */
function pieceOf(text: string, docs: Document[], i: number): string {
  return text.slice(startOf(docs[i]), i + 1 < docs.length ? startOf(docs[i + 1]) : text.length);
}

function sliceOf(text: string, docs: Document[], i: number): string {
  return pieceOf(text, docs, i)
    .replace(/^---[^\n]*\n/, '')
    .replace(/\n\.\.\.\s*$/, '\n');
}

/** How a document is named in messages: `RegistryAuthConfig/ghcr.io`, `v1alpha1` or its position. */
function labelOf(v: unknown, i: number): string {
  if (isObj(v) && typeof v.kind === 'string') return `${v.kind}${typeof v.name === 'string' ? `/${v.name}` : ''}`;
  if (isObj(v) && v.kind === undefined && (v.version === 'v1alpha1' || v.machine !== undefined)) return 'v1alpha1';
  return `document ${i + 1}`;
}

interface ParsedConfig {
  docs: Document[];
  values: unknown[];
}

function parseConfig(text: string): ParsedConfig {
  const docs = parseAllDocuments(text);
  const values: unknown[] = [];
  for (const [i, doc] of docs.entries()) {
    if (doc.errors.length > 0) {
      // the parser's message quotes the source line, which may hold any credential of the cluster
      const pos = doc.errors[0].linePos?.[0];
      throw new MachineConfigError(
        `the node's machine config document ${i + 1} is not valid YAML${pos ? ` (line ${pos.line}, column ${pos.col})` : ''}`,
        `document ${i + 1}`,
      );
    }
    values.push(doc.toJS() as unknown);
  }
  return { docs, values };
}

function v1alpha1Index(values: unknown[]): number {
  return values.findIndex((v) => isObj(v) && v.kind === undefined && (v.version === 'v1alpha1' || isObj(v.machine)));
}

function legacyAuthOf(v: unknown, host: string): unknown {
  const m = isObj(v) ? v.machine : undefined;
  const r = isObj(m) ? m.registries : undefined;
  const c = isObj(r) ? r.config : undefined;
  const h = isObj(c) ? c[host] : undefined;
  return isObj(h) ? h.auth : undefined;
}

function documentIndex(values: unknown[], name: string): number {
  return values.findIndex((v) => isObj(v) && v.kind === 'RegistryAuthConfig' && v.name === name);
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

/** The changes the config does not carry yet, by name (`RegistryAuthConfig/<name>`, `v1alpha1 machine.registries.config.<host>.auth`). */
export function pendingChanges(configText: string, changes: CredentialChange[]): string[] {
  const { values } = parseConfig(configText);
  const v1 = v1alpha1Index(values);
  return changes
    .filter((c) =>
      c.form === 'document' ? !same(values[documentIndex(values, c.name)], c.value) : !same(legacyAuthOf(values[v1], c.host), c.auth),
    )
    .map(changeLabel);
}

export function changeLabel(c: CredentialChange): string {
  return c.form === 'document' ? `RegistryAuthConfig/${c.name}` : `v1alpha1 machine.registries.config.${c.host}.auth`;
}

export interface PatchedConfig {
  /** the config text to send; undefined when the config already carries every change (send nothing) */
  text?: string;
  /** the documents changed, by label */
  changed: string[];
}

/**
 * Applies the changes to the config text. Documents not changed keep their exact text and order; a
 * replaced RegistryAuthConfig document takes the patch document's text; one the config lacks is
 * appended; the v1alpha1 document, when a legacy auth map changes, is re-rendered from its parsed
 * form (comments kept). Throws MachineConfigError when the config is not YAML or has no v1alpha1
 * document for a legacy change.
 */
export function applyCredentialChanges(configText: string, changes: CredentialChange[]): PatchedConfig {
  const { docs, values } = parseConfig(configText);
  const changed = pendingChanges(configText, changes);
  if (changed.length === 0) return { changed };
  const pieces = docs.map((_d, i) => pieceOf(configText, docs, i));
  const appended: string[] = [];
  for (const c of changes) {
    if (c.form === 'document') {
      const i = documentIndex(values, c.name);
      const text = `${i > 0 || (i === 0 && pieces[0].startsWith('---')) ? '---\n' : ''}${withNewline(c.text)}`;
      if (i >= 0) pieces[i] = text;
      else appended.push(`---\n${withNewline(c.text)}`);
      continue;
    }
    const i = v1alpha1Index(values);
    if (i < 0) throw new MachineConfigError(`the node's machine config has no v1alpha1 document to carry ${changeLabel(c)}`, 'v1alpha1');
    const doc = docs[i];
    if (!isMap(doc.contents)) throw new MachineConfigError("the node's v1alpha1 document is not a mapping", 'v1alpha1');
    doc.setIn(['machine', 'registries', 'config', c.host, 'auth'], doc.createNode(c.auth));
    const rendered = doc.toString();
    pieces[i] = i > 0 && !rendered.startsWith('---') ? `---\n${rendered}` : rendered;
  }
  let text = pieces.map(withNewline).join('');
  if (appended.length > 0) text = withNewline(text) + appended.join('');
  return { text, changed };
}

function withNewline(s: string): string {
  return s.endsWith('\n') ? s : `${s}\n`;
}

/** The config's documents by label, in order (for messages: never their content). */
export function documentLabels(configText: string): string[] {
  const { values } = parseConfig(configText);
  return values.map(labelOf);
}
