// End to end: the verified marker says how each host was proven, and a node whose proof was undecided
// keeps `old-credential-revocable` false in every later run until a later run proves it.
//
// The first run reboots a Talos 1.13 node through talosctl, whose second-rounded instants cannot order
// its 0.6 s boot gap, and has no verify-image: the node is released with a warning. The merge queue's
// next run has nothing to roll; before, it judged the markers alone and said `true`. Now the marker's
// entry says the proof was undecided: that run reads the evidence again (a Talos read, nothing written:
// the same boot, still undecided) and says `false`, naming the node and why. A run with verify-image
// proves it by a pull through containerd, without a claim, a drain or a reboot, and says `true`.
// A marker written before the marker said how (no `proof`) is read as not proven: a converged run
// proves it by the evidence when it holds (a node whose containerd started after the config holding the
// desired credential was written), with no claim and no Talos mutation, and says `true`.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { A, act, ann, byName, node, readReport, REVISION, requireKubectl, startCluster } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

const VERIFY = { 'verify-image': 'ghcr.io/acme/private:1', 'verify-namespace': 'default' };

function entry(name: string, host = 'ghcr.io'): Record<string, unknown> {
  return (JSON.parse(ann(c!, name)[A.verified]) as Record<string, Record<string, unknown>>)[host];
}

/** Node writes other than the kubelet's heartbeats (status) and Events since `from`. */
function nodeWrites(from: number) {
  return c!.kube
    .mutatingRequests()
    .slice(from)
    .filter((r) => r.path.startsWith('/api/v1/nodes/') && !r.path.endsWith('/status'));
}

describe('e2e: the verified marker says how the node was proven', () => {
  it('an undecided proof keeps the old credential unrevocable in the converged rerun, naming the node; a rerun with verify-image proves it', async () => {
    c = await startCluster({ defaultNodes: false, cliPath: true, realisticTimings: true, bootGapMs: 600, bootWriteMsOfSecond: 100 });
    c.addNode({ name: 'worker-1', role: 'worker' });

    const first = await act(c);
    expect(first.exitCode, first.stdout).toBe(0);
    expect((byName(first)['worker-1'] as any).proofUndecided).toMatchObject({ settledBy: 'warning' });
    expect(first.outputs['old-credential-revocable']).toBe('false');
    expect(entry('worker-1')).toMatchObject({ revision: REVISION, proof: 'undecided' });

    // the merge queue's next run: nothing to roll
    const talosMutations = c.talos.mutatingCommands().length;
    const writes = c.kube.mutatingRequests().length;
    const queue = await act(c);
    expect(queue.exitCode, queue.stdout).toBe(0);
    expect(queue.outputs.result).toBe('clean');
    expect(queue.outputs['old-credential-revocable']).toBe('false');
    expect(queue.outputs['selection-converged']).toBe('false');
    const holders = readReport(queue.outputs['report-file']).oldCredential!.holders;
    expect(holders.map((h) => [h.node, h.kind])).toEqual([['worker-1', 'proof-undecided']]);
    expect(holders[0].why).toMatch(/undecided/);
    expect(holders[0].why).toMatch(/verify-image/);
    expect(queue.summary).toMatch(/<code>worker-1<\/code>: [^<]*undecided/);
    const warning = queue.annotations.find((a) => a.kind === 'warning' && a.title.startsWith('worker-1'));
    expect(warning?.title).toBe('worker-1: not proven, old-credential-revocable stays false');
    expect(warning?.message).toMatch(/Next step: To prove it, set verify-image/);
    // it tried: the evidence was read again (still undecided), nothing written, no Talos mutation
    expect(c.talos.mutatingCommands().length).toBe(talosMutations);
    expect(nodeWrites(writes)).toEqual([]);
    expect(ann(c, 'worker-1')[A.owner]).toBeUndefined();
    expect(entry('worker-1').proof).toBe('undecided');

    // a run with verify-image proves it: a pull, no claim, no drain, no reboot
    const bootId = c.talos.node('worker-1').bootID;
    const proving = await act(c, VERIFY);
    expect(proving.exitCode, proving.stdout).toBe(0);
    expect(proving.outputs.result).toBe('clean');
    expect(proving.outputs['old-credential-revocable'], proving.summary).toBe('true');
    expect(proving.outputs['selection-converged']).toBe('true');
    expect(c.talos.node('worker-1').bootID).toBe(bootId);
    expect(c.talos.mutatingCommands().length).toBe(talosMutations);
    expect(node(c, 'worker-1').spec.unschedulable).toBeFalsy();
    expect(entry('worker-1')).toMatchObject({ revision: REVISION, proof: 'verify-image', image: VERIFY['verify-image'] });
    expect(proving.summary).toMatch(/worker-1[^\n]*proven by a pull of ghcr\.io\/acme\/private:1/);

    // and the queue's next run says true again, reading only the node list
    const calls = c.talos.apiCalls.length;
    const again = await act(c);
    expect(again.outputs['old-credential-revocable']).toBe('true');
    expect(c.talos.apiCalls.length).toBe(calls);
  });

  it('a marker without `proof` (written before the marker said how) is proven by the evidence in a converged run, with no claim and no Talos mutation', async () => {
    c = await startCluster({ defaultNodes: false });
    c.addNode({
      name: 'worker-1',
      role: 'worker',
      current: true,
      annotations: { [A.verified]: JSON.stringify({ 'ghcr.io': { revision: REVISION, at: '2026-11-30T12:00:00.000Z' } }) },
    });
    const writes = c.kube.mutatingRequests().length;
    const run = await act(c);
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('clean');
    expect(run.outputs['old-credential-revocable'], run.summary).toBe('true');
    expect(c.talos.mutatingCommands()).toEqual([]);
    expect(entry('worker-1')).toMatchObject({ revision: REVISION, proof: 'evidence' });
    // the one node write: the marker's entry, nothing else (no cordon, no claim)
    const w = nodeWrites(writes);
    expect(w).toHaveLength(1);
    expect(node(c, 'worker-1').spec.unschedulable).toBeFalsy();
    expect(ann(c, 'worker-1')[A.owner]).toBeUndefined();
  });
});
