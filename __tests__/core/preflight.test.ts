import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/core/config.js';
import { preflightTargets } from '../../src/core/preflight.js';

const base: Record<string, string> = { 'auth-patch': '/tmp/p.yaml', revision: 'r1' };
const reader =
  (extra: Record<string, string> = {}) =>
  (name: string) =>
    ({ ...base, ...extra })[name] ?? '';

describe('the pre-flight inputs', () => {
  it('on by default, no image, no CA', () => {
    expect(readConfig(reader())).toMatchObject({ preflight: true, preflightImage: undefined, registryCaFile: undefined });
  });
  it('preflight-image defaults to verify-image, and names the input it came from', () => {
    expect(readConfig(reader({ 'verify-image': 'ghcr.io/acme/probe:1' })).preflightImage).toMatchObject({
      input: 'verify-image',
      host: 'ghcr.io',
      repository: 'acme/probe',
      reference: '1',
    });
    expect(readConfig(reader({ 'verify-image': 'ghcr.io/acme/probe:1', 'preflight-image': 'nginx' })).preflightImage).toMatchObject({
      input: 'preflight-image',
      apiHost: 'registry-1.docker.io',
      repository: 'library/nginx',
    });
  });
  it('refuses a bad boolean and a bad reference, naming the input', () => {
    expect(() => readConfig(reader({ preflight: 'yes' }))).toThrow('input "preflight": "yes" is not true or false');
    expect(() => readConfig(reader({ 'preflight-image': 'ghcr.io/Acme/App' }))).toThrow(
      /input "preflight-image": .* is not an image reference/,
    );
    expect(() => readConfig(reader({ 'verify-image': 'a b' }))).toThrow(/input "verify-image"/);
  });
  it('off: the image is not read (nothing will be asked)', () => {
    const c = readConfig(reader({ preflight: 'false', 'preflight-image': 'ghcr.io/Acme/App' }));
    expect(c.preflight).toBe(false);
    expect(c.preflightImage).toBeUndefined();
  });
  it('registry-plain-http: hosts as the patch names them, no scheme or path; a host the patch lacks is an input error', () => {
    expect(
      readConfig(reader({ 'registry-plain-http': 'registry.local:5000,\nregistry.local:5000, mirror.lan' })).registryPlainHttp,
    ).toEqual(['registry.local:5000', 'mirror.lan']);
    expect(() => readConfig(reader({ 'registry-plain-http': 'http://registry.local:5000' }))).toThrow(
      /input "registry-plain-http": "http:\/\/registry.local:5000" is not a registry host/,
    );
    const cred = { username: 'u', password: 'p', auth: '', identitytoken: '' };
    const config = readConfig(reader({ 'registry-plain-http': 'registry.local:5000' }));
    expect(
      preflightTargets(config, [
        { host: 'registry.local:5000', fields: cred },
        { host: 'ghcr.io', fields: cred },
      ]),
    ).toEqual([
      { host: 'registry.local:5000', apiHost: 'registry.local:5000', credential: cred, image: undefined, plainHttp: true },
      { host: 'ghcr.io', apiHost: 'ghcr.io', credential: cred, image: undefined },
    ]);
    expect(() => preflightTargets(config, [{ host: 'ghcr.io', fields: cred }])).toThrow(
      'input "registry-plain-http": registry.local:5000: not a host the auth patch carries a credential for (it has: ghcr.io); name a host as the patch names it',
    );
  });
});
