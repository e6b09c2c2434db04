// The secrets of a machine config, as Talos itself defines them: the fields its config documents'
// own `Redact(replacement)` replaces (pkg/machinery/config, the v1alpha1 document and every
// multi-doc document implementing config.SecretDocument, as of v1.11–v1.14; the list and where each
// entry comes from: docs/secrets.md). Only these are registered for masking: a value that merely sits
// under a secret-looking key (a certSAN, a kubelet flag's "true", a registry username, a CA's
// certificate) is no secret, and masking it would wreck every text that happens to contain it.
// The registry credentials keep every derived form (core/redact.ts secretForms). Pure (no I/O);
// an error never quotes the config's text.
import { parseAllDocuments } from 'yaml';
import { secretForms } from '../../../core/redact.js';
import { MachineConfigError } from './documents.js';
import { stringOrEmpty } from '../../../core/text.js';

type Tree = Record<string, unknown>;
const isObj = (v: unknown): v is Tree => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Where a secret sits in a document, as YAML keys joined by `.`: `[]` after a key means every item of
 * the list under it, `*` any key of a map, `**` every map below (through lists too), and
 * `?jointoken` after a key the value of that query parameter of the URL under it.
 */
export type SecretPath = string;

/** The v1alpha1 document's secret fields (v1alpha1_provider.go `(*Config).Redact`), the registry auth maps aside. */
export const V1ALPHA1_SECRETS: readonly SecretPath[] = [
  'machine.token',
  'machine.ca.key',
  'machine.registries.config.*.tls.clientIdentity.key',
  'machine.network.interfaces[].wireguard.privateKey',
  'machine.network.interfaces[].vip.equinixMetal.apiToken',
  'machine.network.interfaces[].vip.hcloud.apiToken',
  'machine.network.interfaces[].vlans[].vip.equinixMetal.apiToken',
  'machine.network.interfaces[].vlans[].vip.hcloud.apiToken',
  'machine.systemDiskEncryption.state.keys[].static.passphrase',
  'machine.systemDiskEncryption.ephemeral.keys[].static.passphrase',
  'cluster.secret',
  'cluster.token',
  'cluster.aescbcEncryptionSecret',
  'cluster.secretboxEncryptionSecret',
  'cluster.serviceAccount.key',
  'cluster.ca.key',
  'cluster.aggregatorCA.key',
  'cluster.etcd.ca.key',
];

/** The multi-doc documents' secret fields by kind (each kind's `Redact`), the RegistryAuthConfig credential aside. */
export const DOCUMENT_SECRETS: Readonly<Record<string, readonly SecretPath[]>> = {
  RegistryTLSConfig: ['clientIdentity.key'],
  WireguardConfig: ['privateKey', 'peers[].presharedKey'],
  HCloudVIPConfig: ['apiToken'],
  SideroLinkConfig: ['apiUrl?jointoken', 'uniqueToken'],
  VolumeConfig: ['encryption.keys[].static.passphrase'],
  UserVolumeConfig: ['encryption.keys[].static.passphrase'],
  RawVolumeConfig: ['encryption.keys[].static.passphrase'],
  SwapVolumeConfig: ['encryption.keys[].static.passphrase'],
  DiscoveryIdentityConfig: ['clusterSecret'],
  KubeAPIServerCAConfig: ['issuingCA.key'],
  KubeAggregatorCAConfig: ['issuingCA.key'],
  KubeServiceAccountConfig: ['issuer.privateKey'],
  KubeEtcdEncryptionConfig: ['config.**.secret'],
};

