// The auth patch, read once: the file the `auth-patch` input names is read by the shell
// (src/action/inputs.ts) and parsed here, once, into one value every user is handed: which registry
// hosts the run rolls and the credential it asks for each (the evidence and the proof compare with them), the
// secrets to mask, and its form, whether it is one of the two credential forms the Talos API path
// applies itself (the changes it makes) or anything else, left to talosctl and Talos's own merge.
// The values are secrets: they are returned for masking at once and never put into an error.
import { type Document, parseAllDocuments } from 'yaml';
import { InputError } from './errors.js';
import type { AuthFields, DesiredCredential, PatchForms } from './model/credential.js';
import { secretForms } from './redact.js';
import { scalarText } from './text.js';

type Tree = Record<string, unknown>;
const isObj = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One change the credential patch makes. */
export type CredentialChange =
  | { form: 'document'; name: string; /** the patch document's own text */ text: string; value: Tree }
  | { form: 'legacy'; host: string; auth: Tree };

/** The patch's form: one of the two credential forms and what it changes, or why it is not. */
export type PatchClass = { ours: true; changes: CredentialChange[] } | { ours: false; why: string };

export interface ParsedAuthPatch {
  /** the hosts the run rolls (the `registry` input; default every host of the patch), each with its credential, sorted by host */
  desired: DesiredCredential[];
  /** every host the patch carries a credential for, sorted by host (the pre-flight check asks each one); secrets */
  credentials: HostCredential[];
  /** values to mask: every secret of every host and its derived forms (see secretForms) */
  secrets: string[];
  /** whether the patch is one of the two credential forms (applied over the Talos API), and what it changes */
  form: PatchClass;
  /** the credential forms the patch writes per host, and the documents it deletes (no secret) */
  credentialForms: PatchForms;
}

/** One host's credential as the patch carries it (the RegistryAuthConfig document's over the legacy map's). */
export interface HostCredential {
  host: string;
  fields: AuthFields;
}

/** The auth patch as the run uses it: the parsed patch and the file it was read from. */
export interface AuthPatch extends ParsedAuthPatch {
  /** the file the `auth-patch` input names: what `talosctl patch machineconfig --patch-file` is given */
  path: string;
}

/** containerd keys Docker Hub's auth under its API host (docker.DefaultHost); Talos renders it so. */
export function tomlHostFor(host: string): string {
  return host === 'docker.io' ? 'registry-1.docker.io' : host;
}

function fieldsOf(o: Record<string, unknown>): AuthFields {
  return {
    username: scalarText(o.username),
    password: scalarText(o.password),
    auth: scalarText(o.auth),
    identitytoken: scalarText(o.identityToken ?? o.identitytoken),
  };
}

function isEmpty(f: AuthFields): boolean {
  return !f.username && !f.password && !f.auth && !f.identitytoken;
}

/**
 * Parse the patch text, once: the desired credential and its secrets, and the patch's form. Talos
 * semantics: a `RegistryAuthConfig` document overrides the legacy
 * `machine.registries.config.<host>.auth` for the same host, so the desired credential is the
 * document's when both are present. `mask` is handed every secret as soon as they are known, before
 * the patch or the `registry` input can be refused.
 */
export function parseAuthPatch(
  text: string,
  registry: readonly string[],
  mask: (secret: string) => void = () => undefined,
): ParsedAuthPatch {
  const docs = parseAllDocuments(text);
  return { ...desiredOf(docs, registry, mask), form: formOf(text, docs) };
}

