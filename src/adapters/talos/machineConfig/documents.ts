// A node's machine config as Talos reads it: its documents (ints read as Go's YAML reads them, so
// `0644` is 420), each document's own text and label, the legacy auth map's place, a credential's
// fields and each host's effective credential (its RegistryAuthConfig document over the legacy map,
// container.RegistryAuthConfigs). What the credential patch (patch.ts), its plan
// (plan.ts) and its checks (verify.ts) read a config with. Pure (no I/O). The config holds
// every credential of the cluster: no error here quotes its text, only document numbers, kinds, names
// and line/column positions.
import { type Document, parseAllDocuments } from 'yaml';
import { documentStart } from '../../../core/authPatch.js';
import type { CredentialForms } from '../../../core/model/credential.js';

export type Tree = Record<string, unknown>;
export const isObj = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);

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

/** The text of document i: from its start to the next one's (trailing comments and `...` included). */
export function pieceOf(text: string, docs: Document[], i: number): string {
  // the first piece starts at the text's start: a comment before the first document is the config's too
  return text.slice(i === 0 ? 0 : documentStart(docs[i]), i + 1 < docs.length ? documentStart(docs[i + 1]) : text.length);
}

/** How a document is named in messages: `RegistryAuthConfig/ghcr.io`, `v1alpha1` or its position. */
export function labelOf(v: unknown, i: number): string {
  if (isObj(v) && typeof v.kind === 'string') return `${v.kind}${typeof v.name === 'string' ? `/${v.name}` : ''}`;
  if (isObj(v) && v.kind === undefined && (v.version === 'v1alpha1' || v.machine !== undefined)) return 'v1alpha1';
  return `document ${i + 1}`;
}

export interface ParsedConfig {
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

/**
 * The config's documents and their values, ints read as Go's YAML reads them (as Talos does). The
 * answer is shared and read-only (its values frozen): an apply parses the patched text, then the
 * same text read back twice more (the pending changes, the read-back drift), so the last few texts'
 * answers are kept. A text that does not parse is never kept: its error names `what` each time.
 */
export function parseConfig(text: string, what = "the node's machine config"): ParsedConfig {
  const known = parsedOf.get(text);
  if (known !== undefined) return known;
  const parsed = parseFresh(text, what);
  if (parsedOf.size >= PARSED_KEPT) parsedOf.delete(parsedOf.keys().next().value as string);
  parsedOf.set(text, parsed);
  return parsed;
}

const parsedOf = new Map<string, ParsedConfig>();
const PARSED_KEPT = 8;

/** Freezes a plain value and everything it holds (YAML aliases may share objects; a frozen one is done). */
function deepFreeze(v: unknown): void {
  if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return;
  Object.freeze(v);
  for (const x of Object.values(v)) deepFreeze(x);
}

function parseFresh(text: string, what: string): ParsedConfig {
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
  deepFreeze(values);
  return Object.freeze({ docs, values });
}

export function v1alpha1Index(values: unknown[]): number {
  return values.findIndex((v) => isObj(v) && v.kind === undefined && (v.version === 'v1alpha1' || isObj(v.machine)));
}

export const LEGACY_PATH = (host: string) => ['machine', 'registries', 'config', host, 'auth'];

export function legacyAuthOf(v: unknown, host: string): unknown {
  let at: unknown = v;
  for (const k of LEGACY_PATH(host)) at = isObj(at) ? at[k] : undefined;
  return at;
}

export function documentIndex(values: unknown[], name: string): number {
  return values.findIndex((v) => isObj(v) && v.kind === 'RegistryAuthConfig' && v.name === name);
}

/** A credential as Talos reads it: the four fields as strings (`password: 1234` is "1234"), empty ones left out. */
export type Fields = Partial<Record<(typeof AUTH_FIELDS)[number], string>>;
export const AUTH_FIELDS = ['username', 'password', 'auth', 'identityToken'] as const;

export function fieldsOf(v: unknown): Fields | undefined {
  if (!isObj(v)) return undefined;
  const out: Fields = {};
  for (const k of AUTH_FIELDS) {
    const x = v[k];
    const s = typeof x === 'string' ? x : typeof x === 'number' || typeof x === 'boolean' ? String(x) : '';
    if (s) out[k] = s;
  }
  return out;
}

export function sameFields(a: Fields | undefined, b: Fields | undefined): boolean {
  return a !== undefined && b !== undefined && AUTH_FIELDS.every((k) => (a[k] ?? '') === (b[k] ?? ''));
}

export const documentLabel = (host: string) => `RegistryAuthConfig/${host}`;
export const legacyLabel = (host: string) => `v1alpha1 machine.registries.config.${host}.auth`;

/**
 * Each host's credential as Talos reads it from a config: its RegistryAuthConfig document when there
 * is one, else the legacy map (container.RegistryAuthConfigs), with the place it comes from.
 */
export function effectiveCredentials(configText: string): Map<string, { fields: Fields; from: string }> {
  return effectiveOf(parseConfig(configText).values);
}

export function effectiveOf(values: unknown[]): Map<string, { fields: Fields; from: string }> {
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

/** Which credential forms the config carries, by host (no value): its RegistryAuthConfig documents and its legacy auth maps. */
export function credentialFormsOf(configText: string): CredentialForms {
  const { values } = parseConfig(configText);
  const legacy = Object.entries(configMap(values) ?? {})
    .filter(([, entry]) => isObj(entry) && isObj(entry.auth))
    .map(([host]) => host);
  const documents = values
    .filter((v): v is Tree => isObj(v) && v.kind === 'RegistryAuthConfig' && typeof v.name === 'string')
    .map((v) => v.name as string);
  return { documents: documents.sort(), legacy: legacy.sort() };
}

function configMap(values: unknown[]): Tree | undefined {
  const v = values[v1alpha1Index(values)];
  const m = isObj(v) ? v.machine : undefined;
  const r = isObj(m) ? m.registries : undefined;
  const c = isObj(r) ? r.config : undefined;
  return isObj(c) ? c : undefined;
}

export function withNewline(s: string): string {
  return s.endsWith('\n') ? s : `${s}\n`;
}

/** The config's documents by label, in order (for messages: never their content). */
export function documentLabels(configText: string): string[] {
  const { values } = parseConfig(configText);
  return values.map(labelOf);
}
