// The talosconfig, read the way talosctl reads it (pkg/machinery/client/config): the file from the
// `talosconfig` input, else $TALOSCONFIG, else ~/.talos/config; the current `context` (or the one
// asked for); its `endpoints` and its base64-encoded PEM `ca`, `crt` and `key`. Nothing is judged
// here except whether the credentials can be used: a context without a client certificate (Omni's
// signed requests, `auth:`) is a reason to read through talosctl instead, and one whose credentials
// are present but unusable is the user's error, named with the file and the context.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { InputError } from '../../../core/errors.js';

/** Talos's API port when an endpoint names none (pkg/machinery/constants ApidPort). */
export const APID_PORT = 50000;

export interface TalosCredentials {
  /** PEM */
  ca: string;
  crt: string;
  /** PEM, relabelled to `PRIVATE KEY` when Talos wrote `ED25519 PRIVATE KEY` */
  key: string;
}

export interface TalosContext {
  path: string;
  context: string;
  endpoints: string[];
  /** present when the context carries a client certificate and key */
  credentials?: TalosCredentials;
  /** why there are no credentials (said in the report when the CLI path is chosen) */
  noCredentials?: string;
}

export interface TalosconfigSource {
  /** the `talosconfig` input */
  path?: string;
  /** a context other than the file's current one */
  context?: string;
  env?: NodeJS.ProcessEnv;
  home?: string;
}

/** Which file talosctl would read. */
export function talosconfigPath(src: TalosconfigSource = {}): string {
  const env = src.env ?? process.env;
  if (src.path) return src.path;
  if (env.TALOSCONFIG) return env.TALOSCONFIG;
  return join(src.home ?? homedir(), '.talos', 'config');
}

/** Reads and checks the context; throws InputError('talosconfig') naming the file and the context. */
export function loadTalosContext(src: TalosconfigSource = {}): TalosContext {
  const path = talosconfigPath(src);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new InputError('talosconfig', `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  let doc: unknown;
  try {
    doc = parse(text);
  } catch {
    // the YAML library's message quotes the offending line, which may hold a key
    throw new InputError('talosconfig', `${path} is not valid YAML`);
  }
  if (!isMap(doc)) throw new InputError('talosconfig', `${path} is not a talosconfig (no top-level map)`);
  const name = src.context ?? (typeof doc.context === 'string' ? doc.context : '');
  const contexts = isMap(doc.contexts) ? doc.contexts : {};
  const ctx = name ? contexts[name] : undefined;
  const where = `${path}, context ${JSON.stringify(name)}`;
  if (!name) throw new InputError('talosconfig', `${path} names no current context`);
  if (!isMap(ctx)) throw new InputError('talosconfig', `${where}: no such context`);
  const endpoints = Array.isArray(ctx.endpoints) ? ctx.endpoints.map(String).filter(Boolean) : [];
  const out: TalosContext = { path, context: name, endpoints };

  const field = (k: 'ca' | 'crt' | 'key') => {
    const v = ctx[k];
    return typeof v === 'string' ? v.trim() : '';
  };
  const [ca, crt, key] = [field('ca'), field('crt'), field('key')];
  if (!crt && !key) {
    out.noCredentials =
      ctx.auth !== undefined
        ? 'the context authenticates with `auth` (signed requests), not a client certificate'
        : 'the context has no client certificate';
    return out;
  }
  if (!crt || !key) throw new InputError('talosconfig', `${where}: ${crt ? 'crt' : 'key'} is set but ${crt ? 'key' : 'crt'} is empty`);
  if (!ca) throw new InputError('talosconfig', `${where}: ca is empty, so the server cannot be verified`);
  if (endpoints.length === 0) throw new InputError('talosconfig', `${where}: no endpoints`);
  out.credentials = {
    ca: pemField(where, 'ca', ca, 'CERTIFICATE'),
    crt: pemField(where, 'crt', crt, 'CERTIFICATE'),
    key: relabelKey(pemField(where, 'key', key, 'PRIVATE KEY')),
  };
  checkUsable(where, out.credentials);
  return out;
}

/**
 * Talos writes its Ed25519 keys as PKCS#8 under the label `ED25519 PRIVATE KEY`, which OpenSSL 3's
 * PEM reader refuses; the bytes are plain PKCS#8, so the standard label is all that changes.
 */
export function relabelKey(pem: string): string {
  return pem.replace(/-----(BEGIN|END) ED25519 PRIVATE KEY-----/g, '-----$1 PRIVATE KEY-----');
}

function pemField(where: string, name: string, b64: string, label: string): string {
  const text = Buffer.from(b64.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (!/^-----BEGIN [A-Z0-9 ]+-----/m.test(text) || !text.includes(label)) {
    throw new InputError('talosconfig', `${where}: ${name} is not base64 of a PEM ${label}`);
  }
  return text;
}

function checkUsable(where: string, c: TalosCredentials): void {
  const cert = (name: string, pem: string) => {
    try {
      return new X509Certificate(pem);
    } catch {
      throw new InputError('talosconfig', `${where}: ${name} is not a parseable certificate`);
    }
  };
  cert('ca', c.ca);
  const crt = cert('crt', c.crt);
  let key;
  try {
    key = createPrivateKey(c.key);
  } catch {
    throw new InputError('talosconfig', `${where}: key is not a parseable private key`);
  }
  if (!crt.checkPrivateKey(key)) throw new InputError('talosconfig', `${where}: key does not belong to crt`);
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `host[:port]`, `[v6]:port` → host and port (50000 when absent), as talosctl resolves endpoints. */
export function splitEndpoint(ep: string): { host: string; port: number } {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(ep) ?? /^([^:]+)(?::(\d+))?$/.exec(ep);
  if (!m) return { host: ep, port: APID_PORT }; // a bare IPv6 address
  return { host: m[1], port: m[2] ? Number(m[2]) : APID_PORT };
}
