// The runner's proxy variables read as Go's net/http reads them (kubectl and talosctl on the same runner).
import { describe, expect, it } from 'vitest';
import { proxyFor, readProxyEnv } from '../../src/core/proxyEnv.js';

describe('readProxyEnv', () => {
  it('none set: no proxy', () => {
    expect(readProxyEnv({})).toEqual({ httpProxy: '', httpsProxy: '', noProxy: '' });
  });
  it('the upper-case name first, the lower-case one when it is unset or empty', () => {
    expect(readProxyEnv({ HTTPS_PROXY: 'http://up:1', https_proxy: 'http://low:1', no_proxy: '.corp', http_proxy: 'http://h:2' })).toEqual({
      httpProxy: 'http://h:2',
      httpsProxy: 'http://up:1',
      noProxy: '.corp',
    });
    expect(readProxyEnv({ HTTPS_PROXY: '', https_proxy: 'http://low:1', NO_PROXY: 'a,b' })).toMatchObject({
      httpsProxy: 'http://low:1',
      noProxy: 'a,b',
    });
  });
  it('a proxy without a scheme is an http:// one (httpproxy parseProxy)', () => {
    expect(readProxyEnv({ HTTPS_PROXY: 'proxy.corp:3128' }).httpsProxy).toBe('http://proxy.corp:3128');
    expect(readProxyEnv({ HTTPS_PROXY: 'user:pw@proxy.corp:3128' }).httpsProxy).toBe('http://user:pw@proxy.corp:3128');
  });
  it('a value that is no proxy URL: an error naming the variable, never its value (it may carry a password)', () => {
    expect(() => readProxyEnv({ HTTPS_PROXY: 'ftp://user:secret@proxy:21' })).toThrow(
      /input "HTTPS_PROXY": the proxy's scheme ftp: is not http, https or socks5/,
    );
    expect(() => readProxyEnv({ http_proxy: 'http://[::1' })).toThrow(/^input "HTTP_PROXY": is not a proxy URL/);
    try {
      readProxyEnv({ HTTPS_PROXY: 'ftp://user:secret@proxy:21' });
    } catch (e) {
      expect(String(e)).not.toContain('secret');
    }
  });
});

describe('proxyFor: the proxy of one request, chosen as undici 7.30 EnvHttpProxyAgent chooses', () => {
  const env = { httpProxy: 'http://h:1', httpsProxy: 'http://s:2', noProxy: '' };
  const via = (url: string, over: Partial<typeof env> = {}) => proxyFor(new URL(url), { ...env, ...over });
  it('https through HTTPS_PROXY, else HTTP_PROXY; http through HTTP_PROXY only', () => {
    expect(via('https://ghcr.io/v2/')).toBe('http://s:2');
    expect(via('https://ghcr.io/v2/', { httpsProxy: '' })).toBe('http://h:1');
    expect(via('http://registry.local:5000/v2/')).toBe('http://h:1');
    expect(via('http://registry.local:5000/v2/', { httpProxy: '' })).toBeUndefined();
    expect(proxyFor(new URL('https://ghcr.io/'), undefined)).toBeUndefined();
  });
  it('NO_PROXY: `*`, a host and its subdomains (`.corp`, `*.corp` alike), `:port` for that port only, commas or spaces', () => {
    expect(via('https://ghcr.io/', { noProxy: '*' })).toBeUndefined();
    for (const noProxy of ['corp.example', '.corp.example', '*.corp.example', 'a.b, corp.example', 'a.b corp.example']) {
      expect(via('https://reg.corp.example/', { noProxy })).toBeUndefined();
      expect(via('https://corp.example/', { noProxy })).toBeUndefined();
      expect(via('https://notcorp.example/', { noProxy })).toBe('http://s:2');
    }
    expect(via('https://reg.corp:8443/', { noProxy: 'reg.corp:8443' })).toBeUndefined();
    expect(via('https://reg.corp/', { noProxy: 'reg.corp:8443' })).toBe('http://s:2');
    expect(via('https://reg.corp/', { noProxy: 'reg.corp:443' })).toBeUndefined();
    expect(via('http://registry.local:5000/', { noProxy: 'REGISTRY.local:5000' })).toBeUndefined();
  });
  it("a loopback address goes through the proxy unless NO_PROXY names it (Go's would not)", () => {
    expect(via('https://127.0.0.1:5000/')).toBe('http://s:2');
    expect(via('https://127.0.0.1:5000/', { noProxy: '127.0.0.1' })).toBeUndefined();
  });
});
