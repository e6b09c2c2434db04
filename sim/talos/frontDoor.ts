// The fake talosctl's front door: the bash `talosctl` (sim/bin/talosctl) connects here and the twin
// runs the client (runClient of sim/bin/talosctl-client.cjs, the one home of its behaviour) in its own
// process, instead of a Node start per call. The client still dials the endpoint its talosconfig or
// flags name, over HTTP as before, so a moved or closed endpoint is refused as ever; it reads the
// caller's environment, directory and patch files, and renders times in the caller's TZ.
//
// Protocol (the script's header says the same): the request is NUL-separated fields (magic, directory,
// TZ, TALOSCONFIG, TALOS_HOME, HOME as `` unset or `=value`, argument count, arguments); the answer
// is frames `1<bytes>\n<text>` / `2<bytes>\n<text>` (stdout / stderr, in write order), then
// `x<code>\n`, or `F\n` to hand the call back to the Node client. The script keeps each text in a bash
// variable, which cannot hold a NUL byte: talosctl's outputs here are text (YAML, tables, the CRI
// config files), and the one NUL the twin uses, its time placeholders, is rendered before sending.
// The connection closing before the answer ends (the script's SIGINT/SIGTERM, or a SIGKILL) aborts
// the call, as the Node client's exit does: its request to the endpoint is dropped mid-stream.
import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo, type Socket } from 'node:net';

type TalosctlClient = typeof import('../bin/talosctl-client.cjs');
type TalosFmt = typeof import('../bin/talosfmt.cjs');

const require = createRequire(import.meta.url);
const client = require('../bin/talosctl-client.cjs') as TalosctlClient;
const fmt = require('../bin/talosfmt.cjs') as TalosFmt;

const MAGIC = 'talosctl-front-door/1';
/** the environment the client reads, in the order the script sends it */
const ENV_NAMES = ['TZ', 'TALOSCONFIG', 'TALOS_HOME', 'HOME'] as const;
/** fields before the arguments: magic, directory, the environment, the argument count */
const HEAD_FIELDS = 3 + ENV_NAMES.length;
/** a request larger than this is not a talosctl command line */
const MAX_REQUEST = 1 << 20;

export interface FrontDoor {
  /** `127.0.0.1:PORT`, the value of TALOSCTL_SIM_FRONT_DOOR */
  readonly address: string;
  /** calls run in the twin's process */
  readonly calls: number;
  /** calls handed back to the Node client (a TZ the twin cannot render in) */
  readonly handedBack: number;
  close(): Promise<void>;
}

interface Request {
  argv: string[];
  env: Record<string, string | undefined>;
  cwd: string;
}

/** The request once all its fields are in `buf`; undefined while more are to come. */
function parseRequest(buf: Buffer): Request | undefined {
  const fields: string[] = [];
  let at = 0;
  let want = HEAD_FIELDS;
  while (fields.length < want) {
    const nul = buf.indexOf(0, at);
    if (nul < 0) return undefined;
    fields.push(buf.toString('utf8', at, nul));
    at = nul + 1;
    if (fields.length === 1 && fields[0] !== MAGIC) throw new Error('not a talosctl front-door request');
    if (fields.length === HEAD_FIELDS) {
      const argc = Number(fields[HEAD_FIELDS - 1]);
      if (!Number.isInteger(argc) || argc < 0) throw new Error('bad argument count');
      want = HEAD_FIELDS + argc;
    }
  }
  const env: Record<string, string | undefined> = {};
  ENV_NAMES.forEach((name, i) => {
    const f = fields[2 + i];
    env[name] = f.startsWith('=') ? f.slice(1) : undefined;
  });
  // process.cwd() of a process started in $PWD: the physical directory
  let cwd = fields[1];
  try {
    cwd = realpathSync.native(cwd);
  } catch {
    // a directory that is gone: relative patch paths fail to open, as they would
  }
  return { argv: fields.slice(HEAD_FIELDS), env, cwd };
}

export function startFrontDoor(): Promise<FrontDoor> {
  const sockets = new Set<Socket>();
  let calls = 0;
  let handedBack = 0;

  const serve = (socket: Socket, req: Request) => {
    if (!fmt.zoneRenderable(req.env.TZ)) {
      handedBack++;
      socket.end('F\n');
      return;
    }
    calls++;
    const ac = new AbortController();
    socket.on('close', () => ac.abort());
    const frame = (fd: 1 | 2) => (text: string) => {
      if (!text || ac.signal.aborted || socket.destroyed) return;
      socket.write(`${fd}${Buffer.byteLength(text)}\n${text}`);
    };
    void client
      .runClient({ argv: req.argv, env: req.env, cwd: req.cwd, stdout: frame(1), stderr: frame(2), signal: ac.signal })
      .then((code) => {
        if (!ac.signal.aborted && !socket.destroyed) socket.end(`x${code}\n`);
      });
  };

  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buf = Buffer.alloc(0);
    let started = false;
    socket.on('data', (chunk: Buffer) => {
      if (started) return; // nothing follows the request; keep reading to see the script go away
      buf = Buffer.concat([buf, chunk]);
      let req: Request | undefined;
      try {
        req = parseRequest(buf);
        if (!req && buf.length > MAX_REQUEST) throw new Error('request too large');
      } catch {
        socket.destroy();
        return;
      }
      if (!req) return;
      started = true;
      serve(socket, req);
    });
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        address: `127.0.0.1:${port}`,
        get calls() {
          return calls;
        },
        get handedBack() {
          return handedBack;
        },
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            for (const s of sockets) s.destroy();
          }),
      });
    });
  });
}
