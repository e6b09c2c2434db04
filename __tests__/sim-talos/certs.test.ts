// The twin's certificates are what their names say, read back with Node's X509 parser: apid's
// valid one is serverAuth only and names the dialed loopback address (as Talos 1.3+ issues apid
// certificates), `wrong-san` is the same CA's for other addresses, `dual-use` is a pre-1.3
// talosconfig certificate (serverAuth + clientAuth, no SAN), and the clients are clientAuth only.
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIENT_AUTH_OID, SERVER_AUTH_OID } from '../../src/adapters/talos/api/serverIdentity.js';
import { clusterCerts } from '../../sim/talos/api/certs.js';

const read = (pem: string) => new X509Certificate(pem);

describe("the twin's Talos certificates", () => {
  const certs = clusterCerts();
  const ca = read(certs.ca.crt);

  it('every leaf is signed by the cluster CA', () => {
    for (const kp of [certs.server, certs.serverAs('wrong-san'), certs.serverAs('dual-use'), certs.client('os:admin')]) {
      expect(read(kp.crt).verify(ca.publicKey)).toBe(true);
    }
  });

  it('valid: serverAuth only, the dialed 127.0.0.1 among its IP SANs', () => {
    const c = read(certs.serverAs('valid').crt);
    expect(c.keyUsage).toEqual([SERVER_AUTH_OID]);
    expect(c.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(certs.serverAs('valid')).toBe(certs.server);
  });

  it('wrong-san: serverAuth only, for other names and addresses', () => {
    const c = read(certs.serverAs('wrong-san').crt);
    expect(c.keyUsage).toEqual([SERVER_AUTH_OID]);
    expect(c.subjectAltName).toBe('DNS:talos-sim-apid, DNS:talos-sim-apid.cluster.local, IP Address:10.255.255.1');
  });

  it('dual-use: serverAuth and clientAuth, no SAN, the role as Organization (a pre-1.3 talosconfig certificate)', () => {
    const c = read(certs.serverAs('dual-use').crt);
    expect(c.keyUsage).toEqual([SERVER_AUTH_OID, CLIENT_AUTH_OID]);
    expect(c.subjectAltName).toBeUndefined();
    expect(c.subject).toBe('O=os:admin');
  });

  it('clients: clientAuth only', () => {
    expect(read(certs.client('os:admin').crt).keyUsage).toEqual([CLIENT_AUTH_OID]);
  });

  it("a session's workers share one set per CA name through RAR_TEST_SESSION_CACHE: made once, then read", () => {
    const dir = mkdtempSync(join(tmpdir(), 'pki-cache-'));
    const saved = process.env.RAR_TEST_SESSION_CACHE;
    process.env.RAR_TEST_SESSION_CACHE = dir;
    try {
      const name = `cache-made-${process.pid}`;
      const first = clusterCerts(name);
      const file = JSON.parse(readFileSync(join(dir, `pki-${name}.json`), 'utf8'));
      expect(file.ca).toEqual(first.ca);
      expect(file.servers['wrong-san']).toEqual(first.serverAs('wrong-san'));
      // another worker (a name this one has not made) reads the file instead of running openssl: given
      // the first name's set under its own name, it returns exactly that set
      const other = `cache-read-${process.pid}`;
      writeFileSync(join(dir, `pki-${other}.json`), JSON.stringify(file));
      const read2 = clusterCerts(other);
      expect(read2.ca).toEqual(first.ca);
      expect(read2.client('os:reader')).toEqual(first.client('os:reader'));
      expect(() => read2.client('os:operator')).toThrow('no twin client certificate for role os:operator');
    } finally {
      if (saved === undefined) delete process.env.RAR_TEST_SESSION_CACHE;
      else process.env.RAR_TEST_SESSION_CACHE = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
