// The one rule every request carrying the pre-flight's credential passes (src/core/credentialRoute.ts):
// never over plain http but to a registry the user configured as plain http, never to another origin
// but the token realm the registry's own challenge names (as containerd's token flow sends it there),
// never through a proxy in clear text.
import { describe, expect, it } from 'vitest';
import { credentialRoute, type CredentialLeg } from '../../src/core/credentialRoute.js';

const https = { registry: 'https://registry.example' };
const plain = { registry: 'http://registry.local:5000' };
const realm = (challengeFrom = https.registry): CredentialLeg => ({ to: 'realm', challengeFrom });
const u = (s: string) => new URL(s);

describe('credentialRoute', () => {
  it('the token realm the challenge names may be another https host (Docker Hub: auth.docker.io), as containerd sends it there', () => {
    expect(credentialRoute(u('https://auth.docker.io/token?service=registry.docker.io'), realm(), https)).toEqual({ ok: true });
    expect(credentialRoute(u('https://registry.example/token'), realm(), https)).toEqual({ ok: true });
  });

  it('a plain-http realm is refused, naming it (no query) and the fix, also on the same host and port', () => {
    for (const to of ['http://registry.example/token?scope=x', 'http://registry.example:443/token', 'http://auth.example/token']) {
      const v = credentialRoute(u(to), realm(), https);
      expect(v).toMatchObject({ ok: false, why: 'clear-text' });
      expect(!v.ok && v.reason).toMatch(/^the token realm http:\/\/[^?]+\/token is plain http: the credential would travel in clear text$/);
      expect(!v.ok && v.fix).toContain('X-Forwarded-Proto: https');
    }
  });

  it('a realm that is no http(s) URL is refused', () => {
    expect(credentialRoute(u('ftp://registry.example/token'), realm(), https)).toMatchObject({ ok: false, why: 'not-http' });
  });

  it('a challenge that did not come from the registry (its /v2/ redirected elsewhere): its realm gets nothing, https or not', () => {
    const v = credentialRoute(u('https://auth.example/token'), realm('https://elsewhere.example'), https);
    expect(v).toMatchObject({ ok: false, why: 'other-origin' });
    expect(!v.ok && v.reason).toBe(
      'the challenge naming the token realm https://auth.example/token came from https://elsewhere.example, not from the registry https://registry.example',
    );
  });

  it('a registry configured as plain http: its own origin over http, and nothing else over http (another port, another host, its realm elsewhere)', () => {
    expect(credentialRoute(u('http://registry.local:5000/v2/'), { to: 'registry' }, plain)).toEqual({ ok: true });
    expect(credentialRoute(u('http://registry.local:5000/token'), realm(plain.registry), plain)).toEqual({ ok: true });
    expect(credentialRoute(u('https://auth.example/token'), realm(plain.registry), plain)).toEqual({ ok: true });
    for (const to of ['http://registry.local:5001/token', 'http://auth.local/token', 'http://registry.local/token']) {
      expect(credentialRoute(u(to), realm(plain.registry), plain)).toMatchObject({ ok: false, why: 'clear-text' });
    }
  });

  it('to the registry and after a redirect: only its own origin', () => {
    expect(credentialRoute(u('https://cdn.example/v2/'), { to: 'registry' }, https)).toMatchObject({ ok: false, why: 'other-origin' });
    const redirect: CredentialLeg = { to: 'redirect', from: 'https://auth.example', status: 307 };
    expect(credentialRoute(u('https://auth.example/token2'), redirect, https)).toEqual({ ok: true });
    expect(credentialRoute(u('https://other.example/token'), redirect, https)).toMatchObject({ ok: false, why: 'other-origin' });
    expect(credentialRoute(u('http://auth.example/token'), redirect, https)).toMatchObject({ ok: false, why: 'clear-text' });
  });

  it('a proxy: https through any proxy (the TLS is end to end in the tunnel); plain http never, named without its user info', () => {
    for (const proxy of ['http://proxy.corp:3128', 'https://proxy.corp', 'socks5://proxy.corp:1080']) {
      expect(credentialRoute(u('https://auth.docker.io/token'), realm(), https, u(proxy))).toEqual({ ok: true });
    }
    const v = credentialRoute(u('http://registry.local:5000/token'), realm(plain.registry), plain, u('http://user:pw@proxy.corp:3128'));
    expect(v).toMatchObject({ ok: false, why: 'proxy' });
    expect(!v.ok && v.reason).toBe(
      'the token realm http://registry.local:5000/token is plain http and would go through the proxy http://proxy.corp:3128, which reads such a request as it is',
    );
    expect(!v.ok && v.fix).toBe('name registry.local:5000 in NO_PROXY: a plain-http registry is asked directly or not at all');
    expect(JSON.stringify(v)).not.toContain('pw');
  });
});
