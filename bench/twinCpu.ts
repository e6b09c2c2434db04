// The CPU the Kubernetes API server twin (sim/kube/) spends in its own process, per kind of request: the
// kubelet heartbeat (a status SMP of the Node and a Lease PUT, every E2E_HEARTBEAT_MS per node in every
// end-to-end cluster), Node PATCHes of each patch type, GETs and LISTs over HTTP, and a heartbeat's
// fan-out to a few open watches. Not part of `npm test` nor of `npm run bench`: run it before and after a
// change to the twin's hot path, `npx tsx bench/twinCpu.ts [rounds]`, and compare the µs per operation.
// The cluster is the default one of __tests__/e2e/helpers.ts (six nodes, two pods), its heartbeat timer
// pushed out of the way so that only the measured calls run; the HTTP client's CPU is in the figures too
// (the same before and after).
import { request, Agent } from 'node:http';
import { addDefaultNodes, SimCluster } from '../sim/cluster.js';

const rounds = Number(process.argv[2] ?? 5);
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function call(base: string, method: string, path: string, body?: string, contentType?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const u = new URL(path, base);
    const req = request(
      {
        agent,
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method,
        headers: contentType ? { 'Content-Type': contentType } : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** CPU µs (user + system) per operation of `n` runs of `op`. */
async function cpuPerOp(n: number, op: (i: number) => unknown): Promise<number> {
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await op(i);
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / n;
}

async function once(): Promise<Record<string, number>> {
  const c = await SimCluster.start({ heartbeatMs: 1e9, rebootMs: 1000 });
  addDefaultNodes(c);
  const kube = c.kube;
  const base = kube.url;
  const nodes = ['cp-1', 'cp-2', 'cp-3', 'worker-1', 'worker-2', 'worker-3'];
  const node = (i: number) => nodes[i % nodes.length]!;
  const out: Record<string, number> = {};
  try {
    // warm-up: every path once, so the JIT's first compiles are not counted
    for (let i = 0; i < 200; i++) kube.heartbeat(node(i));
    for (let i = 0; i < 50; i++) await call(base, 'GET', `/api/v1/nodes/${node(i)}`);

    out['heartbeat (in-process)'] = await cpuPerOp(2000, (i) => kube.heartbeat(node(i)));
    // one row a patch type, the same node writes through the HTTP front: the body of write i, its content type
    const patches: Array<[string, (i: number) => unknown, string]> = [
      ['PATCH json-patch', (i) => [{ op: 'add', path: '/metadata/annotations/bench~1n', value: String(i) }], 'application/json-patch+json'],
      ['PATCH merge', (i) => ({ metadata: { labels: { 'bench/m': String(i) } } }), 'application/merge-patch+json'],
      ['PATCH strategic', (i) => ({ metadata: { annotations: { 'bench/s': String(i) } } }), 'application/strategic-merge-patch+json'],
      ['PATCH no-op (strategic)', () => ({ metadata: { annotations: { 'bench/s': 'same' } } }), 'application/strategic-merge-patch+json'],
    ];
    for (const [label, body, type] of patches) {
      out[label] = await cpuPerOp(500, (i) => call(base, 'PATCH', `/api/v1/nodes/${node(i)}`, JSON.stringify(body(i)), type));
    }
    out['GET node'] = await cpuPerOp(1000, (i) => call(base, 'GET', `/api/v1/nodes/${node(i)}`));
    out['LIST nodes'] = await cpuPerOp(500, () => call(base, 'GET', '/api/v1/nodes'));
    out['LIST pods'] = await cpuPerOp(500, () => call(base, 'GET', '/api/v1/pods'));

    // four watches of the nodes: a heartbeat's MODIFIED reaches each of them
    const watchers = 4;
    let received = 0;
    const reqs = [];
    for (let w = 0; w < watchers; w++) {
      const req = request(`${base}/api/v1/nodes?watch=true&resourceVersion=${kube.resourceVersion}`, (res) => {
        res.on('data', (chunk: Buffer) => {
          for (const b of chunk) if (b === 10) received++;
        });
      });
      req.end();
      reqs.push(req);
    }
    await new Promise((r) => setTimeout(r, 200));
    const n = 1000;
    received = 0;
    out[`heartbeat + ${watchers} watches`] = await cpuPerOp(1, async () => {
      for (let i = 0; i < n; i++) kube.heartbeat(node(i));
      while (received < n * watchers) await new Promise((r) => setImmediate(r));
    });
    out[`heartbeat + ${watchers} watches`] /= n;
    for (const r of reqs) r.destroy();
  } finally {
    await c.stop();
  }
  return out;
}

const all: Array<Record<string, number>> = [];
for (let r = 0; r < rounds; r++) all.push(await once());
agent.destroy();
console.log(`twin CPU per operation, µs (median of ${rounds} rounds; node ${process.version})`);
for (const k of Object.keys(all[0]!)) {
  const v = all.map((o) => o[k]!).sort((a, b) => a - b);
  console.log(
    `${k.padEnd(28)} ${v[Math.floor(v.length / 2)]!.toFixed(0).padStart(6)}   (min ${v[0]!.toFixed(0)}, max ${v.at(-1)!.toFixed(0)})`,
  );
}
