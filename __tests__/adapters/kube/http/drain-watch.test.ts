// The HTTP drain and watch (src/adapters/kube/http/drain.ts, watch.ts) over the real `kubectl proxy`,
// against the twin: kubectl drain's filters and eviction protocol (pkg/drain), a watch that resumes
// from its resourceVersion, asks for bookmarks, re-reads on 410 and gives up on repeated failures.
// One case at a time: each starts a twin and a proxy, and several at once crowd a busy machine.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../../../../src/adapters/exec.js';
import { HttpKube } from '../../../../src/adapters/kube/http/client.js';
import { DrainTimeoutError, ToolError } from '../../../../src/core/errors.js';
import type { NodeState } from '../../../../src/core/model/node.js';
import { KubeSim } from '../../../../sim/kube/index.js';
import { findKubectl } from '../../../sim-kube/helpers.js';

beforeAll(() => {
  findKubectl();
});

/** A twin with cp-1, w-1, w-2 and w-1's DaemonSet, mirror and emptyDir pods; and a client on it. */
async function cluster(drainTiming = { evictRetryMs: 200, deletePollMs: 100 }) {
  const sim = await KubeSim.start({ heartbeatMs: 600_000, taintDelayMs: 50 });
  sim.addNode({ name: 'cp-1', ip: '10.0.0.1', role: 'control-plane' });
  sim.addNode({ name: 'w-1', ip: '10.0.0.11', role: 'worker' });
  sim.addNode({ name: 'w-2', ip: '10.0.0.12', role: 'worker' });
  sim.addPod({ namespace: 'kube-system', name: 'cilium-x7k2p', nodeName: 'w-1', owner: { kind: 'DaemonSet', name: 'cilium' } });
  sim.addPod({ namespace: 'kube-system', name: 'static-w-1', nodeName: 'w-1', mirror: true });
  sim.addPod({ name: 'cache-7d4-xk2p9', nodeName: 'w-1', owner: { kind: 'ReplicaSet', name: 'cache-7d4' }, emptyDir: true });
  const temp = mkdtempSync(join(tmpdir(), 'chan-'));
  const runner = new Runner();
  const kube = new HttpKube({ runner, kubeconfig: sim.kubeconfigPath, tempDir: temp, drainTiming, watchSeconds: 300 });
  const stop = async () => {
    await kube.close();
    await sim.stop();
    rmSync(temp, { recursive: true, force: true });
  };
  return { sim, kube, runner, stop };
}

const cordon = (sim: KubeSim, n: string) => sim.mutateNode(n, (o) => (o.spec.unschedulable = true));

