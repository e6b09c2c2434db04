// The pre-flight's HTTP client against loopback servers: redirects as a token endpoint or a manifest
// behind a CDN sends them, followed by the rules of redirect.ts (the credential kept with its origin,
// a POST's refresh-token body never re-sent, no downgrade to http with a credential), a bounded number
// of times; transport failures as TransportError, a credential the rule keeps from going somewhere
// (core/credentialRoute.ts) as CredentialWithheld, with nothing sent.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CredentialWithheld, openHttp, type HttpOptions } from '../../../src/adapters/registry/https.js';
import { clusterCerts } from '../../../sim/talos/api/certs.js';

interface Seen {
  server: string;
  method: string;
  path: string;
  authorization?: string;
  body: string;
}
const seen: Seen[] = [];
let a: https.Server;
let b: https.Server;
/** one port, two schemes: TLS when the first byte is a handshake, plain HTTP otherwise (forwarded to one of two servers) */
let dual: net.Server;
let plain: http.Server;
let secure: https.Server;
const certs = clusterCerts('registry-sim');
const port = (s: net.Server) => (s.address() as AddressInfo).port;
/** a and b speak https (a credential is never redirected to plain http but a registry-plain-http origin); dual both */
const url = (s: net.Server, path: string, scheme = s === dual ? 'http' : 'https') => `${scheme}://127.0.0.1:${port(s)}${path}`;

function handler(name: string) {
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push({ server: name, method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization, body });
      const to = (status: number, location: string) => res.writeHead(status, { location }).end();
      if (req.url === '/same') to(307, '/end');
      else if (req.url === '/other') to(302, url(b, '/end'));
      else if (req.url === '/token-302') to(302, url(b, '/token'));
      else if (req.url === '/token-307') to(307, url(b, '/token'));
      else if (req.url === '/downgrade') to(302, url(dual, '/end'));
      else if (req.url === '/loop') to(302, '/loop');
      else res.writeHead(200).end('done');
    });
  };
}

