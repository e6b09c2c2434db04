// The credential patch applied to a machine config's multi-document text, without Talos's merge,
// deciding from the credential Talos will read, not from the form the patch is written in:
// - Talos reads a host's credential from its `RegistryAuthConfig` document when there is one, else
//   from the legacy `machine.registries.config.<host>.auth` map (container.RegistryAuthConfigs:
//   documents over the legacy map; docs/talos-api.md). So every form the node carries for the host
//   is written with the desired credential, and the form the patch gives too: the form that wins
//   always carries it, and the old credential is never left behind in the other one.
// - A `RegistryAuthConfig` document is replaced whole, or appended (Talos's merge never clears a
//   field with a zero value, so switching `auth` <-> `username/password` by merging would keep the
//   old field); the legacy map is edited in the text, only its own span (configEdit.ts): every other
//   byte of the config is kept, so Go's YAML reads every other value as before (`0644` stays 0644).
// - The patched text is then checked here, without the node (verifyPatched): it parses, each host's
//   effective credential is the desired one, and nothing else changed.
// Anything else in a patch is not ours to interpret: classifyCredentialPatch says so and the
// caller leaves the patch to talosctl.
// Pure (no I/O). The config holds every credential of the cluster: no error here quotes its text,
// only document numbers, kinds, names and line/column positions.
import { type Document, parseAllDocuments } from 'yaml';
import type { CredentialEdit } from '../../../core/model.js';
import { setMapAt, YamlEditError } from './yamlEdit.js';

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
  // the first piece starts at the text's start: a comment before the first document is the config's too
  return text.slice(i === 0 ? 0 : startOf(docs[i]), i + 1 < docs.length ? startOf(docs[i + 1]) : text.length);
}

