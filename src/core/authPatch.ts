// Read the auth patch: which registry host it configures and the credential it asks for.
// The values are secrets: they are returned for masking at once and never put into an error.
import { parseAllDocuments } from 'yaml';
import { InputError } from './errors.js';
import type { AuthFields, DesiredCredential } from './model.js';
import { secretForms } from './redact.js';

export interface ParsedAuthPatch {
  desired: DesiredCredential;
  /** values to mask: every secret of every host and its derived forms (see secretForms) */
  secrets: string[];
}

/** containerd keys Docker Hub's auth under its API host (docker.DefaultHost); Talos renders it so. */
export function tomlHostFor(host: string): string {
  return host === 'docker.io' ? 'registry-1.docker.io' : host;
}

function str(v: unknown): string {
  // YAML may type a value as a number or boolean (`password: 1234`); Talos reads it as a string.
  return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
}

function fieldsOf(o: Record<string, unknown>): AuthFields {
  return {
    username: str(o.username),
    password: str(o.password),
    auth: str(o.auth),
    identitytoken: str(o.identityToken ?? o.identitytoken),
  };
}

function isEmpty(f: AuthFields): boolean {
  return !f.username && !f.password && !f.auth && !f.identitytoken;
}

/**
 * Parse the patch text. Talos semantics: a `RegistryAuthConfig` document overrides the legacy
 * `machine.registries.config.<host>.auth` for the same host, so the desired credential is the
 * document's when both are present.
 */
export function parseAuthPatch(text: string, registry: string): ParsedAuthPatch {
  const docs = parseAllDocuments(text);
  const legacy = new Map<string, AuthFields>();
  const documents = new Map<string, AuthFields>();
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
      const name = str(o.name).trim();
      if (!name) throw new InputError('auth-patch', `document ${i + 1} (RegistryAuthConfig) has no name`);
      if (o.$patch === 'delete') continue;
      documents.set(name, fieldsOf(o));
      continue;
    }
    const config = (o.machine as Record<string, unknown> | undefined)?.registries as Record<string, unknown> | undefined;
    const byHost = config?.config as Record<string, unknown> | undefined;
    if (byHost && typeof byHost === 'object') {
      for (const [host, entry] of Object.entries(byHost)) {
        const auth = (entry as Record<string, unknown> | null)?.auth;
        if (auth && typeof auth === 'object') legacy.set(host, fieldsOf(auth as Record<string, unknown>));
      }
    }
  }
  const merged = new Map<string, AuthFields>(legacy);
  for (const [host, f] of documents) merged.set(host, f);
  for (const [host, f] of [...merged]) if (isEmpty(f)) merged.delete(host);
  const hosts = [...merged.keys()].sort();
  if (hosts.length === 0) {
    throw new InputError(
      'auth-patch',
      'carries no registry credential: expected a RegistryAuthConfig document (username/password, auth or identityToken) or machine.registries.config.<host>.auth',
    );
  }
  let host = registry.trim();
  if (!host) {
    if (hosts.length > 1) {
      throw new InputError(
        'registry',
        `is empty but the auth patch carries credentials for several hosts (${hosts.join(', ')}): name the one to roll`,
      );
    }
    host = hosts[0];
  } else if (!merged.has(host)) {
    throw new InputError('registry', `"${host}" is not a host the auth patch carries a credential for (it has: ${hosts.join(', ')})`);
  }
  const fields = merged.get(host)!;
  const secrets = secretForms(merged.values());
  return { desired: { host, tomlHost: tomlHostFor(host), fields }, secrets };
}
