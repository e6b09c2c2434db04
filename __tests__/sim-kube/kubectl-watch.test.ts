// Kubectl.watchNode through the real kubectl against KubeSim: `kubectl get --raw` streams the
// apiserver's watch as it arrives; a watch the server ends at timeoutSeconds is re-opened from the
// last resourceVersion seen; a 410 (history gone) re-reads the node and watches on
// (docs/kubernetes-facts.md#k12-watch).
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Kubectl } from '../../src/adapters/kube/kubectl.js';
import { Runner } from '../../src/adapters/exec.js';
import type { NodeState } from '../../src/core/model/node.js';
import { KubeSim } from '../../sim/kube/index.js';
import { findKubectl } from './helpers.js';

let sim: KubeSim;

beforeAll(() => {
  findKubectl();
});

beforeEach(async () => {
  sim = await KubeSim.start({ heartbeatMs: 600_000 });
  sim.addNode({ name: 'w-1', ip: '10.0.0.11', role: 'worker' });
  sim.addNode({ name: 'w-2', ip: '10.0.0.12', role: 'worker' });
});

afterEach(async () => {
  await sim.stop();
});

async function until(what: string, f: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function watch(kube: Kubectl, since: string) {
  const seen: Array<NodeState | undefined> = [];
  const stop = new AbortController();
  const done = kube.watchNode('w-1', since, (n) => seen.push(n), stop.signal);
  return { seen, stop, done };
}

const watchRequests = () => sim.requests.filter((r) => r.path === '/api/v1/nodes' && /watch=true/.test(r.query));

describe('Kubectl.watchNode', () => {
  it('streams each write of the node after the given resourceVersion, only that node, in one process', async () => {
    const runner = new Runner();
    const kube = new Kubectl({ runner, kubeconfig: sim.kubeconfigPath });
    const since = (await kube.getNode('w-1')).resourceVersion;
    const w = watch(kube, since);
    await until('the watch request', () => watchRequests().length === 1);
    sim.mutateNode('w-2', (o) => (o.metadata.labels.other = 'x'));
    sim.mutateNode('w-1', (o) => (o.metadata.annotations = { ...o.metadata.annotations, owner: 'someone-else' }));
    await until('the change', () => w.seen.length === 1);
    expect(w.seen[0]?.name).toBe('w-1');
    expect(w.seen[0]?.annotations.owner).toBe('someone-else');
    w.stop.abort();
    await w.done;
    expect(runner.processCount).toBe(2); // the getNode and the one watch
    expect(watchRequests()[0].query).toContain(`resourceVersion=${since}`);
  });

  it('a watch the server ends (timeoutSeconds) is re-opened from the last resourceVersion: no write is missed', async () => {
    const kube = new Kubectl({ runner: new Runner(), kubeconfig: sim.kubeconfigPath, watchSeconds: 1 });
    const since = (await kube.getNode('w-1')).resourceVersion;
    const w = watch(kube, since);
    await until('the first watch', () => watchRequests().length === 1);
    sim.heartbeat('w-1');
    await until('the heartbeat', () => w.seen.length === 1);
    const rv = w.seen[0]!.resourceVersion;
    await until('the watch re-opened', () => watchRequests().length >= 2);
    expect(watchRequests()[1].query).toContain(`resourceVersion=${rv}`);
    sim.replaceNode('w-1');
    await until('the re-created node', () => w.seen.some((n) => n && n.uid !== w.seen[0]!.uid));
    w.stop.abort();
    await w.done;
  });

  it('a 410 (the history asked for is gone) re-reads the node, reports it, and watches on from it', async () => {
    const kube = new Kubectl({ runner: new Runner(), kubeconfig: sim.kubeconfigPath });
    const old = (await kube.getNode('w-1')).resourceVersion;
    for (let i = 0; i < 2100; i++) sim.heartbeat('w-2'); // the twin keeps 2000 events
    sim.mutateNode('w-1', (o) => (o.spec.unschedulable = true));
    const w = watch(kube, old);
    await until('the re-read', () => w.seen.length >= 1);
    expect(w.seen[0]?.unschedulable).toBe(true);
    await until('the second watch', () => watchRequests().length === 2);
    expect(watchRequests()[1].query).toContain(`resourceVersion=${w.seen[0]!.resourceVersion}`);
    // The twin's taint controller answers a cordon with a write of its own (the unschedulable taint),
    // which the re-read may or may not have seen yet: count the uncordon, not the events.
    sim.mutateNode('w-1', (o) => (o.spec.unschedulable = false));
    await until('the uncordon', () => w.seen.some((n) => n?.unschedulable === false));
    expect(w.seen.filter((n) => n?.unschedulable === true).length).toBeLessThanOrEqual(2);
    w.stop.abort();
    await w.done;
  });

  it('a deleted node is reported as undefined', async () => {
    const kube = new Kubectl({ runner: new Runner(), kubeconfig: sim.kubeconfigPath });
    const w = watch(kube, (await kube.getNode('w-1')).resourceVersion);
    await until('the watch request', () => watchRequests().length === 1);
    sim.deleteNode('w-1');
    await until('the deletion', () => w.seen.length === 1);
    expect(w.seen).toEqual([undefined]);
    w.stop.abort();
    await w.done;
  });

  it('a watch that keeps failing is given up: the promise rejects with the classified failure', async () => {
    const kube = new Kubectl({ runner: new Runner(), kubeconfig: sim.kubeconfigPath });
    sim.failNext(
      { method: 'GET', path: /^\/api\/v1\/nodes$/, count: 10 },
      { status: 403, reason: 'Forbidden', message: 'nodes is forbidden: cannot watch' },
    );
    const w = watch(kube, (await kube.getNode('w-1')).resourceVersion);
    await expect(w.done).rejects.toMatchObject({ kind: 'forbidden' });
  });
});
