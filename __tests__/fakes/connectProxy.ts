// A forward proxy on a loopback port as an egress proxy serves a runner: HTTP CONNECT tunnels
// (RFC 9110 §9.3.6: `CONNECT host:port`, `200` then the bytes both ways), counted per target, so a
// test can show that a request went through it (or, with NO_PROXY, did not). `refuse` answers every
// CONNECT with that status instead (a proxy that wants authentication: 407).
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface ConnectProxy {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** every CONNECT target (`host:port`), in order */
  connects: string[];
  /** the Proxy-Authorization of each CONNECT (undefined: none) */
  proxyAuthorizations: Array<string | undefined>;
  /** the local port of each tunnel's connection to its target: what the target sees as the client's port */
  tunnelPorts: Set<number>;
  stop(): Promise<void>;
}

export async function startConnectProxy(opts: { refuse?: number } = {}): Promise<ConnectProxy> {
  const connects: string[] = [];
  const proxyAuthorizations: Array<string | undefined> = [];
  const sockets = new Set<net.Socket>();
  const tunnelPorts = new Set<number>();
  const server = http.createServer((_req, res) => res.writeHead(405).end('CONNECT only'));
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    connects.push(req.url ?? '');
    proxyAuthorizations.push(req.headers['proxy-authorization']);
    sockets.add(client);
    client.on('error', () => client.destroy());
    if (opts.refuse) {
      client.end(`HTTP/1.1 ${opts.refuse} ${http.STATUS_CODES[opts.refuse]}\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    const [host, port] = (req.url ?? '').split(/:(?=\d+$)/);
    const upstream = net.connect(Number(port), host, () => {
      tunnelPorts.add(upstream.localPort ?? 0);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connects,
    proxyAuthorizations,
    tunnelPorts,
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
