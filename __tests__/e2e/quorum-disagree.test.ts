// End to end: the quorum gate refuses while the peers disagree about the member list (a change in flight).
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { act, byName, requireKubectl, startCluster, isDrainRequest } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

describe('e2e: the control-plane quorum gate', () => {
  // Each peer answers its own etcd's copy of the member list. A peer that has not applied a membership
  // change yet answers an older copy: the gate cannot tell which copy is current, so it refuses.
  it.each([
    { path: 'the Talos API', cliPath: false },
    { path: 'talosctl', cliPath: true },
  ])('refuses while the peers disagree about the member list (a change in flight) ($path)', async ({ cliPath }) => {
    const cluster = (c = await startCluster({ cliPath }));
    cluster.talos.lagEtcdMemberList('cp-3');
    const learner = cluster.talos.addEtcdMember({ name: 'cp-4', address: '10.5.0.98', learner: true });
    const run = await act(cluster, { nodes: 'cp-1' });
    expect(run.exitCode, run.stdout).toBe(1);
    const d = byName(run)['cp-1'];
    expect(d.outcome, run.stdout).toBe('refused');
    expect(d.reason).toContain("peers disagree about etcd's member list");
    expect(d.reason).toContain(learner);
    expect(cluster.talos.mutatingCommands().filter((x) => x.command === 'reboot')).toEqual([]);
    expect(cluster.kube.requests.filter(isDrainRequest)).toEqual([]);
    // once the peer caught up the learner does not block (learners never vote)
    cluster.talos.lagEtcdMemberList('cp-3', true);
    const again = await act(cluster, { nodes: 'cp-1' });
    expect(byName(again)['cp-1'].outcome, again.stdout).toBe('rebooted');
  });
});