/** The strings at `path` in `v` (never a number, a boolean or a map). */
function valuesAt(v: unknown, path: SecretPath): string[] {
  const out: string[] = [];
  const walk = (node: unknown, parts: string[]): void => {
    if (parts.length === 0) {
      if (typeof node === 'string' && node) out.push(node);
      return;
    }
    const [part, ...rest] = parts;
    if (part === '**') {
      // this map and every map below it, through lists too (KubeEtcdEncryptionConfig's Redact)
      walk(node, rest);
      const below = isObj(node) ? Object.values(node) : Array.isArray(node) ? node : [];
      for (const child of below) if (isObj(child) || Array.isArray(child)) walk(child, parts);
      return;
    }
    if (!isObj(node)) return;
    const query = /^(.+)\?(\w+)$/.exec(part);
    if (query) {
      const url = node[query[1]];
      if (typeof url !== 'string') return;
      try {
        const token = new URL(url).searchParams.get(query[2]);
        if (token) out.push(token, encodeURIComponent(token));
      } catch {
        // not a URL: no token in it
      }
      return;
    }
    const key = part.endsWith('[]') ? part.slice(0, -2) : part;
    const children = key === '*' ? Object.values(node) : [node[key]];
    for (const child of children) {
      if (part.endsWith('[]')) {
        if (Array.isArray(child)) for (const item of child) walk(item, rest);
      } else walk(child, rest);
    }
  };
  walk(v, path.split('.'));
  return out;
}

// Talos serves the config it marshalled: a secret is a string there (Go quotes "1234" and "true").
/** A registry auth map or RegistryAuthConfig document → the fields secretForms takes (the username only to form `user:password`). */
function authFields(a: Tree) {
  return {
    username: stringOrEmpty(a.username),
    password: stringOrEmpty(a.password),
    auth: stringOrEmpty(a.auth),
    identitytoken: stringOrEmpty(a.identityToken),
  };
}

/**
 * The values of a machine config to mask wherever text leaves the action: Talos's secret fields of
 * every document, and every form of every registry credential in it (the legacy auth maps and the
 * RegistryAuthConfig documents). The config holds every credential of the cluster, not only the one
 * this run rolls. Throws MachineConfigError (a position, never the text) when it is not YAML.
 */
export function configSecrets(configText: string): string[] {
  const known = secretsOf.get(configText);
  if (known !== undefined) return [...known];
  const found = secretsIn(configText);
  // a few texts are read again and again in one run: the config before the patch, the patched one
  // that is sent, and the same text read back after the apply (each a full YAML parse, for the same answer)
  if (secretsOf.size >= SECRETS_KEPT) secretsOf.delete(secretsOf.keys().next().value as string);
  secretsOf.set(configText, found);
  return [...found];
}

/** configSecrets' answers for the last texts it read (a pure function of the text; errors are not kept). */
const secretsOf = new Map<string, readonly string[]>();
const SECRETS_KEPT = 16;

function secretsIn(configText: string): string[] {
  const out = new Set<string>();
  const auths: Array<ReturnType<typeof authFields>> = [];
  for (const [i, doc] of parseAllDocuments(configText).entries()) {
    if (doc.errors.length > 0) {
      const pos = doc.errors[0].linePos?.[0];
      throw new MachineConfigError(
        `the node's machine config document ${i + 1} is not valid YAML${pos ? ` (line ${pos.line}, column ${pos.col})` : ''}`,
        `document ${i + 1}`,
      );
    }
    const v = doc.toJS() as unknown;
    if (!isObj(v)) continue;
    if (v.kind === undefined) {
      for (const path of V1ALPHA1_SECRETS) for (const s of valuesAt(v, path)) out.add(s);
      const config = isObj(v.machine) && isObj(v.machine.registries) ? v.machine.registries.config : undefined;
      if (isObj(config)) for (const e of Object.values(config)) if (isObj(e) && isObj(e.auth)) auths.push(authFields(e.auth));
      continue;
    }
    if (v.kind === 'RegistryAuthConfig') auths.push(authFields(v));
    const paths = typeof v.kind === 'string' && Object.hasOwn(DOCUMENT_SECRETS, v.kind) ? DOCUMENT_SECRETS[v.kind] : [];
    for (const path of paths) for (const s of valuesAt(v, path)) out.add(s);
  }
  for (const f of secretForms(auths)) out.add(f);
  return [...out];
}
