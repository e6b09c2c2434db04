// Certificates for the twin's Talos API, made with the openssl CLI the way a Talos cluster has them:
// an Ed25519 CA; an apid server certificate (ExtKeyUsage serverAuth only) whose SANs name the
// machine, the loopback address the client dials included; client certificates with ExtKeyUsage
// clientAuth and the role as Organization (`os:admin`, `os:reader`), their keys PEM-labelled
// `ED25519 PRIVATE KEY` as talosctl writes them. And the certificates a server should NOT be trusted
// with (`ApiCertificate`): one of the same CA issued for another address, and a dual-use one as a
// talosconfig from before Talos 1.3 has (serverAuth + clientAuth, no SAN). Made once per process and
// per CA name, and kept for a test session (sim/sessionCache.ts): the suite's ten worker threads share
// one set instead of each running openssl two dozen times, a spawn from the large test process each.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSessionCache, writeSessionCache } from '../../sessionCache.js';

export interface KeyPair {
  /** PEM */
  crt: string;
  /** PEM, standard `PRIVATE KEY` label (what Node's TLS loads) */
  key: string;
}

/**
 * Which certificate the twin's apid presents: `valid` (the default), `wrong-san` (the cluster CA's,
 * serverAuth, for other names and addresses than the one dialed: another machine's, or the one an
 * address just moved to before Talos re-issues its certificate, TalosSim.moveApiAddress), `dual-use`
 * (the cluster CA's, serverAuth + clientAuth, no SAN: a pre-1.3 talosconfig client certificate).
 */
export type ApiCertificate = 'valid' | 'wrong-san' | 'dual-use';

export interface ClusterCerts {
  ca: KeyPair;
  /** the apid certificate (valid) */
  server: KeyPair;
  serverAs(kind: ApiCertificate): KeyPair;
  /** by role: `os:admin`, `os:reader`, … */
  client(role: string): KeyPair;
}

/** The names of the twin's apid machine other than the loopback address the client dials. */
export const OTHER_SANS = ['DNS:talos-sim-apid', 'DNS:talos-sim-apid.cluster.local', 'IP:10.255.255.1'];
/** The names in the twin's valid apid certificate: the dialed 127.0.0.1 among them. */
export const SERVER_SANS = [...OTHER_SANS, 'IP:127.0.0.1'];

/** PEM with the label Talos gives its Ed25519 keys (pkg crypto x509: `ED25519 PRIVATE KEY`). */
export function talosKeyLabel(pem: string): string {
  return pem.replace(/-----(BEGIN|END) PRIVATE KEY-----/g, '-----$1 ED25519 PRIVATE KEY-----');
}

const made = new Map<string, ClusterCerts>();

/** openssl's own config would add CA extensions to every `req -x509`: only what we ask for goes in. */
const MINIMAL_CNF = '[req]\ndistinguished_name = dn\n[dn]\n';

/** What one CA name's certificates are, as data: what the session's cache file holds. */
interface MadeCerts {
  ca: KeyPair;
  servers: Record<ApiCertificate, KeyPair>;
  clients: Record<string, KeyPair>;
}

export function clusterCerts(name = 'talos-sim'): ClusterCerts {
  const known = made.get(name);
  if (known) return known;
  const data = cachedOrMade(name);
  const certs: ClusterCerts = {
    ca: data.ca,
    server: data.servers.valid,
    serverAs: (kind) => data.servers[kind],
    client: (role) => {
      const kp = Object.hasOwn(data.clients, role) ? data.clients[role] : undefined;
      if (!kp) throw new Error(`no twin client certificate for role ${role}`);
      return kp;
    },
  };
  made.set(name, certs);
  return certs;
}

/** The session's copy when there is one; otherwise made now (and left for the session's other workers). */
function cachedOrMade(name: string): MadeCerts {
  const file = `pki-${name}.json`;
  const cached = readSessionCache(file);
  if (cached !== undefined) return JSON.parse(cached) as MadeCerts;
  const data = makeCerts(name);
  writeSessionCache(file, JSON.stringify(data));
  return data;
}

function makeCerts(name: string): MadeCerts {
  const dir = mkdtempSync(join(tmpdir(), 'talos-sim-pki-'));
  try {
    writeFileSync(join(dir, 'min.cnf'), MINIMAL_CNF);
    const file = (f: string) => readFileSync(join(dir, f), 'utf8');
    // one process per certificate: `req -x509 -newkey` makes the key and (with -CA) signs it
    const make = (base: string, subj: string, ext: string[], ca = true): KeyPair => {
      const signer = ca ? ['-CA', 'ca.crt', '-CAkey', 'ca.key', '-days', '365'] : ['-days', '3650'];
      execFileSync(
        'openssl',
        [
          'req',
          '-config',
          'min.cnf',
          '-x509',
          '-newkey',
          'ed25519',
          '-nodes',
          '-keyout',
          `${base}.key`,
          '-out',
          `${base}.crt`,
          '-subj',
          subj,
          ...signer,
          ...ext.flatMap((e) => ['-addext', e]),
        ],
        { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      return { crt: file(`${base}.crt`), key: file(`${base}.key`) };
    };
    const ca = make('ca', `/O=${name}`, ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,digitalSignature'], false);
    const leafExt = (eku: string) => [
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature',
      `extendedKeyUsage=${eku}`,
    ];
    const server = make('server', '/CN=talos-sim-apid', [...leafExt('serverAuth'), `subjectAltName=${SERVER_SANS.join(',')}`]);
    const servers: Record<ApiCertificate, KeyPair> = {
      valid: server,
      'wrong-san': make('wrong-san', '/CN=talos-sim-apid', [...leafExt('serverAuth'), `subjectAltName=${OTHER_SANS.join(',')}`]),
      // Talos < 1.3 made talosconfig certificates with its library's default ExtKeyUsage (both) and no SAN
      'dual-use': make('dual-use', '/O=os:admin', leafExt('serverAuth,clientAuth')),
    };
    const clients = new Map<string, KeyPair>([
      ['os:admin', make('admin', '/O=os:admin/CN=admin', leafExt('clientAuth'))],
      ['os:reader', make('reader', '/O=os:reader/CN=reader', leafExt('clientAuth'))],
    ]);
    return { ca, servers, clients: Object.fromEntries(clients) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A talosconfig context for these certificates (base64 PEM fields, the client key Talos-labelled). */
export function talosconfigYaml(opts: { context: string; endpoints: string[]; ca?: string; client?: KeyPair; extra?: string[] }): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return [
    `context: ${opts.context}`,
    'contexts:',
    `    ${opts.context}:`,
    '        endpoints:',
    ...opts.endpoints.map((e) => `            - ${e}`),
    `        ca: ${opts.ca ? b64(opts.ca) : '""'}`,
    `        crt: ${opts.client ? b64(opts.client.crt) : '""'}`,
    `        key: ${opts.client ? b64(talosKeyLabel(opts.client.key)) : '""'}`,
    ...(opts.extra ?? []),
    '',
  ].join('\n');
}
