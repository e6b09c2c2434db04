import { describe, expect, it } from 'vitest';
import { parseCriRegistryAuth } from '../../../src/adapters/talos/criToml.js';
import { ParseError } from '../../../src/adapters/parseError.js';

// docs/talos-facts.md#t9-cri-toml-layout, byte for byte: the registry part as Talos's generator emits it
const PART = `[plugins]
  [plugins.'io.containerd.cri.v1.images']
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = '/etc/cri/conf.d/hosts'

      [plugins.'io.containerd.cri.v1.images'.registry.configs]
        [plugins.'io.containerd.cri.v1.images'.registry.configs.'ghcr.io']
          [plugins.'io.containerd.cri.v1.images'.registry.configs.'ghcr.io'.auth]
            username = 'ci-bot'
            password = 'example-token'
            auth = ''
            identitytoken = ''
`;

// ≤1.13 merged cri.toml: one `## <part> (sha256:…)` line per part, a blank line, the merged TOML with sorted keys
const MERGED = `## /etc/cri/conf.d/00-base.part (sha256:5f0c1d7e9a3b2c4d6e8f00112233445566778899aabbccddeeff001122334455)
## /etc/cri/conf.d/01-registries.part (sha256:0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9)
## /etc/cri/conf.d/20-customization.part (sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855)

version = 3

[plugins]
  [plugins.'io.containerd.cri.v1.images']
    discard_unpacked_layers = true

    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = '/etc/cri/conf.d/hosts'

      [plugins.'io.containerd.cri.v1.images'.registry.configs]
        [plugins.'io.containerd.cri.v1.images'.registry.configs.'ghcr.io']
          [plugins.'io.containerd.cri.v1.images'.registry.configs.'ghcr.io'.auth]
            auth = ''
            identitytoken = ''
            password = 'new-token'
            username = 'ci-bot'

        [plugins.'io.containerd.cri.v1.images'.registry.configs.'registry-1.docker.io']
          [plugins.'io.containerd.cri.v1.images'.registry.configs.'registry-1.docker.io'.auth]
            auth = 'dXNlcjpwYXNz'
            identitytoken = ''
            password = ''
            username = ''

        [plugins.'io.containerd.cri.v1.images'.registry.configs.'mirror.local:5000']
          [plugins.'io.containerd.cri.v1.images'.registry.configs.'mirror.local:5000'.tls]
            insecure_skip_verify = true

  [plugins.'io.containerd.cri.v1.runtime']
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
`;

describe('parseCriRegistryAuth', () => {
  it('reads the registry part', () => {
    expect(parseCriRegistryAuth(PART)).toEqual({
      'ghcr.io': { username: 'ci-bot', password: 'example-token', auth: '', identitytoken: '' },
    });
  });

  it('reads the merged ≤1.13 cri.toml (comment header, sorted keys, several hosts, a host without auth)', () => {
    expect(parseCriRegistryAuth(MERGED)).toEqual({
      'ghcr.io': { username: 'ci-bot', password: 'new-token', auth: '', identitytoken: '' },
      'registry-1.docker.io': { username: '', password: '', auth: 'dXNlcjpwYXNz', identitytoken: '' },
    });
  });

  it('fills missing fields with empty strings', () => {
    const text = `[plugins.'io.containerd.cri.v1.images'.registry.configs.'ghcr.io'.auth]\nidentitytoken = 'tok'\n`;
    expect(parseCriRegistryAuth(text)['ghcr.io']).toEqual({ username: '', password: '', auth: '', identitytoken: 'tok' });
  });

  it('accepts the containerd 1.x plugin path', () => {
    const text = `version = 2\n[plugins."io.containerd.grpc.v1.cri".registry.configs."quay.io".auth]\nusername = "u"\npassword = "p"\n`;
    expect(parseCriRegistryAuth(text)).toEqual({ 'quay.io': { username: 'u', password: 'p', auth: '', identitytoken: '' } });
  });

  it('an empty placeholder file or one without registries has no auth', () => {
    expect(parseCriRegistryAuth('')).toEqual({});
    expect(parseCriRegistryAuth('## /etc/cri/conf.d/00-base.part (sha256:00)\n\nversion = 3\n')).toEqual({});
  });

  it('refuses the same host with different auth under both plugin paths', () => {
    const text =
      `[plugins.'io.containerd.cri.v1.images'.registry.configs.'ghcr.io'.auth]\npassword = 'a'\n` +
      `[plugins.'io.containerd.grpc.v1.cri'.registry.configs.'ghcr.io'.auth]\npassword = 'b'\n`;
    expect(() => parseCriRegistryAuth(text)).toThrow(ParseError);
  });

  it('never puts file content into an error', () => {
    const secret = 'hunter2-very-secret';
    const broken = [
      `[plugins.'io.containerd.cri.v1.images'.registry.configs.'ghcr.io'.auth]\npassword = '${secret}\n`,
      `[plugins.'io.containerd.cri.v1.images'.registry.configs.'ghcr.io'.auth]\npassword = ['${secret}']\n`,
      `[plugins.'io.containerd.cri.v1.images'.registry.configs.'ghcr.io']\nauth = '${secret}'\n`,
      `plugins = '${secret}'\n`,
      `${secret}\n`,
    ];
    for (const text of broken) {
      let err: unknown;
      try {
        parseCriRegistryAuth(text);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ParseError);
      expect(String((err as Error).message)).not.toContain(secret);
      expect(String((err as Error).stack)).not.toContain(secret);
      expect(JSON.stringify(err)).not.toContain(secret);
    }
  });
});
