// The CRI files Talos renders from the machine config, byte for byte as v1.13.8 / v1.14.0-rc.1 write
// them: 01-registries.part from containerd.GenerateCRIConfig (go-toml v2, indented tables, struct
// field order) and cri.toml from toml.Merge (one `## part (sha256:…)` header line per part, a blank
// line, then the merged map re-encoded with sorted keys).
import { createHash } from 'node:crypto';
import type { AuthFields, TalosVersion } from './types.js';

type TomlValue = string | number | boolean | string[] | TomlTable;
interface TomlTable {
  [key: string]: TomlValue;
}

export const CONF_D = '/etc/cri/conf.d';
export const CRI_TOML = `${CONF_D}/cri.toml`;
export const REGISTRIES_PART = `${CONF_D}/01-registries.part`;
export const BASE_PART = `${CONF_D}/00-base.part`;
export const CUSTOMIZATION_PART = `${CONF_D}/20-customization.part`;
export const BASE_SPEC = `${CONF_D}/base-spec.json`;

/** hack/cri-plugin.part at v1.13.8, shipped as /etc/cri/conf.d/00-base.part. */
const BASE_PART_113 = `version = 3

[plugins."io.containerd.cri.v1.images"]
  discard_unpacked_layers = true
  use_local_image_pull = true

[plugins."io.containerd.cri.v1.runtime"]
  enable_cdi = true
  cdi_spec_dirs = ["/run/cdi"]

[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
  base_runtime_spec = "/etc/cri/conf.d/base-spec.json"

[plugins."io.containerd.nri.v1.nri"]
  disable = true
`;

/** hack/cri-plugin.part at v1.14.0-rc.1 (shims in their own cgroup). */
const BASE_PART_114 = `version = 3

[plugins."io.containerd.cri.v1.images"]
  discard_unpacked_layers = true
  use_local_image_pull = true

[plugins."io.containerd.cri.v1.runtime"]
  enable_cdi = true
  cdi_spec_dirs = ["/run/cdi"]

[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
  base_runtime_spec = "/etc/cri/conf.d/base-spec.json"

[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
  ShimCgroup = "/podruntime/shim"
`;

// The decoded form of the base parts (what go-toml's Decode into map[string]any yields).
function baseTable(version: TalosVersion): TomlTable {
  const runc: TomlTable = { base_runtime_spec: '/etc/cri/conf.d/base-spec.json' };
  if (version === '1.14') runc.options = { ShimCgroup: '/podruntime/shim' };
  const plugins: TomlTable = {
    'io.containerd.cri.v1.images': { discard_unpacked_layers: true, use_local_image_pull: true },
    'io.containerd.cri.v1.runtime': {
      enable_cdi: true,
      cdi_spec_dirs: ['/run/cdi'],
      containerd: { runtimes: { runc } },
    },
  };
  if (version === '1.13') plugins['io.containerd.nri.v1.nri'] = { disable: true };
  return { version: 3, plugins };
}

export function basePart(version: TalosVersion): string {
  return version === '1.14' ? BASE_PART_114 : BASE_PART_113;
}

/** docker.DefaultHost: Docker Hub's name is rewritten to its registry endpoint. */
export function criHost(host: string): string {
  return host === 'docker.io' ? 'registry-1.docker.io' : host;
}

// --- go-toml v2 encoder (SetIndentTables(true), indent "  ") -------------------------------------

function encodeKey(k: string): string {
  if (k.length === 0) return "''";
  if (/^[A-Za-z0-9_-]+$/.test(k)) return k;
  if (!k.includes("'") && !needsQuoting(k)) return `'${k}'`;
  return encodeQuoted(k);
}

function needsQuoting(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (v[i] === "'" || c === 0x0d || c === 0x0a || (c < 0x20 && c !== 0x09) || c === 0x7f) return true;
  }
  return false;
}

