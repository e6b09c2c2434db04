// The API's answers read (src/adapters/talos/api/answers.ts): Timestamp → Instant (exact, 9 fractional
// digits; the twin's ms → Timestamp beside it), and a COSI spec decoded. The talosconfig's helpers are
// talosconfig.test.ts's.
import { describe, expect, it } from 'vitest';
import { decodeSpec, timestamp } from '../../../../src/adapters/talos/api/answers.js';
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
