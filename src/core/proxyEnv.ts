// The runner's proxy settings, read as Go's net/http reads them (golang.org/x/net/http/httpproxy
// `FromEnvironment`, `parseProxy`), so the pre-flight check goes the way kubectl and talosctl go on the
// same runner: HTTPS_PROXY (else https_proxy), HTTP_PROXY (else http_proxy), NO_PROXY (else no_proxy),
// the upper-case name first; a proxy written without a scheme (`proxy.corp:3128`) is an http:// one.
// Pure: the shell hands it the environment (src/action/inputs.ts). Which URL goes through which proxy
// is undici's EnvHttpProxyAgent's (src/adapters/registry/https.ts, docs/preflight.md "Proxies").
import { InputError } from './errors.js';

export interface ProxyEnv {
  /** '' when unset */
  httpProxy: string;
  httpsProxy: string;
  noProxy: string;
}

export function readProxyEnv(env: Readonly<Record<string, string | undefined>>): ProxyEnv {
  const any = (upper: string, lower: string) => env[upper] || env[lower] || '';
  return {
    httpProxy: proxyUrl('HTTP_PROXY', any('HTTP_PROXY', 'http_proxy')),
    httpsProxy: proxyUrl('HTTPS_PROXY', any('HTTPS_PROXY', 'https_proxy')),
    noProxy: any('NO_PROXY', 'no_proxy'),
  };
}

/** The proxy as a URL with a scheme; the error names the variable, never its value (it may carry a password). */
function proxyUrl(name: string, value: string): string {
  if (!value) return '';
  for (const candidate of value.includes('://') ? [value] : [value, `http://${value}`]) {
    let url: URL;
    try {
      url = new URL(candidate);
    } catch {
      continue;
    }
    if (!url.host) continue;
    if (!['http:', 'https:', 'socks5:', 'socks:'].includes(url.protocol)) {
      throw new InputError(name, `the proxy's scheme ${url.protocol} is not http, https or socks5`);
    }
    return candidate;
  }
  throw new InputError(name, 'is not a proxy URL (http://host:port)');
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

/**
 * The proxy a request to `url` goes through, undefined: straight to it. Chosen as undici's
 * EnvHttpProxyAgent chooses (lib/dispatcher/env-http-proxy-agent.js, 7.30: `#getProxyAgentForUrl`,
 * `#shouldProxy`, `#parseNoProxy`), so the route the client takes and the one the credential rule
 * (core/credentialRoute.ts) judges are one choice, made here: an https URL through HTTPS_PROXY, else
 * HTTP_PROXY; an http URL through HTTP_PROXY; none when NO_PROXY is `*` or names the host (itself or a
 * parent domain; `.corp` and `*.corp` alike), with `:port` matching that port only.
 */
export function proxyFor(url: URL, env: ProxyEnv | undefined): string | undefined {
  if (!env) return undefined;
  const proxy = url.protocol === 'https:' ? env.httpsProxy || env.httpProxy : env.httpProxy;
  if (!proxy) return undefined;
  // the host without its port, brackets of an IPv6 address kept
  const hostname = url.host.replace(/:\d*$/, '').toLowerCase();
  const port = Number.parseInt(url.port, 10) || DEFAULT_PORTS[url.protocol] || 0;
  return bypassed(hostname, port, env.noProxy) ? undefined : proxy;
}

function bypassed(hostname: string, port: number, noProxy: string): boolean {
  const entries = noProxy
    .split(/[,\s]/)
    .filter(Boolean)
    .map((entry) => {
      const m = /^(.+):(\d+)$/.exec(entry);
      return { hostname: (m ? m[1] : entry).replace(/^\*?\./, '').toLowerCase(), port: m ? Number.parseInt(m[2], 10) : 0 };
    });
  if (entries.length === 0) return false;
  if (noProxy === '*') return true;
  return entries.some((e) => (!e.port || e.port === port) && (hostname === e.hostname || hostname.endsWith(`.${e.hostname}`)));
}
