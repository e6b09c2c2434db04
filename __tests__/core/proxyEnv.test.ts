// The runner's proxy variables read as Go's net/http reads them (kubectl and talosctl on the same runner).
import { describe, expect, it } from 'vitest';
import { readProxyEnv } from '../../src/core/proxyEnv.js';

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