function encodeQuoted(v: string): string {
  let out = '"';
  for (const ch of v) {
    const c = ch.charCodeAt(0);
    if (ch === '\\') out += '\\\\';
    else if (ch === '"') out += '\\"';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c <= 0x08 || (c >= 0x0a && c <= 0x1f) || c === 0x7f) out += `\\u00${c.toString(16).toUpperCase().padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

function encodeValue(v: TomlValue): string {
  if (typeof v === 'string') return needsQuoting(v) ? encodeQuoted(v) : `'${v}'`;
  if (typeof v === 'boolean' || typeof v === 'number') return String(v);
  if (Array.isArray(v)) return `[${v.map((x) => encodeValue(x)).join(', ')}]`;
  throw new Error('tables are not values');
}

const isTable = (v: TomlValue): v is TomlTable => typeof v === 'object' && !Array.isArray(v);

/**
 * go-toml v2 table encoding: key/values first, then sub-tables; a blank line before the first
 * sub-table only when key/values were written, and between sibling sub-tables.
 * `sorted` mirrors map encoding (sorted keys); struct encoding keeps field order.
 */
function encodeTable(t: TomlTable, keyPath: string[], indent: number, sorted: boolean): string {
  const pad = (n: number) => '  '.repeat(n);
  let out = '';
  let inner = indent;
  if (keyPath.length > 0) {
    out += `${pad(indent)}[${keyPath.map(encodeKey).join('.')}]\n`;
    inner = indent + 1;
  }
  const keys = Object.keys(t);
  if (sorted) keys.sort();
  const kvs = keys.filter((k) => !isTable(t[k]));
  const tables = keys.filter((k) => isTable(t[k]));
  for (const k of kvs) out += `${pad(inner)}${encodeKey(k)} = ${encodeValue(t[k])}\n`;
  tables.forEach((k, i) => {
    if (i > 0 || kvs.length > 0) out += '\n';
    out += encodeTable(t[k] as TomlTable, [...keyPath, k], inner, sorted);
  });
  return out;
}

function authTable(a: AuthFields): TomlTable {
  // containerd.AuthConfig field order: username, password, auth, identitytoken
  return {
    username: a.username ?? '',
    password: a.password ?? '',
    auth: a.auth ?? '',
    identitytoken: a.identityToken ?? '',
  };
}

function registriesTable(auth: Record<string, AuthFields>): TomlTable {
  const configs: TomlTable = {};
  const byHost = new Map<string, AuthFields>();
  for (const host of Object.keys(auth).sort()) byHost.set(criHost(host), auth[host]);
  for (const host of [...byHost.keys()].sort()) configs[host] = { auth: authTable(byHost.get(host) as AuthFields) };
  return {
    plugins: {
      'io.containerd.cri.v1.images': {
        registry: { config_path: '/etc/cri/conf.d/hosts', configs },
      },
    },
  };
}

/** /etc/cri/conf.d/01-registries.part (and v1.14's in-memory registries part). */
export function renderRegistriesPart(auth: Record<string, AuthFields>): string {
  return encodeTable(registriesTable(auth), [], 0, false);
}

function deepMerge(dst: TomlTable, src: TomlTable): TomlTable {
  for (const [k, v] of Object.entries(src)) {
    const cur = dst[k];
    if (cur !== undefined && isTable(cur) && isTable(v)) deepMerge(cur, v);
    else if (Array.isArray(cur) && Array.isArray(v)) dst[k] = [...cur, ...v];
    else dst[k] = isTable(v) ? deepMerge({}, v) : v;
  }
  return dst;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** /etc/cri/conf.d/cri.toml: what containerd's --config imports. */
export function renderCriToml(version: TalosVersion, auth: Record<string, AuthFields>): string {
  const base = basePart(version);
  const registries = renderRegistriesPart(auth);
  const merged = deepMerge(deepMerge({}, baseTable(version)), registriesTable(auth));
  let header: string;
  if (version === '1.14') {
    header = `## file ${BASE_PART} (sha256:${sha256(base)})\n## in-memory registries (sha256:${sha256(registries)})\n`;
  } else {
    header = `## ${BASE_PART} (sha256:${sha256(base)})\n## ${REGISTRIES_PART} (sha256:${sha256(registries)})\n## ${CUSTOMIZATION_PART} (sha256:${sha256('')})\n`;
  }
  return `${header}\n${encodeTable(merged, [], 0, true)}`;
}

/**
 * v1.13's cri.toml before the machine config is loaded: CRIConfigPartsController merges the *.part
 * files there are, and at machined's start those are the image's (00-base.part, 20-customization.part),
 * without 01-registries.part, so no registry auth at all.
 */
export function renderCriTomlBeforeConfig113(): string {
  const base = basePart('1.13');
  const header = `## ${BASE_PART} (sha256:${sha256(base)})\n## ${CUSTOMIZATION_PART} (sha256:${sha256('')})\n`;
  return `${header}\n${encodeTable(deepMerge({}, baseTable('1.13')), [], 0, true)}`;
}

/** The files of /etc/cri/conf.d that depend on the machine config, per version. */
export function renderCriFiles(version: TalosVersion, auth: Record<string, AuthFields>): Map<string, string> {
  const files = new Map<string, string>();
  if (version === '1.13') files.set(REGISTRIES_PART, renderRegistriesPart(auth));
  files.set(CRI_TOML, renderCriToml(version, auth));
  return files;
}

/** A short stand-in for the OCI base runtime spec Talos renders (its content does not matter here). */
export const BASE_SPEC_CONTENT = `${JSON.stringify({
  ociVersion: '1.2.0',
  process: { user: { uid: 0, gid: 0 }, cwd: '/', capabilities: {}, rlimits: [{ type: 'RLIMIT_NOFILE', hard: 1048576, soft: 1048576 }] },
  root: { path: 'rootfs' },
  linux: { namespaces: [{ type: 'pid' }, { type: 'ipc' }, { type: 'uts' }, { type: 'mount' }, { type: 'network' }] },
})}\n`;
