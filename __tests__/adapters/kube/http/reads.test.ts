// The HTTP client over the real `kubectl proxy` on a Unix socket, against the twin: reads, writes,
// errors classified from the Status, the channel's socket and its end.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../../../../src/adapters/exec.js';
import { HttpKube } from '../../../../src/adapters/kube/http/client.js';
import { ToolError } from '../../../../src/core/errors.js';
import { KubeSim } from '../../../../sim/kube/index.js';
import { findKubectl } from '../../../sim-kube/helpers.js';

let sim: KubeSim;
let kube: HttpKube;
let runner: Runner;
let temp: string;

beforeAll(async () => {
  findKubectl();
  sim = await KubeSim.start({ heartbeatMs: 1000 });
  sim.addNode({ name: 'cp-1', ip: '10.0.0.1', role: 'control-plane' });
  sim.addNode({ name: 'w-1', ip: '10.0.0.11', role: 'worker' });
  temp = mkdtempSync(join(tmpdir(), 'chan-'));
  runner = new Runner();
  kube = new HttpKube({ runner, kubeconfig: sim.kubeconfigPath, tempDir: temp });
});

afterAll(async () => {
  await kube?.close();
  await sim?.stop();
  rmSync(temp, { recursive: true, force: true });
});

describe('HttpKube over kubectl proxy', () => {
  it('lists and reads nodes through one proxy process, its socket 0600 in a 0700 directory of the temp dir', async () => {
    const before = runner.processCount;
    const nodes = await kube.listNodes();
    expect(nodes.map((n) => n.name).sort()).toEqual(['cp-1', 'w-1']);
    const w1 = await kube.getNode('w-1');
    expect(w1.name).toBe('w-1');
    await kube.readyz();
    expect(runner.processCount - before).toBe(1);
    const opened = await kube.channel.open();
    expect(dirname(dirname(opened.socketPath))).toBe(temp);
    expect(statSync(opened.socketPath).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(opened.socketPath)).mode & 0o777).toBe(0o700);
    const seen = sim.requests.filter((r) => r.path === '/api/v1/nodes/w-1');
    expect(seen.at(-1)?.userAgent).toBe('talos-registry-auth-rollout (read)');
  });

  it('a JSON Patch whose test fails is cause invalid (422 Invalid); a missing node not-found; a Lease created twice conflict', async () => {
    const e1 = await kube.patchNode('w-1', [{ op: 'test', path: '/spec/unschedulable', value: true }]).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(ToolError);
    expect((e1 as ToolError).kind).toBe('invalid');
    const e2 = await kube.getNode('nope').catch((e: unknown) => e);
    expect((e2 as ToolError).kind).toBe('not-found');
    await kube.createLease('default', 'l1', { holderIdentity: 'a' });
    const e3 = await kube.createLease('default', 'l1', { holderIdentity: 'b' }).catch((e: unknown) => e);
    expect((e3 as ToolError).kind).toBe('conflict');
    expect(await kube.getLease('default', 'missing')).toBeUndefined();
    const both = await kube.getNodeAndLease('w-1', 'default', 'l1');
    expect(both.lease).toMatchObject({ ok: true, lease: { holderIdentity: 'a' } });
  });

  it('a patch that applies answers the node as written', async () => {
    const n = await kube.patchNode('w-1', [{ op: 'add', path: '/metadata/annotations/x.example~1a', value: 'v' }]);
    expect(n.annotations['x.example/a']).toBe('v');
  });

  it('discovery names the served kinds; the gate listing reads them', async () => {
    const kinds = await kube.servedKinds();
    expect(kinds.find((k) => k.kind === 'Node')).toMatchObject({ group: '', version: 'v1', resource: 'nodes', namespaced: false });
    expect(kinds.find((k) => k.kind === 'Lease')).toMatchObject({ group: 'coordination.k8s.io', namespaced: true });
    expect(kinds.some((k) => k.resource.includes('/'))).toBe(false);
    const objs = await kube.listGateObjects(kinds.filter((k) => k.kind === 'Node'));
    expect(objs.map((o) => `${o.kind}/${o.name}`).sort()).toEqual(['Node/cp-1', 'Node/w-1']);
  });

  it('the proxy killed: noticed, the channel opened again once (the socket of the dead one removed), then a transport error', async () => {
    const first = await kube.channel.open();
    const starts = kube.channel.starts;
    process.kill(proxyPid(first.socketPath), 'SIGKILL');
    await until(() => !first.alive);
    expect(existsSync(dirname(first.socketPath))).toBe(false);
    expect((await kube.getNode('w-1')).name).toBe('w-1');
    expect(kube.channel.starts).toBe(starts + 1);
    const second = await kube.channel.open();
    expect(second.socketPath).not.toBe(first.socketPath);
    process.kill(proxyPid(second.socketPath), 'SIGKILL');
    await until(() => !second.alive);
    const e = await kube.getNode('w-1').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ToolError);
    expect((e as ToolError).kind).toBe('transport');
    expect((e as ToolError).message).toMatch(/already started again once/);
  });
});

/** The pid of the kubectl proxy serving `socket` (this test's own child), from /proc. */
function proxyPid(socket: string): number {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (cmd.includes(`--unix-socket=${socket}`)) return Number(d);
    } catch {
      /* gone */
    }
  }
  throw new Error(`no process serves ${socket}`);
}

async function until(f: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !f(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!f()) throw new Error('condition not met');
}