function desiredOf(docs: Document[], registry: readonly string[], mask: (secret: string) => void): Omit<ParsedAuthPatch, 'form'> {
  const legacy = new Map<string, AuthFields>();
  const documents = new Map<string, AuthFields>();
  const deletedDocuments: string[] = [];
  /** every host whose credential the patch names, in either form: set, emptied or deleted */
  const named = new Set<string>();
  let unknowable: InputError | undefined;
  for (const [i, doc] of docs.entries()) {
    if (doc.errors.length > 0) {
      // The parser's message quotes the offending source line, which may hold the secret: report the position only.
      const pos = doc.errors[0].linePos?.[0];
      throw new InputError('auth-patch', `document ${i + 1} is not valid YAML${pos ? ` (line ${pos.line}, column ${pos.col})` : ''}`);
    }
    const value = doc.toJS() as unknown;
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new InputError(
        'auth-patch',
        `document ${i + 1} is not a mapping (a JSON6902 patch list cannot carry a registry credential this action can read)`,
      );
    }
    const o = value as Record<string, unknown>;
    if (o.kind === 'RegistryAuthConfig') {
      const name = scalarText(o.name).trim();
      if (!name) throw new InputError('auth-patch', `document ${i + 1} (RegistryAuthConfig) has no name`);
      named.add(name);
      if (o.$patch === 'delete') {
        deletedDocuments.push(name);
        continue;
      }
      documents.set(name, fieldsOf(o));
      continue;
    }
    const what = unknowableHosts(o);
    if (what) unknowable ??= unknowableError(i, what);
    const byHost = legacyEntries(o);
    for (const [host, entry] of Object.entries(byHost)) {
      if (!isObj(entry) || '$patch' in entry || 'auth' in entry) named.add(host);
      const auth = isObj(entry) ? entry.auth : undefined;
      if (isObj(auth)) legacy.set(host, fieldsOf(auth));
    }
  }
  const merged = new Map<string, AuthFields>(legacy);
  for (const [host, f] of documents) merged.set(host, f);
  for (const [host, f] of [...merged]) if (isEmpty(f)) merged.delete(host);
  const hosts = [...merged.keys()].sort();
  // Masked before any refusal below: a refused run's text, and the post step's, never shows them.
  const secrets = secretForms(merged.values());
  for (const s of secrets) mask(s);
  if (unknowable) throw unknowable;
  if (hosts.length === 0) {
    throw new InputError(
      'auth-patch',
      'carries no registry credential: expected a RegistryAuthConfig document (username/password, auth or identityToken) or machine.registries.config.<host>.auth',
    );
  }
  // Empty: every host the patch names is rolled (one claim, at most one reboot per node for all of them).
  for (const host of registry) {
    if (!merged.has(host)) {
      throw new InputError('registry', `"${host}" is not a host the auth patch carries a credential for (it has: ${hosts.join(', ')})`);
    }
  }
  const rolled = registry.length > 0 ? hosts.filter((h) => registry.includes(h)) : hosts;
  refuseUnrolled(named, rolled, merged, registry);
  const credentials = hosts.map((h) => ({ host: h, fields: merged.get(h)! }));
  const credentialForms: PatchForms = { documents: [...documents.keys()].sort(), legacy: [...legacy.keys()].sort(), deletedDocuments };
  return {
    desired: rolled.map((h) => ({ host: h, tomlHost: tomlHostFor(h), fields: merged.get(h)! })),
    credentials,
    secrets,
    credentialForms,
  };
}

// --- only the rolled hosts are written --------------------------------------------------------------
// The evidence and the proof judge the rolled hosts' credentials only, and the release marks only them
// verified. A patch that also writes another host's credential would put it on every node rolled,
// unjudged: refused, in every form (the API path's two and the talosctl one alike), before anything
// runs. Reasoned out in docs/registries.md ("Only the rolled hosts are written").

/** A patch naming hosts the run does not roll: an InputError naming them and the fix. */
function refuseUnrolled(
  named: ReadonlySet<string>,
  rolled: readonly string[],
  merged: ReadonlyMap<string, AuthFields>,
  registry: readonly string[],
) {
  const extra = [...named].filter((h) => !rolled.includes(h)).sort();
  const them = (hs: string[]) => (hs.length === 1 ? 'it' : 'them');
  const given = extra.filter((h) => merged.has(h));
  if (given.length > 0) {
    throw new InputError(
      'registry',
      `registry: ${registry.join(', ')} does not roll ${given.join(', ')}, whose credential${given.length === 1 ? '' : 's'} the auth patch also writes: ` +
        `the run would write ${them(given)} to every node it rolls, judged by neither the evidence nor the proof. ` +
        `Add ${given.join(', ')} to registry, or remove ${them(given)} from the auth patch`,
    );
  }
  if (extra.length > 0) {
    throw new InputError(
      'auth-patch',
      `removes the credential of ${extra.join(', ')} (a deleted or empty RegistryAuthConfig document or auth map; no new credential for ${them(extra)}): ` +
        `the run would remove ${them(extra)} on every node it rolls, judged by neither the evidence nor the proof. ` +
        `This action rolls a credential, it does not remove one: remove ${them(extra)} from the auth patch`,
    );
  }
}

