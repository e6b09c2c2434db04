// The talosconfig read as talosctl reads it (src/adapters/talos/api/talosconfig.ts): an endpoint with
// Talos's default port, and the key label Node's TLS takes.
import { describe, expect, it } from 'vitest';
import { relabelKey, splitEndpoint } from '../../../../src/adapters/talos/api/talosconfig.js';

describe('talosconfig', () => {
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
