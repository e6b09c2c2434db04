// Redirects as a token endpoint or a manifest behind a CDN sends them: followed a bounded number of
// times, the credential kept for its own host only (as Go's HTTP client does).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, TransportError } from '../../../src/adapters/registry/https.js';

const seen: Array<{ host: string; path: string; authorization?: string }> = [];
let a: http.Server;
let b: http.Server;
const url = (s: http.Server, path: string) => `http://127.0.0.1:${(s.address() as AddressInfo).port}${path}`;

beforeAll(async () => {
  const handler = (name: string) => (req: http.IncomingMessage, res: http.ServerResponse) => {
    seen.push({ host: name, path: req.url ?? '', authorization: req.headers.authorization });
    if (req.url === '/same') res.writeHead(307, { location: '/end' }).end();
    else if (req.url === '/other') res.writeHead(302, { location: url(b, '/end') }).end();
    else if (req.url === '/loop') res.writeHead(302, { location: '/loop' }).end();
    else res.writeHead(200).end('done');
  };
  a = http.createServer(handler('a'));
  b = http.createServer(handler('b'));
  await Promise.all([a, b].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
});
afterAll(() => Promise.all([a, b].map((s) => new Promise((r) => s.close(r)))));

describe('request', () => {
  it('keeps the credential on a redirect to the same host, drops it for another host', async () => {
    seen.length = 0;
    expect((await request('GET', url(a, '/same'), { authorization: 'Bearer t' }, { timeoutMs: 2000 })).body).toBe('done');
    expect(seen).toEqual([
      { host: 'a', path: '/same', authorization: 'Bearer t' },
      { host: 'a', path: '/end', authorization: 'Bearer t' },
    ]);
    seen.length = 0;
    const answer = await request('GET', url(a, '/other'), { authorization: 'Bearer t' }, { timeoutMs: 2000 });
    expect(answer.status).toBe(200);
    expect(answer.url).toBe(url(b, '/end'));
    expect(seen).toEqual([
      { host: 'a', path: '/other', authorization: 'Bearer t' },
      { host: 'b', path: '/end', authorization: undefined },
    ]);
  });
  it('gives up after 5 redirects, and a closed port is a transport error', async () => {
    await expect(request('GET', url(a, '/loop'), {}, { timeoutMs: 2000 })).rejects.toThrow(/more than 5 redirects/);
    await expect(request('GET', 'https://127.0.0.1:1/v2/', {}, { timeoutMs: 2000 })).rejects.toBeInstanceOf(TransportError);
  });
});
