// Is the server's certificate apid's certificate for the endpoint we dialed? The chain is verified
// against the talosconfig CA by TLS itself; these are the checks after it, on the certificate's
// facts only (no I/O), as talosctl makes them (docs/talos-api.md, "Server identity"):
// - the name: the dialed host (or the `talos-server-name` input) against the certificate's SANs,
//   by Go's crypto/x509 rules (VerifyHostname): an IP address only against IP SANs, a name only
//   against DNS SANs (case-insensitive, a wildcard only as the whole left-most label), never the CN;
// - the use: ExtKeyUsage serverAuth, and not clientAuth as well. Every apid certificate Talos 1.3+
//   issues is serverAuth only; one that is also a client certificate (a talosconfig certificate made
//   before Talos 1.3 carries both, and no SAN) is a key a client holds, so it cannot vouch for a server.
import { isIP } from 'node:net';

export const SERVER_AUTH_OID = '1.3.6.1.5.5.7.3.1';
export const CLIENT_AUTH_OID = '1.3.6.1.5.5.7.3.2';

/**
 * The TLS server name sent when the name to verify is an IP address. An IP address is no TLS server
 * name (RFC 6066; Node warns with DEP0123 when one is sent); apid serves one certificate whatever
 * the SNI, so this never changes what comes back, and the identity is checked against the IP itself.
 */
export const IP_ENDPOINT_SNI = 'talos-apid';

/** What the checks read of a certificate: the fields of Node's PeerCertificate they need. */
export interface CertificateFacts {
  subject?: { CN?: string | string[] };
  /** Node's text form: `DNS:a, IP Address:10.0.0.1, …` (absent without a SAN extension) */
  subjectaltname?: string;
  /** OIDs (absent without an ExtKeyUsage extension) */
  ext_key_usage?: string[];
}

export interface SubjectAltNames {
  dns: string[];
  /** as Node prints them (IPv6 uncompressed, upper case) */
  ips: string[];
}

/** The name the certificate must be valid for: `talos-server-name` when given, else the dialed host. */
export function expectedServerName(host: string, serverName: string | undefined): string {
  return serverName || host;
}

/** The SNI to send for that name. */
export function sniFor(name: string): string {
  return isIP(unbracket(name)) ? IP_ENDPOINT_SNI : name;
}

/** Every reason the certificate is not apid's for `name`; empty when it is. */
export function serverCertificateProblems(cert: CertificateFacts, name: string): string[] {
  const problems: string[] = [];
  const eku = cert.ext_key_usage ?? [];
  if (!eku.includes(SERVER_AUTH_OID)) problems.push('it is not a TLS server certificate (no ExtKeyUsage serverAuth)');
  if (eku.includes(CLIENT_AUTH_OID)) {
    problems.push(
      'it is a client certificate too (ExtKeyUsage serverAuth and clientAuth; Talos issues apid certificates with serverAuth only, ' +
        'and a talosconfig certificate made before Talos 1.3 carries both), so whoever holds a client key of the cluster could present it',
    );
  }
  const mismatch = hostnameMismatch(parseSubjectAltName(cert.subjectaltname), name);
  if (mismatch) problems.push(mismatch);
  return problems;
}

/** Node's `subjectaltname` text → DNS and IP entries (other kinds are not matched by talosctl). */
export function parseSubjectAltName(text: string | undefined): SubjectAltNames {
  const out: SubjectAltNames = { dns: [], ips: [] };
  if (!text) return out;
  // Node quotes (as a JSON string, commas escaped) a value that holds characters unsafe in this list.
  for (const entry of text.split(', ')) {
    const m = /^(DNS|IP Address):(.*)$/.exec(entry);
    if (!m) continue;
    const value = m[2].startsWith('"') ? unquote(m[2]) : m[2];
    if (value === undefined) continue;
    (m[1] === 'DNS' ? out.dns : out.ips).push(value);
  }
  return out;
}

/** Go's Certificate.VerifyHostname (crypto/x509/verify.go), as a reason or undefined. */
export function hostnameMismatch(sans: SubjectAltNames, host: string): string | undefined {
  const candidateIp = unbracket(host);
  const ip = canonicalIp(candidateIp);
  if (ip) {
    if (sans.ips.some((s) => canonicalIp(s) === ip)) return undefined;
    if (sans.ips.length === 0) return `it names no IP address (no IP SANs), so it cannot be valid for ${candidateIp}`;
    return `it is valid for ${sans.ips.map(showIp).join(', ')}, not ${candidateIp}`;
  }
  const candidate = lowerAscii(host);
  const validCandidate = validHostname(candidate, false);
  for (const pattern of sans.dns) {
    const ok = validCandidate && validHostname(pattern, true) ? matchHostnames(pattern, candidate) : matchExactly(pattern, candidate);
    if (ok) return undefined;
  }
  if (sans.dns.length === 0) return `it names no DNS name (no DNS SANs), so it cannot be valid for ${host}`;
  return `it is valid for ${sans.dns.join(', ')}, not ${host}`;
}

function unquote(s: string): string | undefined {
  try {
    const v: unknown = JSON.parse(s);
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

function unbracket(h: string): string {
  return h.length >= 3 && h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/** Go's validHostname: labels of [A-Za-z0-9_-] (no leading `-`), a pattern may start with the label `*`. */
function validHostname(host: string, isPattern: boolean): boolean {
  const h = isPattern ? host : host.replace(/\.$/, '');
  if (h.length === 0) return false;
  return h.split('.').every((part, i) => {
    if (part === '') return false;
    if (isPattern && i === 0 && part === '*') return true;
    return /^[A-Za-z0-9_][A-Za-z0-9_-]*$/.test(part);
  });
}

function matchExactly(a: string, b: string): boolean {
  if (a === '' || a === '.' || b === '' || b === '.') return false;
  return lowerAscii(a) === lowerAscii(b);
}

function matchHostnames(pattern: string, host: string): boolean {
  const p = lowerAscii(pattern);
  const h = lowerAscii(host.replace(/\.$/, ''));
  if (p.length === 0 || h.length === 0) return false;
  const pp = p.split('.');
  const hp = h.split('.');
  if (pp.length !== hp.length) return false;
  return pp.every((part, i) => (i === 0 && part === '*') || part === hp[i]);
}

function lowerAscii(s: string): string {
  return s.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/**
 * One spelling per address, so Node's uncompressed upper-case IPv6 and a dialed compressed one
 * compare equal, and an IPv4 address equals its IPv4-mapped IPv6 form, as Go's net.IP.Equal has it.
 */
function canonicalIp(text: string): string | undefined {
  const kind = isIP(text);
  if (kind === 0) return undefined;
  return new URL(`http://[${kind === 4 ? `::ffff:${text}` : text}]/`).hostname;
}

/** An IP SAN for a message: IPv4 (also when mapped) dotted, IPv6 compressed. */
function showIp(text: string): string {
  const c = canonicalIp(text) ?? text;
  const mapped = /^\[::ffff:([0-9a-f]+):([0-9a-f]+)\]$/.exec(c);
  if (!mapped) return c.replace(/^\[|\]$/g, '');
  const n = (parseInt(mapped[1], 16) << 16) | parseInt(mapped[2], 16);
  return [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff].join('.');
}
