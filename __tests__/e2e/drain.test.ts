// End to end: drain, PodDisruptionBudgets and the control-plane quorum gate.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { talosctl } from '../sim-talos/helpers.js';
import { A, act, byName, node, requireKubectl, startCluster } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

describe('e2e: drain and PodDisruptionBudgets', () => {
  it('a PDB that blocks for a while then allows: the drain waits and the roll succeeds', async () => {
    c = await startCluster();
    c.kube.setPdbAllowed('default', 'web', 0);
    // Lift the budget only once the drain has been refused at least once, whatever the machine's load.
    let refusedAt = 0;
    const t = setInterval(() => {
      if (!refusedAt && c!.kube.requests.some((r) => r.method === 'POST' && r.path.endsWith('/pods/web-1/eviction') && r.status === 429)) {
        refusedAt = Date.now();
        setTimeout(() => c!.kube.setPdbAllowed('default', 'web', 1), 1000);
      }
    }, 100);
    const run = await act(c, { nodes: 'worker-1' });
    clearInterval(t);
    expect(run.exitCode, run.stdout).toBe(0);
    expect(byName(run)['worker-1'].outcome).toBe('rebooted');
    expect(refusedAt).toBeGreaterThan(0);
    expect(c.kube.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pods/web-1/eviction')).map((r) => r.status)).toContain(
      429,
    );
    expect(c.kube.pods().some((p: any) => p.metadata.name === 'web-1')).toBe(false);
  });

  it('a PDB that never allows: the drain times out, schedulability is restored and the step fails', async () => {
    c = await startCluster();
    c.kube.setPdbAllowed('default', 'web', 0);
    const run = await act(c, { nodes: 'worker-1', 'drain-timeout': '6s' });
    expect(run.exitCode).toBe(1);
    expect(run.outputs.result).toBe('failed');
    const d = byName(run)['worker-1'];
    expect(d.outcome).toBe('failed');
    expect(d.reason).toMatch(/drain failed/);
    const n = node(c, 'worker-1');
    expect(n.spec.unschedulable).toBeFalsy();
    expect(n.metadata.annotations?.[A.owner]).toBeUndefined();
    expect(n.metadata.annotations?.[A.verified]).toBeUndefined();
    expect(c.talos.mutatingCommands().filter((x) => x.command === 'reboot')).toEqual([]);
    expect(c.kube.pods().some((p: any) => p.metadata.name === 'web-1')).toBe(true);
  });
});

describe('e2e: the claim holds for as long as the drain evicts', () => {
  const OTHER = 'acme/other/runs/7/attempts/1/ffff';
  const otherActors: Array<[string, (c: SimCluster) => void, RegExp]> = [
    ['replaces the owner annotation', (c) => c.kube.mutateNode('worker-1', (n) => (n.metadata.annotations[A.owner] = OTHER)), /is held by/],
    ['uncordons the node', (c) => c.kube.mutateNode('worker-1', (n) => (n.spec.unschedulable = false)), /uncordoned/],
    // a re-created node reaches a watch as DELETED, then ADDED with the new uid
    ['re-creates the node with a new uid', (c) => c.kube.replaceNode('worker-1'), /worker-1 was deleted/],
  ];
  for (const [what, otherActor, reason] of otherActors) {
    it(`another actor ${what} while the drain evicts: the drain is ended at once, the node left as set, reported like the guard`, async () => {
      const cluster = (c = await startCluster());
      // A pod that goes at once, and one a PDB holds (kubectl retries its eviction every 5 s until
      // --timeout): the other actor acts just before the held pod's second eviction attempt.
      cluster.kube.addPod({ namespace: 'default', name: 'batch-1', nodeName: 'worker-1', owner: { kind: 'ReplicaSet', name: 'batch-5f' } });
      cluster.kube.setPdbAllowed('default', 'web', 0);
      let actedAt = 0;
      let attempts = 0;
      cluster.kube.beforeWrite({ method: 'POST', path: /\/pods\/web-1\/eviction$/ }, () => {
        if (++attempts !== 2) return;
        otherActor(cluster);
        actedAt = Date.now();
      });
      const run = await act(cluster, { nodes: 'worker-1' }); // drain-timeout 30s
      expect(actedAt, run.stdout).toBeGreaterThan(0);
      const d = byName(run)['worker-1'];
      expect(run.exitCode, run.stdout).toBe(1);
      expect(d.outcome).toBe('failed');
      expect(d.reason).toMatch(/^guard failed during the drain \(the drain was ended at once\): /);
      expect(d.reason).toMatch(reason);
      // Ended at once: kubectl would retry the held pod's eviction 5 s after its refusal; no request of
      // the drain reached the twin after the other actor's write (one already in flight may land).
      const drainAfter = cluster.kube.requests.filter((r) => r.command === 'kubectl drain' && r.at > actedAt + 1000);
      expect(drainAfter).toEqual([]);
      // The pod the PDB held was never evicted; the other one was, before the other actor acted.
      const web1 = cluster.kube.pods().find((p: any) => p.metadata.name === 'web-1');
      expect(web1?.metadata.deletionTimestamp).toBeUndefined();
      expect(
        cluster.kube.requests.filter((r) => r.path.endsWith('/pods/batch-1/eviction') && r.status === 201 && r.at < actedAt),
      ).toHaveLength(1);
      expect(cluster.kube.requests.filter((r) => r.path.endsWith('/pods/web-1/eviction') && r.status === 201)).toEqual([]);
      // Left as set: the run wrote nothing to the node after the other actor, and rebooted nothing.
      expect(cluster.kube.requests.filter((r) => r.method === 'PATCH' && r.path === '/api/v1/nodes/worker-1' && r.at > actedAt)).toEqual(
        [],
      );
      expect(cluster.talos.mutatingCommands().filter((x) => x.command === 'reboot')).toEqual([]);
    });
  }
});

