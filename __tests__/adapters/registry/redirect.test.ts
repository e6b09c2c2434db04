// The redirect rules of the pre-flight's HTTP client (src/adapters/registry/redirect.ts): the Fetch
// standard's and Go's, the credential kept with its origin, a downgrade to http refused while one is
// attached, a refresh-token body never re-sent to another origin.
import { describe, expect, it } from 'vitest';
import { redirectStep, type Hop } from '../../../src/adapters/registry/redirect.js';

const post: Hop = {
  method: 'POST',
  url: new URL('https://auth.example/token'),
  headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'x' },
  body: 'grant_type=refresh_token&refresh_token=SECRET',
};
const get = (headers: Record<string, string> = { authorization: 'Basic QQ==' }): Hop => ({
  method: 'GET',
  url: new URL('https://reg.example/token?scope=a'),
  headers,
});

/** the registry the check is for: https, as every host but a `registry-plain-http` one */
const S = { registry: 'https://reg.example' };

describe('redirectStep', () => {
  it('not a redirect, or one without a Location: the answer stands', () => {
    expect(redirectStep(get(), 200, '/x', S)).toEqual({ kind: 'final' });
    expect(redirectStep(get(), 304, '/x', S)).toEqual({ kind: 'final' });
    expect(redirectStep(get(), 302, undefined, S)).toEqual({ kind: 'final' });
  });

  it.each([301, 302, 303])('%i of a POST: a GET without the body or its headers (here to another host: no body to leak)', (status) => {
    const step = redirectStep(post, status, 'https://cdn.example/token', S);
    expect(step).toEqual({
      kind: 'follow',
      next: { method: 'GET', url: new URL('https://cdn.example/token'), headers: { 'user-agent': 'x' }, body: undefined },
    });
  });

  it('307/308 of a POST keep method and body on the same origin, and are refused to another origin (the body is the refresh token)', () => {
    for (const status of [307, 308]) {
      expect(redirectStep(post, status, '/token2', S)).toEqual({
        kind: 'follow',
        next: { ...post, url: new URL('https://auth.example/token2') },
      });
      const refused = redirectStep(post, status, 'https://evil.example/token', S);
      expect(refused).toMatchObject({ kind: 'withhold' });
      expect(refused.kind === 'withhold' && refused.reason).toContain('body carries a credential');
      expect(JSON.stringify(refused)).not.toContain('SECRET');
    }
  });

  it('303 of a HEAD stays a HEAD; 301/302 of a GET stay GETs', () => {
    expect(redirectStep({ ...get(), method: 'HEAD' }, 303, '/m', S)).toMatchObject({ kind: 'follow', next: { method: 'HEAD' } });
    expect(redirectStep(get(), 301, '/m', S)).toMatchObject({ kind: 'follow', next: { method: 'GET' } });
  });

  it('the Authorization header stays on the same origin and is dropped on any change of host, port or scheme', () => {
    expect(redirectStep(get(), 307, '/other', S)).toMatchObject({ kind: 'follow', next: { headers: { authorization: 'Basic QQ==' } } });
    // the default port written out is the same origin
    expect(redirectStep(get(), 302, 'https://reg.example:443/x', S)).toMatchObject({ next: { headers: { authorization: 'Basic QQ==' } } });
    for (const to of ['https://cdn.example/x', 'https://reg.example:8443/x', 'https://sub.reg.example/x']) {
      const step = redirectStep(get(), 302, to, S);
      expect(step.kind).toBe('follow');
      expect(step.kind === 'follow' && step.next.headers).toEqual({});
    }
  });

  it('https → http is withheld while a credential is attached (a header or a body), even on the same host; followed without one', () => {
    for (const hop of [get(), post]) {
      const step = redirectStep(hop, 302, `http://${hop.url.host}/token`, S);
      expect(step).toMatchObject({ kind: 'withhold' });
      expect(step.kind === 'withhold' && step.reason).toMatch(
        /^the 302 redirect from https:\/\/\S+ to http:\/\/\S+\/token is plain http: the credential would travel in clear text$/,
      );
      expect(step.kind === 'withhold' && step.fix).toContain('must not redirect a request carrying a credential to plain http');
    }
    expect(redirectStep(get({}), 302, 'http://reg.example/v2/', S)).toMatchObject({
      kind: 'follow',
      next: { url: new URL('http://reg.example/v2/') },
    });
  });

  it('a registry the user configured as plain http (registry-plain-http): its own origin keeps the credential over http, nothing else does', () => {
    const plain = { registry: 'http://registry.local:5000' };
    const hop = get();
    const onPlain = { ...hop, url: new URL('http://registry.local:5000/token') };
    expect(redirectStep(onPlain, 307, '/token2', plain)).toMatchObject({
      kind: 'follow',
      next: { url: new URL('http://registry.local:5000/token2'), headers: { authorization: 'Basic QQ==' } },
    });
    // another plain-http origin, even the same host on another port: withheld
    expect(redirectStep(onPlain, 302, 'http://registry.local:5001/token', plain)).toMatchObject({ kind: 'withhold' });
    expect(redirectStep(onPlain, 302, 'http://auth.local/token', plain)).toMatchObject({ kind: 'withhold' });
  });

  it('a Location that is not an http(s) URL is refused', () => {
    expect(redirectStep(get(), 302, 'file:///etc/passwd', S)).toMatchObject({ kind: 'refuse' });
    expect(redirectStep(get(), 302, 'http://[::1', S)).toMatchObject({ kind: 'refuse' });
  });
});
