// Pure conversions of the API path: Timestamp → Instant (exact, 9 fractional digits), the twin's
// ms → Timestamp, and endpoint parsing with Talos's default port.
import { describe, expect, it } from 'vitest';
import { decodeSpec, timestamp } from '../../../../src/adapters/talos/api/answers.js';
import { relabelKey, splitEndpoint } from '../../../../src/adapters/talos/api/talosconfig.js';
import { toTimestamp } from '../../../../sim/talos/api/server.js';

describe('timestamp', () => {
  it('keeps the nanoseconds: exact bounds, RFC 3339 with 9 digits', () => {
    expect(timestamp({ seconds: '1795263034', nanos: 976125000 })).toEqual({
      earliestMs: 1795263034976.125,
      latestMs: 1795263034976.125,
      via: 'api',
      text: '2026-11-21T12:10:34.976125000Z',
    });
    expect(timestamp({ seconds: '1795263034', nanos: 7 })?.text).toBe('2026-11-21T12:10:34.000000007Z');
  });

  it('an unset Timestamp is no instant', () => {
    expect(timestamp(undefined)).toBeUndefined();
    expect(timestamp({ seconds: '0', nanos: 0 })).toBeUndefined();
  });

  it('the twin sends its millisecond instants exactly', () => {
    expect(toTimestamp(1795263034976)).toEqual({ seconds: 1795263034, nanos: 976000000 });
    expect(toTimestamp(1795263034976.125)).toEqual({ seconds: 1795263034, nanos: 976125000 });
    expect(toTimestamp(1795263035000 - 1e-7)).toEqual({ seconds: 1795263035, nanos: 0 });
  });
});

describe('talosconfig helpers', () => {
  it('endpoints default to port 50000, IPv6 in brackets', () => {
    expect(splitEndpoint('10.0.0.1')).toEqual({ host: '10.0.0.1', port: 50000 });
    expect(splitEndpoint('cp.example.com:6443')).toEqual({ host: 'cp.example.com', port: 6443 });
    expect(splitEndpoint('[fd00::1]:50001')).toEqual({ host: 'fd00::1', port: 50001 });
    expect(splitEndpoint('fd00::1')).toEqual({ host: 'fd00::1', port: 50000 });
  });

  it('relabels only the Talos Ed25519 key label', () => {
    expect(relabelKey('-----BEGIN ED25519 PRIVATE KEY-----\nMC4=\n-----END ED25519 PRIVATE KEY-----\n')).toBe(
      '-----BEGIN PRIVATE KEY-----\nMC4=\n-----END PRIVATE KEY-----\n',
    );
    const ec = '-----BEGIN EC PRIVATE KEY-----\nMHc=\n-----END EC PRIVATE KEY-----\n';
    expect(relabelKey(ec)).toBe(ec);
  });
});

describe('COSI spec decoding', () => {
  it('reads yaml_spec (Go yaml tags) when a server sends no proto_spec', () => {
    expect(
      decodeSpec('n', 'talos.resource.definitions.files.EtcFileStatusSpec', {
        proto_spec: Buffer.alloc(0),
        yaml_spec: 'specVersion: "7"\n',
      }),
    ).toMatchObject({ spec_version: '7' });
    expect(
      decodeSpec('n', 'talos.resource.definitions.runtime.ServicePIDSpec', { yaml_spec: 'pid: 2338\nmountNamespace: mnt:[4026532123]\n' }),
    ).toMatchObject({ pid: 2338, mount_namespace: 'mnt:[4026532123]' });
  });

  it('prefers proto_spec', () => {
    const bytes = Buffer.from([0x08, 0x2a]); // field 1 (pid), varint 42
    expect(
      decodeSpec('n', 'talos.resource.definitions.runtime.ServicePIDSpec', { proto_spec: bytes, yaml_spec: 'pid: 1\n' }),
    ).toMatchObject({ pid: 42 });
  });

  it('an unparseable spec is a classified failure naming the node', () => {
    expect(() => decodeSpec('10.0.0.5', 'talos.resource.definitions.runtime.ServicePIDSpec', { yaml_spec: 'pid: [1\n' })).toThrow(
      expect.objectContaining({ kind: 'unparseable', node: '10.0.0.5' }),
    );
  });
});