describe('e2e: the node lifecycle controller during a drain is no other actor', () => {
  it('a network blip of the kubelet while a PDB holds the drain: unreachable comes and goes, the drain goes on, the node is rolled', async () => {
    const cluster = (c = await startCluster());
    cluster.kube.setPdbAllowed('default', 'web', 0);
    const unreachable = () => (node(cluster, 'worker-1').spec.taints ?? []).some((t: any) => t.key === 'node.kubernetes.io/unreachable');
    // On the first refused eviction (the drain is running and will retry in 5 s) the kubelet loses the
    // apiserver; once the lifecycle controller has tainted the node it comes back, the controller
    // removes the taints, and the PDB then allows the eviction.
    const seen = { taintedAt: 0, clearedAt: 0 };
    let attempts = 0;
    cluster.kube.beforeWrite({ method: 'POST', path: /\/pods\/web-1\/eviction$/ }, () => {
      if (++attempts === 1) cluster.kube.kubeletDisconnect('worker-1');
    });
    const t = setInterval(() => {
      if (!seen.taintedAt && unreachable()) {
        seen.taintedAt = Date.now();
        setTimeout(() => cluster.kube.kubeletReconnect('worker-1'), 1500);
      } else if (seen.taintedAt && !seen.clearedAt && !unreachable()) {
        seen.clearedAt = Date.now();
        setTimeout(() => cluster.kube.setPdbAllowed('default', 'web', 1), 500);
      }
    }, 50);
    const run = await act(cluster, { nodes: 'worker-1' }); // drain-timeout 30s
    clearInterval(t);
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run)['worker-1'];
    expect(d.outcome, d.reason).toBe('rebooted');
    // the taints came and went while the drain ran (from the twin's own request log)
    const drains = cluster.kube.requests.filter((r) => r.command === 'kubectl drain');
    expect(seen.taintedAt).toBeGreaterThan(drains[0].at);
    expect(seen.clearedAt).toBeGreaterThan(seen.taintedAt);
    expect(drains.at(-1)!.at).toBeGreaterThan(seen.clearedAt);
    // the held pod was evicted once the PDB allowed it, and the node came back schedulable and verified
    expect(cluster.kube.requests.filter((r) => r.path.endsWith('/pods/web-1/eviction') && r.status === 201)).toHaveLength(1);
    expect(node(cluster, 'worker-1').spec.unschedulable).toBeFalsy();
    expect(node(cluster, 'worker-1').metadata.annotations?.[A.verified]).toBeDefined();
  });
});

describe('e2e: a zero drain-timeout', () => {
  it('is an input error naming the input before any command runs (kubectl would read 0 as "wait forever")', async () => {
    const cluster = (c = await startCluster());
    const run = await act(cluster, { nodes: 'worker-1', 'drain-timeout': '0m' });
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toContain('input "drain-timeout": "0m" must be longer than zero');
    expect(cluster.kube.requests).toEqual([]);
    expect(cluster.talos.commands).toEqual([]);
  });
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
    expect(c.kube.requests.filter((r) => r.command === 'kubectl drain')).toEqual([]);
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
    expect(cluster.kube.requests.filter((r) => r.command === 'kubectl drain')).toEqual([]);
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
      expect(cluster.kube.requests.filter((r) => r.command === 'kubectl drain')).toEqual([]);
      expect(node(cluster, 'cp-1').spec.unschedulable).toBeFalsy();
      expect(node(cluster, 'cp-1').metadata.annotations?.[A.owner]).toBeUndefined();
    },
  );

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
    expect(cluster.kube.requests.filter((r) => r.command === 'kubectl drain')).toEqual([]);
    // once the peer caught up the learner does not block (learners never vote)
    cluster.talos.lagEtcdMemberList('cp-3', true);
    const again = await act(cluster, { nodes: 'cp-1' });
    expect(byName(again)['cp-1'].outcome, again.stdout).toBe('rebooted');
  });

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
