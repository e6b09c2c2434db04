import { describe, expect, it } from 'vitest';
import { parseChallenges, usableChallenge } from '../../../src/adapters/registry/challenge.js';
import { registryError, tokenOf } from '../../../src/adapters/registry/tokenFlow.js';

describe('WWW-Authenticate', () => {
  it("ghcr.io's challenge", () => {
    expect(parseChallenges('Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:user/image:pull"')).toEqual([
      { scheme: 'bearer', params: { realm: 'https://ghcr.io/token', service: 'ghcr.io', scope: 'repository:user/image:pull' } },
    ]);
  });
  it("Docker Hub's challenge", () => {
    expect(usableChallenge('Bearer realm="https://auth.docker.io/token",service="registry.docker.io"')).toEqual({
      scheme: 'bearer',
      params: { realm: 'https://auth.docker.io/token', service: 'registry.docker.io' },
    });
  });
  it('Basic (a plain registry:2 with htpasswd), spaces, escapes and two challenges in one header', () => {
    expect(usableChallenge('Basic realm="Registry Realm"')).toEqual({ scheme: 'basic', params: { realm: 'Registry Realm' } });
    expect(parseChallenges('Basic realm="a \\"b\\"", Bearer realm=https://x/token , service = x')).toEqual([
      { scheme: 'basic', params: { realm: 'a "b"' } },
      { scheme: 'bearer', params: { realm: 'https://x/token', service: 'x' } },
    ]);
    // Bearer first even when Basic is named first
    expect(usableChallenge('Basic realm="r", Bearer realm="https://x/token"')?.scheme).toBe('bearer');
  });
  it('nothing usable', () => {
    expect(usableChallenge(undefined)).toBeUndefined();
    expect(usableChallenge('Negotiate abc')).toBeUndefined();
    expect(usableChallenge('Bearer service="x"')).toBeUndefined();
  });
});

describe('answers', () => {
  it('a token in token or access_token', () => {
    expect(tokenOf('{"token":"t1","access_token":"t1"}')).toBe('t1');
    expect(tokenOf('{"access_token":"t2","expires_in":300}')).toBe('t2');
    expect(tokenOf('{"expires_in":300}')).toBeUndefined();
    expect(tokenOf('<html>')).toBeUndefined();
  });
  it("an error body: distribution's, Docker Hub's token endpoint's, a text; a token document says nothing", () => {
    expect(registryError('{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":null}]}')).toBe(
      'UNAUTHORIZED authentication required',
    );
    expect(registryError('{"details":"incorrect username or password"}')).toBe('incorrect username or password');
    expect(registryError('Forbidden\nmore')).toBe('Forbidden');
    expect(registryError('{"token":"secret-token"}')).toBeUndefined();
    expect(registryError('')).toBeUndefined();
  });
});