/** The patch's document i alone (no comment before it, no `---`, no `...`): what is written for it. */
function sliceOf(text: string, docs: Document[], i: number): string {
  return text
    .slice(startOf(docs[i]), i + 1 < docs.length ? startOf(docs[i + 1]) : text.length)
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

/**
 * YAML 1.1's octal int, as Go's YAML reads it (`0644` is 420: yaml/go-yaml resolve.go, ParseInt base
 * 0); the core schema would read 644. Values are compared as Talos reads them (verifyPatched).
 */
const GO_OCTAL = {
  identify: () => false,
  default: true,
  tag: 'tag:yaml.org,2002:int',
  format: 'OCT',
  test: /^[-+]?0[0-7_]+$/,
  resolve: (s: string) => parseInt(s.replace(/_/g, ''), 8),
};

/** The config's documents and their values, ints read as Go's YAML reads them (as Talos does). */
function parseConfig(text: string, what = "the node's machine config"): ParsedConfig {
  const docs = parseAllDocuments(text, { customTags: (tags) => [GO_OCTAL, ...tags] });
  const values: unknown[] = [];
  for (const [i, doc] of docs.entries()) {
    if (doc.errors.length > 0) {
      // the parser's message quotes the source line, which may hold any credential of the cluster
      const pos = doc.errors[0].linePos?.[0];
      throw new MachineConfigError(
        `${what} document ${i + 1} is not valid YAML${pos ? ` (line ${pos.line}, column ${pos.col})` : ''}`,
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

const LEGACY_PATH = (host: string) => ['machine', 'registries', 'config', host, 'auth'];

function legacyAuthOf(v: unknown, host: string): unknown {
  let at: unknown = v;
  for (const k of LEGACY_PATH(host)) at = isObj(at) ? at[k] : undefined;
  return at;
}

function documentIndex(values: unknown[], name: string): number {
  return values.findIndex((v) => isObj(v) && v.kind === 'RegistryAuthConfig' && v.name === name);
}

/** A credential as Talos reads it: the four fields as strings (`password: 1234` is "1234"), empty ones left out. */
type Fields = Partial<Record<(typeof AUTH_FIELDS)[number], string>>;
const AUTH_FIELDS = ['username', 'password', 'auth', 'identityToken'] as const;

function fieldsOf(v: unknown): Fields | undefined {
  if (!isObj(v)) return undefined;
  const out: Fields = {};
  for (const k of AUTH_FIELDS) {
    const x = v[k];
    const s = typeof x === 'string' ? x : typeof x === 'number' || typeof x === 'boolean' ? String(x) : '';
    if (s) out[k] = s;
  }
  return out;
}

function sameFields(a: Fields | undefined, b: Fields | undefined): boolean {
  return a !== undefined && b !== undefined && AUTH_FIELDS.every((k) => (a[k] ?? '') === (b[k] ?? ''));
}

/** What the patch asks for one host: the credential Talos would read from the patch, and the forms it gives. */
interface Desired {
  host: string;
  fields: Fields;
  /** the patch's RegistryAuthConfig document for the host (its own text), when it gives one */
  document?: string;
  legacy: boolean;
}

/** Per host, the patch's credential: its document's when it gives one, else its legacy map's (Talos's own order). */
function desiredOf(changes: CredentialChange[]): Desired[] {
  const out = new Map<string, Desired>();
  const entry = (host: string) => out.get(host) ?? out.set(host, { host, fields: {}, legacy: false }).get(host)!;
  for (const c of changes) {
    if (c.form !== 'legacy') continue;
    const d = entry(c.host);
    d.legacy = true;
    d.fields = fieldsOf(c.auth) ?? {};
  }
  for (const c of changes) {
    if (c.form !== 'document') continue;
    const d = entry(c.name);
    d.document = c.text;
    d.fields = fieldsOf(c.value) ?? {};
  }
  return [...out.values()];
}

/** One place the credential is written: the form, the label, and the fields before (undefined: absent). */
interface Planned {
  form: 'document' | 'legacy';
  desired: Desired;
  label: string;
  before?: Fields;
  because: string;
}

const documentLabel = (host: string) => `RegistryAuthConfig/${host}`;
const legacyLabel = (host: string) => `v1alpha1 machine.registries.config.${host}.auth`;

/** Every place the patch writes on this config: the forms it gives and the forms the node carries for each host. */
function planFor(values: unknown[], changes: CredentialChange[]): Planned[] {
  const v1 = values[v1alpha1Index(values)];
  const out: Planned[] = [];
  for (const d of desiredOf(changes)) {
    const i = documentIndex(values, d.host);
    const legacy = fieldsOf(legacyAuthOf(v1, d.host));
    if (d.document !== undefined || i >= 0) {
      out.push({
        form: 'document',
        desired: d,
        label: documentLabel(d.host),
        before: i >= 0 ? fieldsOf(values[i]) : undefined,
        because:
          d.document !== undefined
            ? 'the patch gives this document'
            : `the node carries this document, which Talos reads for ${d.host} over machine.registries: it must carry the new credential`,
      });
    }
    if (d.legacy || legacy !== undefined) {
      out.push({
        form: 'legacy',
        desired: d,
        label: legacyLabel(d.host),
        before: legacy,
        because: d.legacy
          ? 'the patch gives this form'
          : `the node carries this form for ${d.host} too: written with the new credential, so the old one is not left behind`,
      });
    }
  }
  return out;
}

const isPending = (p: Planned) => !sameFields(p.before, p.desired.fields);

function editOf(p: Planned): CredentialEdit {
  const after = p.desired.fields;
  const before = p.before ?? {};
  const fields = AUTH_FIELDS.filter((k) => before[k] !== undefined || after[k] !== undefined).map((name) => ({
    name,
    change:
      before[name] === undefined
        ? ('added' as const)
        : after[name] === undefined
          ? ('removed' as const)
          : before[name] === after[name]
            ? ('unchanged' as const)
            : ('changed' as const),
  }));
  return { target: p.label, action: p.before === undefined ? 'added' : 'replaced', fields, because: p.because };
}

/** The changes the config does not carry yet, by label (`RegistryAuthConfig/<name>`, `v1alpha1 machine.registries.config.<host>.auth`). */
export function pendingChanges(configText: string, changes: CredentialChange[]): string[] {
  const { values } = parseConfig(configText);
  return planFor(values, changes)
    .filter(isPending)
    .map((p) => p.label);
}

export function changeLabel(c: CredentialChange): string {
  return c.form === 'document' ? documentLabel(c.name) : legacyLabel(c.host);
}

export interface PatchedConfig {
  /** the config text to send; undefined when the config already carries every change (send nothing) */
  text?: string;
  /** the places changed, by label */
  changed: string[];
  /** what each changed place gets, field by field (no value): the plan's preview */
  edits: CredentialEdit[];
  /** what verifyPatched checked on the patched text, one line each */
  checks: string[];
}

/**
 * Applies the changes to the config text: each place planFor names is written with the host's desired
 * credential. A RegistryAuthConfig document is replaced by the patch's own document (or, when the
 * patch gives the host in the legacy form only, by a document rendered from its fields), or appended;
 * the legacy map is set in the v1alpha1 document's text, its own span only. Every other document
 * keeps its exact text and order. The result is checked (verifyPatched) before it is returned.
 * Throws MachineConfigError when the config is not YAML, has no v1alpha1 document for a legacy
 * change, cannot take the edit, or the patched text fails a check.
 */
export function applyCredentialChanges(configText: string, changes: CredentialChange[]): PatchedConfig {
  const before = parseConfig(configText);
  const { docs, values } = before;
  const pending = planFor(values, changes).filter(isPending);
  if (pending.length === 0) return { changed: [], edits: [], checks: [] };
  const pieces = docs.map((_d, i) => pieceOf(configText, docs, i));
  const appended: string[] = [];
  for (const p of pending) {
    if (p.form === 'document') {
      const doc = p.desired.document ?? renderDocument(p.desired);
      const i = documentIndex(values, p.desired.host);
      if (i >= 0) pieces[i] = `${i > 0 || pieces[0].startsWith('---') ? '---\n' : ''}${withNewline(doc)}`;
      else appended.push(`---\n${withNewline(doc)}`);
      continue;
    }
    const i = v1alpha1Index(values);
    if (i < 0) throw new MachineConfigError(`the node's machine config has no v1alpha1 document to carry ${p.label}`, 'v1alpha1');
    try {
      pieces[i] = setMapAt(pieces[i], LEGACY_PATH(p.desired.host), p.desired.fields);
    } catch (e) {
      if (e instanceof YamlEditError)
        throw new MachineConfigError(`the node's v1alpha1 document cannot take ${p.label}: ${e.message}`, 'v1alpha1');
      throw e;
    }
  }
  let text = pieces.map(withNewline).join('');
  if (appended.length > 0) text = withNewline(text) + appended.join('');
  const checks = verifyParsed(configText, before, text, parseConfig(text, 'the patched machine config'), changes);
  return { text, changed: pending.map((p) => p.label), edits: pending.map(editOf), checks };
}

/** A RegistryAuthConfig document carrying the host's desired credential (values double-quoted). */
function renderDocument(d: Desired): string {
  const q = (s: string) => JSON.stringify(s);
  return [
    'apiVersion: v1alpha1',
    'kind: RegistryAuthConfig',
    `name: ${q(d.host)}`,
    ...AUTH_FIELDS.filter((k) => d.fields[k] !== undefined).map((k) => `${k}: ${q(d.fields[k]!)}`),
    '',
  ].join('\n');
}

/**
 * Each host's credential as Talos reads it from a config: its RegistryAuthConfig document when there
 * is one, else the legacy map (container.RegistryAuthConfigs), with the place it comes from.
 */
export function effectiveCredentials(configText: string): Map<string, { fields: Fields; from: string }> {
  return effectiveOf(parseConfig(configText).values);
}

function effectiveOf(values: unknown[]): Map<string, { fields: Fields; from: string }> {
  const out = new Map<string, { fields: Fields; from: string }>();
  for (const [host, entry] of Object.entries(configMap(values) ?? {})) {
    const f = fieldsOf(isObj(entry) ? entry.auth : undefined);
    if (f) out.set(host, { fields: f, from: legacyLabel(host) });
  }
  for (const v of values) {
    if (isObj(v) && v.kind === 'RegistryAuthConfig' && typeof v.name === 'string')
      out.set(v.name, { fields: fieldsOf(v) ?? {}, from: documentLabel(v.name) });
  }
  return out;
}

function configMap(values: unknown[]): Tree | undefined {
  const v = values[v1alpha1Index(values)];
  const m = isObj(v) ? v.machine : undefined;
  const r = isObj(m) ? m.registries : undefined;
  const c = isObj(r) ? r.config : undefined;
  return isObj(c) ? c : undefined;
}

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

function verifyParsed(
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
    const expected = structuredClone(before.values[v1]) as Tree;
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

function withNewline(s: string): string {
  return s.endsWith('\n') ? s : `${s}\n`;
}

/** The config's documents by label, in order (for messages: never their content). */
export function documentLabels(configText: string): string[] {
  const { values } = parseConfig(configText);
  return values.map(labelOf);
}
