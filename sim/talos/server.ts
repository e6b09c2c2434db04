// The twin's Talos endpoint. One loopback port, like apid's: a connection that opens with a TLS
// handshake is the Talos API (gRPC, sim/talos/api/); anything else is the fake talosctl's plain HTTP.
// The HTTP side: the fake talosctl talks to it. A call's output is streamed back as
// newline-delimited JSON segments ({fd,text,tab?} or {error}) and ends with {exit}; streaming lets
// `reboot --wait` print its tracker lines while the machine is down, as the real client does.
import { createServer } from 'node:http';
import { createServer as createNetServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Out, RunRequest } from './commands/context.js';

export interface LocalRecord {
  argv: string[];
  commandPath: string;
  nodes: string[];
  exitCode: number;
}

export interface Dispatcher {
  run(req: RunRequest, out: Out, signal: AbortSignal): Promise<number>;
  record(rec: LocalRecord): void;
}

export interface SimServer {
  port: number;
  /** TLS connections handed to the API side so far */
  readonly tlsConnections: number;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch (e) {
        reject(e);
      }
    });
    req.on('error', reject);
  });
}

async function handle(d: Dispatcher, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST' || (req.url !== '/run' && req.url !== '/record')) {
    res.writeHead(404).end();
    return;
  }
  let body: unknown;
  try {
    body = await readBody(req);
  } catch {
    res.writeHead(400).end();
    return;
  }
  if (req.url === '/record') {
    d.record(body as LocalRecord);
    res.writeHead(204).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  const ac = new AbortController();
  res.on('close', () => {
    if (!res.writableEnded) ac.abort();
  });
  const send = (msg: object) => {
    if (!res.writableEnded && !ac.signal.aborted) res.write(`${JSON.stringify(msg)}\n`);
  };
  const out: Out = {
    out: (text) => {
      if (text) send({ fd: 1, text });
    },
    err: (text) => {
      if (text) send({ fd: 2, text });
    },
    table: (text) => {
      if (text) send({ fd: 1, text, tab: true });
    },
    fail: (message) => send({ error: message }),
  };
  let code: number;
  try {
    code = await d.run(body as RunRequest, out, ac.signal);
  } catch (e) {
    send({ fd: 2, text: `talosctl simulator: internal error: ${(e as Error).stack ?? String(e)}\n` });
    code = 1;
  }
  if (!res.writableEnded) res.end(`${JSON.stringify({ exit: code })}\n`);
}

/** TLS records start with content type 22 (handshake). */
const TLS_HANDSHAKE = 0x16;

export function startServer(d: Dispatcher, onTls?: (socket: Duplex) => void): Promise<SimServer> {
  const http = createServer((req, res) => {
    void handle(d, req, res);
  });
  const sockets = new Set<Socket>();
  let tlsConnections = 0;
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.once('data', (first: Buffer) => {
      socket.pause();
      socket.unshift(first);
      if (first[0] === TLS_HANDSHAKE && onTls) {
        tlsConnections++;
        onTls(socket);
      } else {
        http.emit('connection', socket);
        socket.resume();
      }
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        port,
        get tlsConnections() {
          return tlsConnections;
        },
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            http.closeAllConnections();
            for (const s of sockets) s.destroy();
          }),
      });
    });
  });
}
