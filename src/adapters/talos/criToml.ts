// The CRI registry auth containerd reads: `talosctl read /etc/cri/conf.d/cri.toml` (merged) or
// `01-registries.part` (≤1.13). The text holds the credentials: nothing from it — no value, no line,
// not even the TOML library's own error message, which quotes the offending line — may leave this
// module except the parsed fields, which the caller compares in memory and never logs.
import { TomlError, parse } from 'smol-toml';
import type { AuthFields } from '../../core/model/credential.js';
import { ParseError } from '../parseError.js';

const FORMAT = 'CRI TOML';
/** containerd 2.x (every Talos in scope, v1.8+), then containerd 1.x (Talos ≤1.7) */
const PLUGIN_PATHS = ['io.containerd.cri.v1.images', 'io.containerd.grpc.v1.cri'] as const;
const FIELDS = ['username', 'password', 'auth', 'identitytoken'] as const;

/**
 * host key as in the TOML (`registry-1.docker.io`, `ghcr.io`) → its `auth` fields, absent ones as ''.
 * A host configured without an `auth` table (TLS only) has no entry. The same host under both plugin
 * paths with different values cannot be told apart by us, so it is an error, not a guess.
 */
export function parseCriRegistryAuth(text: string): Record<string, AuthFields> {
  let doc: Record<string, unknown>;
  try {
    doc = parse(text);
  } catch (e) {
    if (e instanceof TomlError) throw new ParseError(FORMAT, `not valid TOML (line ${e.line}, column ${e.column})`);
    throw new ParseError(FORMAT, 'not valid TOML');
  }
  const out: Record<string, AuthFields> = {};
  const plugins = doc.plugins;
  if (plugins === undefined) return out;
  if (!isTable(plugins)) throw new ParseError(FORMAT, '`plugins` is not a table');
  for (const plugin of PLUGIN_PATHS) {
    const configs = dig(plugins, [plugin, 'registry', 'configs'], `plugins.'${plugin}'.registry.configs`);
    if (configs === undefined) continue;
    for (const [host, cfg] of Object.entries(configs)) {
      const where = `plugins.'${plugin}'.registry.configs.'${host}'`;
      if (!isTable(cfg)) throw new ParseError(FORMAT, `${where} is not a table`);
      const auth = cfg.auth;
      if (auth === undefined) continue;
      if (!isTable(auth)) throw new ParseError(FORMAT, `${where}.auth is not a table`);
      const fields = {} as AuthFields;
      for (const f of FIELDS) {
        const v = auth[f];
        if (v !== undefined && typeof v !== 'string') throw new ParseError(FORMAT, `${where}.auth.${f} is not a string`);
        fields[f] = v ?? '';
      }
      const seen = out[host];
      if (seen && FIELDS.some((f) => seen[f] !== fields[f])) {
        throw new ParseError(FORMAT, `host '${host}' has different auth under both containerd plugin paths`);
      }
      out[host] = fields;
    }
  }
  return out;
}

function dig(root: Record<string, unknown>, keys: string[], what: string): Record<string, unknown> | undefined {
  let cur: unknown = root;
  for (const k of keys) {
    if (!isTable(cur)) throw new ParseError(FORMAT, `${what} is not a table`);
    cur = cur[k];
    if (cur === undefined) return undefined;
  }
  if (!isTable(cur)) throw new ParseError(FORMAT, `${what} is not a table`);
  return cur;
}

function isTable(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}
