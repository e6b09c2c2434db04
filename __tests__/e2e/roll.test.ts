// End to end: the bundled action, run as a runner would, through the real kubectl against the twin: a roll
// of the default cluster (the claim's races: claim-races.test.ts).
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NEW_CREDENTIAL, type SimCluster } from '../../sim/cluster.js';
import {
  A,
  act,
  assertNoSecret,
  byName,
  drainRequests,
  fromAction,
  node,
  REVISION,
  requireKubectl,
  startCluster,
  verifiedRev,
} from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

describe('e2e: a roll of the default cluster', () => {
  it('reboots the stale nodes, skips the fresh autoscaler node, keeps the operator cordon, and reports every decision', async () => {
    c = await startCluster();
    const run = await act(c);
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('processed');
    expect(run.outputs.rebooted).toBe('5');
    expect(run.outputs['reboots-skipped']).toBe('1');
    expect(run.outputs.refused).toBe('0');
    const d = byName(run);
    expect(Object.keys(d)).toEqual(['worker-1', 'worker-2', 'worker-3', 'cp-1', 'cp-2', 'cp-3']);
    expect(d['worker-3'].outcome).toBe('reboot-skipped');
    expect(d['worker-3'].evidence?.verdict).toBe('skip');
    for (const n of ['worker-1', 'worker-2', 'cp-1', 'cp-2', 'cp-3']) {
      expect(d[n].outcome).toBe('rebooted');
      expect(d[n].proof?.verdict).toBe('skip');
    }
    // Cluster afterwards: every node verified, nothing claimed, the operator's cordon kept.
    for (const n of c.kube.nodes()) {
      const a = n.metadata.annotations ?? {};
      expect(verifiedRev(a)).toBe(REVISION);
      expect(a[A.owner]).toBeUndefined();
      expect(a[A.phase]).toBeUndefined();
      expect(!!n.spec.unschedulable).toBe(n.metadata.name === 'worker-2');
      expect(n.status.conditions.find((x: any) => x.type === 'Ready').status).toBe('True');
    }
    expect(node(c, 'worker-2').metadata.annotations['ops.acme.io/cordon-reason']).toBe('disk replacement scheduled');
    // The skipped node was never drained or rebooted; its containerd kept running.
    expect(drainRequests(c, 'worker-3')).toEqual([]);
    expect(
      c.talos
        .mutatingCommands()
        .filter((x) => x.command === 'reboot')
        .map((x) => x.nodes[0])
        .sort(),
    ).toEqual(['cp-1', 'cp-2', 'cp-3', 'worker-1', 'worker-2'].map((n) => c!.talos.node(n).ip).sort());
    // Every node's containerd now holds the new credential: the kubelet can pull.
    for (const n of ['worker-1', 'worker-2', 'worker-3', 'cp-1', 'cp-2', 'cp-3']) {
      expect(c.talos.imagePull.pull(n, 'ghcr.io/acme/private:1').ok).toBe(true);
    }
    // The user sees it: an annotation per node starting with its name, and a summary row per node.
    const notices = run.annotations.filter((a) => a.kind === 'notice');
    expect(notices.map((a) => a.title.split(':')[0])).toEqual(['worker-1', 'worker-2', 'worker-3', 'cp-1', 'cp-2', 'cp-3']);
    expect(notices.find((a) => a.title.startsWith('worker-3'))!.title).toMatch(/skipped/);
    expect(run.summary).toContain('ghcr.io');
    expect(run.summary).toContain(REVISION);
    for (const n of ['worker-1', 'worker-2', 'worker-3', 'cp-1', 'cp-2', 'cp-3']) expect(run.summary).toContain(n);
    assertNoSecret(run, NEW_CREDENTIAL.password);
    // The Lease was taken and given back.
    expect(c.kube.lease('kube-system', 'registry-auth-rollout')?.spec?.holderIdentity ?? '').toBe('');
  });

  it('plan mode issues no mutating request and runs no mutating talosctl command', async () => {
    c = await startCluster();
    const run = await act(c, { mode: 'plan' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('planned');
    // the drain forecast's dry-run evictions (dryRun=All) are the only requests with a write verb, and change nothing
    const writes = c.kube.mutatingRequests();
    expect(writes.length).toBeGreaterThan(0);
    for (const w of writes) {
      expect(w.method).toBe('POST');
      expect(w.path).toMatch(/\/pods\/[^/]+\/eviction$/);
      expect(new URLSearchParams(w.query).getAll('dryRun')).toEqual(['All']);
    }
    expect(c.kube.podEvents.filter((e) => e.type === 'evicted')).toEqual([]);
    expect(c.talos.mutatingCommands()).toEqual([]);
    const d = byName(run);
    expect(d['worker-3'].outcome).toBe('planned-skip');
    expect(d['worker-1'].outcome).toBe('planned-reboot');
    expect(run.summary).toMatch(/planned/i);
  });

  it('a second run finds nothing to do', async () => {
    c = await startCluster();
    const nodePatches = () =>
      c!.kube.mutatingRequests().filter((r) => r.method === 'PATCH' && fromAction(r) && r.path.includes('/nodes/')).length;
    expect((await act(c, { nodes: 'worker-3' })).outputs.result).toBe('processed');
    expect(nodePatches()).toBe(3); // claim, phase=mutating, release
    const again = await act(c, { nodes: 'worker-3' });
    expect(again.exitCode).toBe(0);
    expect(again.outputs.result).toBe('clean');
    expect(nodePatches()).toBe(3);
  });
});