beforeAll(async () => {
  a = https.createServer({ cert: certs.server.crt, key: certs.server.key }, handler('a'));
  b = https.createServer({ cert: certs.server.crt, key: certs.server.key }, handler('b'));
  plain = http.createServer(handler('dual-http'));
  secure = https.createServer({ cert: certs.server.crt, key: certs.server.key }, handler('dual-https'));
  dual = net.createServer((socket) => {
    socket.once('data', (first: Buffer) => {
      const upstream = net.connect(port(first[0] === 0x16 ? secure : plain), '127.0.0.1');
      upstream.write(first);
      socket.pipe(upstream).pipe(socket);
      const end = () => (socket.destroy(), upstream.destroy());
      socket.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
    });
  });
  const all = [a, b, plain, secure, dual];
  await Promise.all(all.map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
});
afterAll(() =>
  Promise.all(
    [a, b, plain, secure, dual].map((s) => {
      if ('closeAllConnections' in s) s.closeAllConnections();
      return new Promise((r) => s.close(r));
    }),
  ),
);

/**
 * The per-request budget these tests give the client: a hang detector. The servers are local, but a
 * loaded runner can take seconds to get to a handshake (2 s was overrun beside two test passes); the
 * timeout itself is tested with a server that never answers and a budget of its own.
 */
const BUDGET_MS = 30_000;

/** One request with the credential (if any) for the registry at `to`'s own origin, unless `registry` says otherwise. */
async function send(
  method: string,
  to: string,
  headers: Record<string, string>,
  body?: string,
  opts: Partial<HttpOptions> = {},
  registry = new URL(to).origin,
) {
  const client = openHttp({ timeoutMs: BUDGET_MS, ca: certs.ca.crt, ...opts }, { registry });
  try {
    return await client.request(method, to, headers, body, { to: 'registry' });
  } finally {
    await client.close();
  }
}

describe('the pre-flight HTTP client', () => {
  it('keeps the credential on a redirect to the same origin, drops it for another host', async () => {
    seen.length = 0;
    expect((await send('GET', url(a, '/same'), { authorization: 'Bearer t' })).body).toBe('done');
    expect(seen.map((s) => [s.server, s.path, s.authorization])).toEqual([
      ['a', '/same', 'Bearer t'],
      ['a', '/end', 'Bearer t'],
    ]);
    seen.length = 0;
    const answer = await send('GET', url(a, '/other'), { authorization: 'Bearer t' });
    expect(answer.status).toBe(200);
    expect(answer.url).toBe(url(b, '/end'));
    expect(seen.map((s) => [s.server, s.path, s.authorization])).toEqual([
      ['a', '/other', 'Bearer t'],
      ['b', '/end', undefined],
    ]);
  });

  it("a token endpoint's 302 to another host: the refresh-token POST becomes a GET without its body", async () => {
    seen.length = 0;
    const form = 'grant_type=refresh_token&refresh_token=SECRET-TOKEN';
    const answer = await send('POST', url(a, '/token-302'), { 'content-type': 'application/x-www-form-urlencoded' }, form);
    expect(answer.status).toBe(200);
    expect(seen).toEqual([
      { server: 'a', method: 'POST', path: '/token-302', authorization: undefined, body: form },
      { server: 'b', method: 'GET', path: '/token', authorization: undefined, body: '' },
    ]);
  });

  it("a 307 to another host would re-send the POST's body: not followed", async () => {
    seen.length = 0;
    const refused = send('POST', url(a, '/token-307'), {}, 'refresh_token=SECRET-TOKEN');
    await expect(refused).rejects.toBeInstanceOf(CredentialWithheld);
    await expect(refused).rejects.toThrow(
      /not sent: 307 from https:\/\/127\.0\.0\.1:\d+ to https:\/\/127\.0\.0\.1:\d+: the request's body carries a credential/,
    );
    expect(seen.map((s) => s.server)).toEqual(['a']);
  });

  it('https → http on the same host and port with basic auth attached: refused, nothing sent in clear', async () => {
    seen.length = 0;
    const basic = `Basic ${Buffer.from('acme-bot:new-pass').toString('base64')}`;
    const refused = send('GET', url(dual, '/downgrade', 'https'), { authorization: basic });
    await expect(refused).rejects.toBeInstanceOf(CredentialWithheld);
    await expect(refused).rejects.toThrow(
      /not sent: the 302 redirect from https:\/\/127\.0\.0\.1:(\d+) to http:\/\/127\.0\.0\.1:\1\/end is plain http: the credential would travel in clear text/,
    );
    expect(seen.map((s) => [s.server, s.path])).toEqual([['dual-https', '/downgrade']]);
    // without a credential the same redirect is followed
    seen.length = 0;
    expect((await send('GET', url(dual, '/downgrade', 'https'), {})).url).toBe(url(dual, '/end'));
    expect(seen.map((s) => [s.server, s.authorization])).toEqual([
      ['dual-https', undefined],
      ['dual-http', undefined],
    ]);
  });

  it('a credential to plain http where the registry is https: withheld before anything is sent; one that does not say where it goes: a bug', async () => {
    seen.length = 0;
    const basic = `Basic ${Buffer.from('acme-bot:new-pass').toString('base64')}`;
    const client = openHttp({ timeoutMs: BUDGET_MS }, { registry: url(dual, '', 'https').replace(/\/$/, '') });
    try {
      await expect(
        client.request('GET', url(a, '/token', 'http'), { authorization: basic }, undefined, { to: 'registry' }),
      ).rejects.toBeInstanceOf(CredentialWithheld);
      await expect(client.request('POST', url(a, '/token'), {}, 'refresh_token=SECRET-TOKEN')).rejects.toThrow(/must say where it goes/);
    } finally {
      await client.close();
    }
    expect(seen).toEqual([]);
  });

  it('a server that never answers: a transport error after the timeout', async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      await expect(send('GET', url(silent, '/v2/'), {}, undefined, { timeoutMs: 1000 })).rejects.toThrow(/^no answer within 1 s$/);
    } finally {
      silent.close();
    }
  });

  it('gives up after 5 redirects, and a closed port is a transport error', async () => {
    await expect(send('GET', url(a, '/loop'), {})).rejects.toThrow(/more than 5 redirects/);
    await expect(send('GET', 'https://127.0.0.1:1/v2/', {})).rejects.toThrow(/connect ECONNREFUSED 127\.0\.0\.1:1 \(ECONNREFUSED\)/);
  });
});