describe('HttpKube.drain (kubectl drain --ignore-daemonsets --delete-emptydir-data)', () => {
  it('evicts the ReplicaSet and emptyDir pods through policy/v1 Evictions, leaves DaemonSet and mirror pods, waits until they are gone', async () => {
    const c = await cluster();
    try {
      c.sim.addPod({ name: 'web-5f6-abcde', nodeName: 'w-1', owner: { kind: 'ReplicaSet', name: 'web-5f6' }, labels: { app: 'web' } });
      cordon(c.sim, 'w-1');
      let evicted: string[] = [];
      await c.kube.drain('w-1', 20_000, undefined, (p) => (evicted = p));
      expect(evicted.sort()).toEqual(['default/cache-7d4-xk2p9', 'default/web-5f6-abcde']);
      const onW1 = c.sim
        .pods()
        .filter((p) => p.spec.nodeName === 'w-1')
        .map((p) => p.metadata.name)
        .sort();
      expect(onW1).toEqual(['cilium-x7k2p', 'static-w-1']);
      const drainReqs = c.sim.requests.filter((q) => q.userAgent === 'talos-registry-auth-rollout (drain)');
      expect(drainReqs.some((q) => q.method === 'GET' && q.path === '/apis/apps/v1/namespaces/kube-system/daemonsets/cilium')).toBe(true);
      expect(
        drainReqs
          .filter((q) => q.method === 'POST')
          .map((q) => `${q.path} ${q.status}`)
          .sort(),
      ).toEqual([
        '/api/v1/namespaces/default/pods/cache-7d4-xk2p9/eviction 201',
        '/api/v1/namespaces/default/pods/web-5f6-abcde/eviction 201',
      ]);
      // no DELETE (evictions only), and the cordon is not repeated: the claim made it
      expect(drainReqs.some((q) => q.method === 'DELETE' || q.method === 'PATCH')).toBe(false);
      expect(c.runner.processCount).toBe(1);
    } finally {
      await c.stop();
    }
  });

  it("a pod without a controller refuses the drain before any eviction, in kubectl's words", async () => {
    const c = await cluster();
    try {
      c.sim.addPod({ name: 'bare', nodeName: 'w-1' });
      cordon(c.sim, 'w-1');
      const e = await c.kube.drain('w-1', 10_000).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ToolError);
      expect((e as ToolError).stderr).toContain('cannot delete Pods that declare no controller (use --force to override): default/bare');
      expect(c.sim.requests.some((q) => q.path.endsWith('/eviction'))).toBe(false);
    } finally {
      await c.stop();
    }
  });

  it('a PDB that refuses (429) is asked again until it allows', async () => {
    const c = await cluster();
    try {
      c.sim.addPod({ name: 'web-5f6-abcde', nodeName: 'w-1', owner: { kind: 'ReplicaSet', name: 'web-5f6' }, labels: { app: 'web' } });
      c.sim.addPdb({ name: 'web-pdb', selector: { app: 'web' }, disruptionsAllowed: 0 });
      cordon(c.sim, 'w-1');
      const draining = c.kube.drain('w-1', 30_000);
      for (let i = 0; i < 200 && !c.sim.requests.some((q) => q.path.endsWith('/web-5f6-abcde/eviction') && q.status === 429); i++)
        await sleep(25);
      c.sim.setPdbAllowed('default', 'web-pdb', 1);
      await draining;
      const evictions = c.sim.requests.filter((q) => q.path.endsWith('/web-5f6-abcde/eviction')).map((q) => q.status);
      expect(evictions[0]).toBe(429);
      expect(evictions.at(-1)).toBe(201);
    } finally {
      await c.stop();
    }
  });

  it('a PDB that never allows: a DrainTimeoutError naming the pod at the deadline; the pod stays', async () => {
    const c = await cluster();
    try {
      c.sim.addPod({ name: 'web-5f6-abcde', nodeName: 'w-1', owner: { kind: 'ReplicaSet', name: 'web-5f6' }, labels: { app: 'web' } });
      c.sim.addPdb({ name: 'web-pdb', selector: { app: 'web' }, disruptionsAllowed: 0 });
      cordon(c.sim, 'w-1');
      let evicted: string[] | undefined;
      await c.kube.readyz(); // the channel open before the deadline starts
      const e = await c.kube.drain('w-1', 3000, undefined, (p) => (evicted = p)).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(DrainTimeoutError);
      expect((e as DrainTimeoutError).blockedPods).toContain('default/web-5f6-abcde');
      expect(evicted).toContain('default/cache-7d4-xk2p9');
      expect(evicted).not.toContain('default/web-5f6-abcde');
      expect(c.sim.pods().find((p) => p.metadata.name === 'web-5f6-abcde')?.spec.nodeName).toBe('w-1');
    } finally {
      await c.stop();
    }
  });

  it('aborting ends the drain at once: no eviction after it, the call rejects cancelled', async () => {
    const c = await cluster();
    try {
      c.sim.addPod({ name: 'web-5f6-abcde', nodeName: 'w-1', owner: { kind: 'ReplicaSet', name: 'web-5f6' }, labels: { app: 'web' } });
      c.sim.addPdb({ name: 'web-pdb', selector: { app: 'web' }, disruptionsAllowed: 0 });
      cordon(c.sim, 'w-1');
      // when the action started each eviction (the listener sees a request when it ends, with its duration)
      const evictionsStarted: number[] = [];
      c.kube.http.listeners.add((r) => {
        if (r.path.endsWith('/eviction')) evictionsStarted.push(Date.now() - r.durationMs);
      });
      const end = new AbortController();
      const draining = c.kube.drain('w-1', 30_000, end.signal).catch((x: unknown) => x);
      for (let i = 0; i < 200 && !c.sim.requests.some((q) => q.status === 429); i++) await sleep(25);
      const abortedAt = Date.now();
      end.abort();
      const e = await draining;
      expect((e as ToolError).kind).toBe('cancelled');
      // two retry periods (200 ms each) later: nothing was started after the abort. One eviction
      // already sent may still reach the apiserver after it (the proxy had forwarded it): an abort
      // cannot unsend a request, so what the twin receives is not the measure (seen at a load of 18).
      await sleep(400);
      expect(evictionsStarted.length).toBeGreaterThan(0);
      expect(evictionsStarted.filter((t) => t > abortedAt + 1)).toEqual([]);
    } finally {
      await c.stop();
    }
  });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('HttpKube.watchNode', () => {
  const watchRequests = (sim: KubeSim) => sim.requests.filter((r) => r.path === '/api/v1/nodes' && /watch=1/.test(r.query));
  function watch(kube: HttpKube, since: string) {
    const seen: Array<NodeState | undefined> = [];
    const stop = new AbortController();
    const done = kube.watchNode('w-1', since, (n) => seen.push(n), stop.signal);
    return { seen, stop, done };
  }
  async function until(f: () => boolean, ms = 10_000) {
    const end = Date.now() + ms;
    while (!f()) {
      if (Date.now() > end) throw new Error('timed out');
      await sleep(20);
    }
  }

  it('streams each write of the node after the resourceVersion, asking for bookmarks; a 410 re-reads and watches on', async () => {
    const c = await cluster();
    try {
      const since = (await c.kube.getNode('w-1')).resourceVersion;
      const w = watch(c.kube, since);
      await until(() => watchRequests(c.sim).length === 1);
      expect(watchRequests(c.sim)[0].query).toContain(`resourceVersion=${since}`);
      expect(watchRequests(c.sim)[0].query).toContain('allowWatchBookmarks=true');
      c.sim.mutateNode('w-2', (o) => (o.metadata.labels.other = 'x'));
      c.sim.mutateNode('w-1', (o) => (o.metadata.annotations = { ...o.metadata.annotations, owner: 'someone-else' }));
      await until(() => w.seen.length === 1);
      expect(w.seen[0]?.annotations.owner).toBe('someone-else');
      w.stop.abort();
      await w.done;
      // from a history the twin no longer keeps
      for (let i = 0; i < 2100; i++) c.sim.heartbeat('w-2');
      c.sim.mutateNode('w-1', (o) => (o.spec.unschedulable = true));
      const w2 = watch(c.kube, since);
      await until(() => w2.seen.length >= 1);
      expect(w2.seen[0]?.unschedulable).toBe(true);
      await until(() => watchRequests(c.sim).length === 3);
      expect(watchRequests(c.sim)[2].query).toContain(`resourceVersion=${w2.seen[0]!.resourceVersion}`);
      w2.stop.abort();
      await w2.done;
      expect(c.runner.processCount).toBe(1);
    } finally {
      await c.stop();
    }
  });

  it('a watch that keeps failing is given up with the classified failure', async () => {
    const c = await cluster();
    try {
      const since = (await c.kube.getNode('w-1')).resourceVersion;
      c.sim.failNext(
        { method: 'GET', path: /^\/api\/v1\/nodes$/, count: 10 },
        { status: 403, reason: 'Forbidden', message: 'nodes is forbidden: cannot watch' },
      );
      const w = watch(c.kube, since);
      await expect(w.done).rejects.toMatchObject({ kind: 'forbidden' });
    } finally {
      await c.stop();
    }
  });
});
