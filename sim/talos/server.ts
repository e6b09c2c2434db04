// Loopback HTTP endpoint the fake talosctl talks to. A call's output is streamed back as
// newline-delimited JSON segments ({fd,text,tab?} or {error}) and ends with {exit}; streaming lets
// `reboot --wait` print its tracker lines while the machine is down, as the real client does.
import { createServer } from 'node:http';
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

export function startServer(d: Dispatcher): Promise<SimServer> {
  const server = createServer((req, res) => {
    void handle(d, req, res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
