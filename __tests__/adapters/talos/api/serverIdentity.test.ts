// The server-certificate checks on plain certificate facts: Go's VerifyHostname rules (what talosctl
// applies to the endpoint's host) and the ExtKeyUsage rules of an apid certificate.
import { describe, expect, it } from 'vitest';
import {
  CLIENT_AUTH_OID,
  IP_ENDPOINT_SNI,
  SERVER_AUTH_OID,
  expectedServerName,
  hostnameMismatch,
  parseSubjectAltName,
  serverCertificateProblems,
  sniFor,
} from '../../../../src/adapters/talos/api/serverIdentity.js';

const sans = (text: string) => parseSubjectAltName(text);
const ok = (text: string, host: string) => hostnameMismatch(sans(text), host) === undefined;

describe('the name, by Go crypto/x509 VerifyHostname', () => {
  it('an IP address matches only IP SANs, whatever the spelling (Node prints IPv6 uncompressed, upper case)', () => {
    expect(ok('DNS:talos-1, IP Address:10.0.0.5', '10.0.0.5')).toBe(true);
    expect(ok('IP Address:FD00:0:0:0:0:0:0:1', 'fd00::1')).toBe(true);
    expect(ok('IP Address:FD00:0:0:0:0:0:0:1', '[fd00::1]')).toBe(true);
    // IPv4 and its IPv4-mapped IPv6 form are the same address for net.IP.Equal
    expect(ok('IP Address:0:0:0:0:0:FFFF:A00:5', '10.0.0.5')).toBe(true);
    expect(ok('IP Address:10.0.0.5', '::ffff:10.0.0.5')).toBe(true);
    // a DNS SAN spelling the address does not count for an IP
    expect(hostnameMismatch(sans('DNS:10.0.0.5'), '10.0.0.5')).toBe(
      'it names no IP address (no IP SANs), so it cannot be valid for 10.0.0.5',
    );
    expect(hostnameMismatch(sans('IP Address:10.0.0.6, IP Address:0:0:0:0:0:FFFF:A00:7, DNS:x'), '10.0.0.5')).toBe(
      'it is valid for 10.0.0.6, 10.0.0.7, not 10.0.0.5',
    );
  });

  it('a name matches only DNS SANs: case-insensitive, a trailing dot allowed, never an IP SAN', () => {
    expect(ok('DNS:Talos.Example.com', 'talos.example.COM')).toBe(true);
    expect(ok('DNS:talos.example.com', 'talos.example.com.')).toBe(true);
    expect(ok('IP Address:10.0.0.5', 'talos.example.com')).toBe(false);
    expect(hostnameMismatch(sans('DNS:a.example.com, DNS:b.example.com'), 'c.example.com')).toBe(
      'it is valid for a.example.com, b.example.com, not c.example.com',
    );
  });

  it('a wildcard stands for exactly the whole left-most label', () => {
    expect(ok('DNS:*.example.com', 'apid.example.com')).toBe(true);
    expect(ok('DNS:*.example.com', 'example.com')).toBe(false);
    expect(ok('DNS:*.example.com', 'a.b.example.com')).toBe(false);
    // a partial wildcard is no valid pattern: only an exact (literal) match would do
    expect(ok('DNS:ap*.example.com', 'apid.example.com')).toBe(false);
    expect(ok('DNS:a.*.example.com', 'a.b.example.com')).toBe(false);
  });

  it('the subject CN is never read (Go ignores the legacy Common Name)', () => {
    const cert = { subject: { CN: 'apid.example.com' }, ext_key_usage: [SERVER_AUTH_OID] };
    expect(serverCertificateProblems(cert, 'apid.example.com')).toEqual([
      'it names no DNS name (no DNS SANs), so it cannot be valid for apid.example.com',
    ]);
  });
});

describe('the use', () => {
  const names = 'IP Address:10.0.0.5';
  it('apid: serverAuth only', () => {
    expect(serverCertificateProblems({ subjectaltname: names, ext_key_usage: [SERVER_AUTH_OID] }, '10.0.0.5')).toEqual([]);
  });

  it('no serverAuth, or clientAuth as well, is refused', () => {
    expect(serverCertificateProblems({ subjectaltname: names }, '10.0.0.5')).toEqual([
      'it is not a TLS server certificate (no ExtKeyUsage serverAuth)',
    ]);
    const both = serverCertificateProblems({ subjectaltname: names, ext_key_usage: [SERVER_AUTH_OID, CLIENT_AUTH_OID] }, '10.0.0.5');
    expect(both).toHaveLength(1);
    expect(both[0]).toMatch(/^it is a client certificate too \(ExtKeyUsage serverAuth and clientAuth;/);
    expect(serverCertificateProblems({ subjectaltname: names, ext_key_usage: [CLIENT_AUTH_OID] }, '10.0.0.5')).toHaveLength(2);
  });
});

describe("Node's subjectaltname text", () => {
  it('DNS and IP entries; other kinds ignored; a quoted (JSON) value unquoted', () => {
    expect(parseSubjectAltName('DNS:a, IP Address:10.0.0.1, URI:spiffe://x, DNS:"we\\u002cird", email:x@y')).toEqual({
      dns: ['a', 'we,ird'],
      ips: ['10.0.0.1'],
    });
    expect(parseSubjectAltName(undefined)).toEqual({ dns: [], ips: [] });
  });
});

describe('the name checked and the SNI sent', () => {
  it('talos-server-name when given, else the dialed host; an IP is checked as such but never sent as SNI', () => {
    expect(expectedServerName('10.0.0.5', undefined)).toBe('10.0.0.5');
    expect(expectedServerName('10.0.0.5', 'apid.example.com')).toBe('apid.example.com');
    expect(sniFor('10.0.0.5')).toBe(IP_ENDPOINT_SNI);
    expect(sniFor('fd00::1')).toBe(IP_ENDPOINT_SNI);
    expect(sniFor('[fd00::1]')).toBe(IP_ENDPOINT_SNI);
    expect(sniFor('apid.example.com')).toBe('apid.example.com');
  });
});
