// End to end through the bundle: the health gates (docs/gates.md). A Longhorn volume degraded by the
// first node's reboot holds the next node's claim until its replica was rebuilt; a user CEL gate over a
// custom resource holds the claim while false, and one that stays false past gate-timeout ends the run
// partial naming the gate and its last value, nothing claimed; a malformed expression and an unserved
// kind are input errors with nothing touched.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { exampleDbClusters } from '../../sim/kube/resources.js';
import { A, act, REVISION, requireKubectl, startCluster, verifiedRev } from './helpers.js';
import { addWorkers } from './parallelWorkers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

const DB = exampleDbClusters;
const DB_GATE = `- name: db-ready
  kind: DbCluster
  group: example.com
  namespace: db
  expression: self.status.ready == true
`;

/** When the twin first stored `node` carrying a claim (its owner annotation). */
const claimedAt = (cl: SimCluster, node: string) => cl.kube.nodeWrites.find((w) => w.node === node && w.annotations[A.owner])?.at;

describe('e2e: health gates', () => {
  it('storage: a Longhorn volume degraded by the first reboot holds the next claim until it is healthy again', async () => {
    c = await startCluster({ defaultNodes: false });
    addWorkers(c, ['w-1', 'w-2']);
    // The rebuild must outlast what w-1's run does after Ready (the proof read, the release), or w-2's
    // start is never held (the gate untested): a fixed rebuildMs (5 s, then 15 s) was outlasted on a
    // loaded runner. So the rebuild is held until the gate is seen holding w-2's start: after w-1's
    // release the gate has read the volumes twice (its first read found it degraded, and it polled again).
    const cl = c;
    const lh = cl.kube.installLonghorn({ rebuildMs: 1000 });
    lh.holdRebuilds();
    // replicas on w-1 and on a storage node outside the roll: w-1's reboot degrades it, never faults it
    lh.add('pvc-data', ['w-1', 'storage-1']);
    const released = cl.kube.nodeWrites.length;
    const volumeReads = (t: number) =>
      cl.kube.requests.filter(
        (r) => r.method === 'GET' && /^\/apis\/longhorn\.io\/[^/]+\/(namespaces\/[^/]+\/)?volumes$/.test(r.path) && r.at >= t,
      );
    let w1ReleasedAt = 0;
    const t = setInterval(() => {
      if (!w1ReleasedAt) {
        const writes = cl.kube.nodeWrites.slice(released).filter((w) => w.node === 'w-1');
        const claimed = writes.findIndex((w) => w.annotations[A.owner]);
        const back = claimed < 0 ? undefined : writes.slice(claimed).find((w) => !w.annotations[A.owner]);
        if (back) w1ReleasedAt = back.at;
      } else if (volumeReads(w1ReleasedAt).length >= 2) {
        clearInterval(t);
        lh.releaseRebuilds();
      }
    }, 50);
    const run = await act(cl, { 'storage-gate': 'true' }).finally(() => clearInterval(t));
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('processed');
    const degraded = lh.transitions.find((t) => t.robustness === 'degraded')!;
    const healthy = lh.transitions.filter((t) => t.robustness === 'healthy').at(-1)!;
    expect(degraded.at).toBeLessThan(healthy.at);
    expect(claimedAt(c, 'w-1')!).toBeLessThan(degraded.at);
    // w-2 was claimed only once the rebuild ended
    expect(claimedAt(c, 'w-2')!).toBeGreaterThanOrEqual(healthy.at);
    expect(run.stdout).toContain(
      'health gates: new starts (next: w-2) wait for storage/longhorn-volumes: Volume longhorn-system/pvc-data: robustness degraded',
    );
    for (const n of ['w-1', 'w-2']) expect(verifiedRev(c.kube.node(n).metadata.annotations)).toBe(REVISION);
  });

  it('a CEL gate over a custom resource: false past gate-timeout ends the run partial, nothing claimed; false for a while holds the claim', async () => {
    c = await startCluster({ defaultNodes: false });
    addWorkers(c, ['w-1']);
    c.kube.installCrd(DB);
    c.kube.createObject(DB, 'db', {
      apiVersion: 'example.com/v1',
      kind: 'DbCluster',
      metadata: { name: 'pg', namespace: 'db' },
      spec: {},
      status: { ready: false },
    });
    const stuck = await act(c, { 'health-gates': DB_GATE, 'gate-timeout': '3s' });
    expect(stuck.exitCode, stuck.stdout).toBe(0);
    expect(stuck.outputs.result).toBe('partial');
    expect(stuck.outputs.left).toBe('1');
    const notice = stuck.annotations.find((a) => a.kind === 'notice')?.message ?? '';
    expect(notice).toContain('health gate db-ready stayed false for 3.0 s (gate-timeout): db-ready: DbCluster db/pg: false');
    expect(claimedAt(c, 'w-1')).toBeUndefined();

    // turns true once the next run has read it false twice (it polled again): its claim waits for it.
    // Counted in the run's reads, not 4 s of wall time, which a loaded machine's bundle start-up can
    // outlast (the gate then read true at once and nothing was held).
    const cl = c;
    const since = cl.kube.requests.length;
    const dbReads = () =>
      cl.kube.requests
        .slice(since)
        .filter((r) => r.method === 'GET' && /^\/apis\/example\.com\/[^/]+\/(namespaces\/db\/)?dbclusters\b/.test(r.path));
    let flippedAt = 0;
    let readsBefore = 0;
    const flip = setInterval(() => {
      if (dbReads().length >= 2) {
        clearInterval(flip);
        readsBefore = dbReads().length;
        flippedAt = Date.now();
        cl.kube.setStatus(DB, 'db', 'pg', { ready: true });
      }
    }, 50);
    const run = await act(c, { 'health-gates': DB_GATE, 'gate-timeout': '1m' }).finally(() => clearInterval(flip));
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('processed');
    expect(flippedAt).toBeGreaterThan(0);
    expect(readsBefore).toBeGreaterThanOrEqual(2);
    expect(claimedAt(c, 'w-1')!).toBeGreaterThanOrEqual(flippedAt);
  });

  it('a malformed expression, or a kind the cluster does not serve, is an input error with nothing touched', async () => {
    c = await startCluster({ defaultNodes: false });
    addWorkers(c, ['w-1']);
    const bad = await act(c, { 'health-gates': '- {name: db, kind: DbCluster, group: example.com, expression: "self.status.ready =="}' });
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stdout).toMatch(/input "health-gates": gate "db": expression does not compile/);
    const unserved = await act(c, { 'health-gates': DB_GATE });
    expect(unserved.exitCode).not.toBe(0);
    expect(unserved.stdout).toContain('input "health-gates": gate "db-ready": the cluster serves no kind DbCluster.example.com');
    expect(c.kube.mutatingRequests()).toEqual([]);
  });
});