/** `machine.registries.config` of a v1alpha1 patch document, by host; empty when it has none. */
function legacyEntries(o: Tree): Tree {
  const config = isObj(o.machine) && isObj(o.machine.registries) ? o.machine.registries.config : undefined;
  return isObj(config) ? config : {};
}

/**
 * The CRI customization part: a `machine.files` entry at /etc/cri/conf.d/20-customization.part
 * (siderolabs/talos constants.CRICustomizationConfigPart, joined to /etc) is merged by machined into
 * the CRI config, and v1.14's CRICustomizationConfig document is its successor. Any path under a
 * `cri/conf.d/` is taken for it.
 */
const CRI_PART_DIR = '/cri/conf.d/';

/**
 * What in a patch document writes registry hosts that cannot be known from the patch, if anything:
 * a `$patch` directive on `machine`, `machine.registries` or its `config` (every host the node
 * carries), a `config` that is no map of hosts, or a CRI customization (`CRICustomizationConfig`, or a
 * `machine.files` entry for the CRI config part): containerd TOML that may carry any host's auth.
 */
function unknowableHosts(o: Tree): string | undefined {
  if (o.kind === 'CRICustomizationConfig')
    return 'is a CRICustomizationConfig document, whose containerd TOML may carry any registry host’s auth';
  const { machine } = o;
  if (!isObj(machine)) return undefined;
  if ('$patch' in machine) return 'puts `$patch` on machine, which holds every registry host’s settings on the node';
  const files = Array.isArray(machine.files) ? machine.files : [];
  for (const f of files) {
    if (isObj(f) && typeof f.path === 'string' && f.path.includes(CRI_PART_DIR)) {
      return `writes ${f.path} (machine.files), whose containerd TOML may carry any registry host’s auth`;
    }
  }
  const { registries } = machine;
  if (registries === undefined || registries === null) return undefined;
  if (!isObj(registries)) return 'sets machine.registries to something other than a mapping';
  if ('$patch' in registries) return 'puts `$patch` on machine.registries, which holds every registry host’s settings on the node';
  const { config } = registries;
  if (config === undefined || config === null) return undefined;
  if (!isObj(config)) return 'sets machine.registries.config to something other than a mapping of hosts';
  if ('$patch' in config) return 'puts `$patch` on machine.registries.config, which holds every registry host’s settings on the node';
  return undefined;
}

function unknowableError(i: number, what: string): InputError {
  return new InputError(
    'auth-patch',
    `document ${i + 1} ${what}: which registry hosts it writes cannot be known from the patch, so the run could write a host it does not roll, ` +
      'judged by neither the evidence nor the proof. Apply that change in a step of its own (talosctl patch machineconfig), ' +
      'and give this action a patch of the credentials it rolls',
  );
}

// --- the patch's form: one of the two credential forms, or anything else --------------------------
// Anything else in a patch is not ours to interpret: the Talos adapter then leaves the patch to
// talosctl (Talos's own merge); the two forms it applies itself (src/adapters/talos/machineConfig/patch.ts).

const AUTH_KEYS = new Set(['username', 'password', 'auth', 'identityToken']);
const DOCUMENT_KEYS = new Set(['apiVersion', 'kind', 'name', ...AUTH_KEYS]);

/** Whether the patch is one of the two credential forms, and what it changes. */
export function classifyCredentialPatch(text: string): PatchClass {
  return formOf(text, parseAllDocuments(text));
}

function formOf(text: string, docs: Document[]): PatchClass {
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
export function documentStart(doc: Document): number {
  if (!doc.range) throw new Error('yaml: a parsed document has no range');
  return doc.range[0];
}

/** The patch's document i alone (no comment before it, no `---`, no `...`): what is written for it. */
function sliceOf(text: string, docs: Document[], i: number): string {
  return text
    .slice(documentStart(docs[i]), i + 1 < docs.length ? documentStart(docs[i + 1]) : text.length)
    .replace(/^---[^\n]*\n/, '')
    .replace(/\n\.\.\.\s*$/, '\n');
}
