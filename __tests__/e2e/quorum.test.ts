// End to end: the control-plane quorum gate counts etcd's own voters.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { talosctl } from '../sim-talos/helpers.js';
import { A, act, byName, node, requireKubectl, startCluster, isDrainRequest } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

describe('e2e: the control-plane quorum gate', () => {
  it('refuses a control-plane reboot when a peer’s etcd reports an alarm, and gives the node back', async () => {
    c = await startCluster();
    c.talos.setEtcd('cp-2', { alarm: 'NOSPACE' });
    const run = await act(c, { nodes: 'cp-1' });
    expect(run.exitCode).toBe(1);
    const d = byName(run)['cp-1'];
    expect(d.outcome).toBe('refused');
    expect(d.reason).toMatch(/NOSPACE/);
    expect(c.talos.mutatingCommands().filter((x) => x.command === 'reboot')).toEqual([]);
    expect(c.kube.requests.filter(isDrainRequest)).toEqual([]);
    expect(node(c, 'cp-1').spec.unschedulable).toBeFalsy();
    expect(node(c, 'cp-1').metadata.annotations?.[A.owner]).toBeUndefined();
  });

  it('refuses a control-plane reboot when two peers report the same InternalIP (one etcd asked twice is not two healthy peers)', async () => {
    const cluster = (c = await startCluster());
    const shared = cluster.talos.node('cp-2').ip;
    const own = cluster.talos.node('cp-3').ip;
    const setAddress = (ip: string) =>
      cluster.kube.mutateNode('cp-3', (n) => {
        n.status.addresses = n.status.addresses.map((a: { type: string }) => (a.type === 'InternalIP' ? { ...a, address: ip } : a));
      });
    // After the run read its inventory (which refuses a shared address outright): cp-3 reports cp-2's
    // address from the claim of cp-1 (its 1st PATCH) until cp-1 is released (its 3rd, after
    // phase=mutating), so the gate lists the control planes while two of them share an address, and
    // the run's final re-listing finds a sound inventory again.
    let patches = 0;
    cluster.kube.beforeWrite({ method: 'PATCH', path: /^\/api\/v1\/nodes\/cp-1$/ }, () => {
      const n = ++patches;
      if (n === 1) setImmediate(() => setAddress(shared));
      else if (n >= 3) setAddress(own);
    });
    const run = await act(cluster, { nodes: 'cp-1' });
    expect(run.exitCode, run.stdout).toBe(1);
    const d = byName(run)['cp-1'];
    expect(d.outcome, run.stdout).toBe('refused');
    expect(d.reason).toContain(`control planes cp-2, cp-3 report the same InternalIP ${shared}`);
    expect(cluster.talos.mutatingCommands().filter((x) => x.command === 'reboot')).toEqual([]);
    expect(cluster.kube.requests.filter(isDrainRequest)).toEqual([]);
    expect(node(cluster, 'cp-1').spec.unschedulable).toBeFalsy();
    expect(node(cluster, 'cp-1').metadata.annotations?.[A.owner]).toBeUndefined();
  });

  // etcd's member list is its own record: a voter without a Node (a control plane deleted with
  // `kubectl delete node` but never removed from etcd) is invisible to a gate that counts Nodes. With
  // three control planes and such a voter there are 4 voters: rebooting one leaves 2, below quorum (3).
  it.each([
    { path: 'the Talos API', cliPath: false },
    { path: 'talosctl', cliPath: true },
  ])(
    'refuses a control-plane reboot when etcd has a voter without a Node, naming it with the remove-member hint ($path)',
    async ({ cliPath }) => {
      const cluster = (c = await startCluster({ cliPath }));
      const orphan = cluster.talos.addEtcdMember({ id: '5e1f00d0c0ffee01', name: 'cp-0', address: '10.5.0.99' });
      const run = await act(cluster, { nodes: 'cp-1' });
      expect(run.exitCode, run.stdout).toBe(1);
      const d = byName(run)['cp-1'];
      expect(d.outcome, run.stdout).toBe('refused');
      const peer = cluster.talos.node('cp-2').ip;
      expect(d.reason).toContain(`etcd voter ${orphan} (name "cp-0", peer URL https://10.5.0.99:2380)`);
      expect(d.reason).toContain(`talosctl -n ${peer} etcd remove-member ${orphan}`);
      expect(d.reason).toContain('4 etcd voters: 2 would remain while cp-1 is down, quorum needs 3');
      expect(cluster.talos.mutatingCommands().filter((x) => x.command === 'reboot')).toEqual([]);
      expect(cluster.kube.requests.filter(isDrainRequest)).toEqual([]);
      expect(node(cluster, 'cp-1').spec.unschedulable).toBeFalsy();
      expect(node(cluster, 'cp-1').metadata.annotations?.[A.owner]).toBeUndefined();
    },
  );

  it('the remove-member hint, run as printed, clears the refusal: the next run reboots the control plane', async () => {
    const cluster = (c = await startCluster());
    const orphan = cluster.talos.addEtcdMember({ name: 'cp-0', address: '10.5.0.99' });
    const refused = await act(cluster, { nodes: 'cp-1' });
    expect(byName(refused)['cp-1'].outcome, refused.stdout).toBe('refused');
    const hint = /talosctl (-n \S+ etcd remove-member [0-9a-f]{16})/.exec(byName(refused)['cp-1'].reason);
    expect(hint?.[1]).toBe(`-n ${cluster.talos.node('cp-2').ip} etcd remove-member ${orphan}`);
    const removed = await talosctl(cluster.talos, hint![1].split(' '));
    expect(removed, removed.stderr).toMatchObject({ code: 0, stdout: '' });
    expect(cluster.talos.etcdMembers().map((m) => m.id)).not.toContain(orphan);
    const run = await act(cluster, { nodes: 'cp-1' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(byName(run)['cp-1'].outcome).toBe('rebooted');
  });

  it('a learner without a Node does not block: learners never vote', async () => {
    const cluster = (c = await startCluster());
    cluster.talos.addEtcdMember({ name: 'cp-4', address: '10.5.0.98', learner: true });
    const run = await act(cluster, { nodes: 'cp-1' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(byName(run)['cp-1'].outcome).toBe('rebooted');
  });
});
