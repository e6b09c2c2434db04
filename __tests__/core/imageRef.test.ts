import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.js';
import { parseImageRef, refLabel } from '../../src/core/imageRef.js';
import { preflightTargets } from '../../src/core/preflight.js';

const cred = { username: 'u', password: 'p', auth: '', identitytoken: '' };

describe('parseImageRef', () => {
  it.each([
    ['ghcr.io/org/app:tag', 'ghcr.io', 'ghcr.io', 'org/app', 'tag'],
    ['ghcr.io/org/app', 'ghcr.io', 'ghcr.io', 'org/app', 'latest'],
    ['nginx', 'docker.io', 'registry-1.docker.io', 'library/nginx', 'latest'],
    ['acme/app:1.2', 'docker.io', 'registry-1.docker.io', 'acme/app', '1.2'],
    ['docker.io/nginx:1.27', 'docker.io', 'registry-1.docker.io', 'library/nginx', '1.27'],
    ['index.docker.io/library/nginx', 'docker.io', 'registry-1.docker.io', 'library/nginx', 'latest'],
    ['127.0.0.1:5000/org/app:v1', '127.0.0.1:5000', '127.0.0.1:5000', 'org/app', 'v1'],
    ['localhost/app', 'localhost', 'localhost', 'app', 'latest'],
    [`ghcr.io/org/app:1@sha256:${'a'.repeat(64)}`, 'ghcr.io', 'ghcr.io', 'org/app', `sha256:${'a'.repeat(64)}`],
  ])('%s', (text, host, apiHost, repository, reference) => {
    expect(parseImageRef('preflight-image', text)).toMatchObject({ host, apiHost, repository, reference });
  });

  it.each([
    '',
    'https://ghcr.io/org/app',
    'ghcr.io/Org/app',
    'ghcr.io/org/app:',
    'ghcr.io/org/app@sha256:abc',
    'ghcr.io/',
    'a b',
    'ghcr.io/org//app',
    'bad_host.io:x/a',
  ])('refuses %j naming the input', (text) => {
    expect(() => parseImageRef('preflight-image', text)).toThrow(InputError);
    expect(() => parseImageRef('preflight-image', text)).toThrow(/input "preflight-image": .* is not an image reference/);
  });

  it('labels a tag and a digest as asked', () => {
    expect(refLabel({ repository: 'org/app', reference: 'v1' })).toBe('org/app:v1');
    expect(refLabel({ repository: 'org/app', reference: `sha256:${'b'.repeat(64)}` })).toBe(`org/app@sha256:${'b'.repeat(64)}`);
  });
});

describe('preflightTargets', () => {
  const image = { ...parseImageRef('preflight-image', 'nginx'), input: 'preflight-image' as const };
  it('asks every host; the image only on its own (docker.io and registry-1.docker.io are one)', () => {
    const t = preflightTargets({ preflight: true, preflightImage: image }, [
      { host: 'ghcr.io', fields: cred },
      { host: 'registry-1.docker.io', fields: cred },
    ]);
    expect(t.map((x) => [x.host, x.apiHost, x.image?.repository])).toEqual([
      ['ghcr.io', 'ghcr.io', undefined],
      ['registry-1.docker.io', 'registry-1.docker.io', 'library/nginx'],
    ]);
  });
  it('refuses an image on a host the patch has no credential for, naming the input it came from', () => {
    const v = { ...parseImageRef('verify-image', 'quay.io/org/app'), input: 'verify-image' as const };
    expect(() => preflightTargets({ preflight: true, preflightImage: v }, [{ host: 'ghcr.io', fields: cred }])).toThrow(
      /input "verify-image": "quay.io\/org\/app" is on quay.io, a host the auth patch carries no credential for \(it has: ghcr.io\)/,
    );
  });
  it('asks nothing when off', () => {
    expect(preflightTargets({ preflight: false }, [{ host: 'ghcr.io', fields: cred }])).toEqual([]);
  });
});
