// End to end: what the main step decided to leave is exactly what the post step leaves. The bundle
// (dist/index.js, then dist/cleanup.js with the state the main step saved) through the real kubectl on the twin.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { A, act, ann, byName, node, postStep, rebootReached, REVISION, requireKubectl, startCluster, verifiedRev } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

const ownerOf = (stdout: string): string => /claim token for this run: (\S+)/.exec(stdout)?.[1] ?? '';

describe('e2e: a node another actor changed while this run held it is left exactly as they set it, by main and post', () => {
  it.each([
    [
      'the autoscaler marks it for deletion during the drain',
      (o: any) => {
        o.spec.taints = [...(o.spec.taints ?? []), { key: 'ToBeDeletedByClusterAutoscaler', value: '1764500000', effect: 'NoSchedule' }];
      },
    ],
    [
      'its InternalIP changes during the drain',
      (o: any) => {
        o.status.addresses = o.status.addresses.map((a: any) => (a.type === 'InternalIP' ? { ...a, address: '10.5.0.250' } : a));
      },
    ],
  ])('%s: not rebooted, and the post step does not uncordon or release it', async (_what, change) => {
    c = await startCluster();
    const cluster = c;
    cluster.kube.beforeWrite({ method: 'POST', path: /\/eviction$/, once: true }, () => cluster.kube.mutateNode('worker-1', change));
    const main = await act(cluster, { nodes: 'worker-1' });
    const owner = ownerOf(main.stdout);
    expect(main.exitCode).toBe(1);
    const d = byName(main)['worker-1'];
    expect(d.outcome, main.stdout).toBe('failed');
    expect(d.nextStep).toMatch(/left exactly as they set it/);
    expect(cluster.talos.mutatingCommands().filter((x) => x.command === 'reboot')).toEqual([]);
    const before = JSON.stringify({ spec: node(cluster, 'worker-1').spec, ann: ann(cluster, 'worker-1') });
    expect(node(cluster, 'worker-1').spec.unschedulable).toBe(true);
    expect(ann(cluster, 'worker-1')[A.owner]).toBe(owner);

    const post = await postStep(cluster, main);
    // Nothing written to the node by the post step: still cordoned, still claimed by this run.
    expect(node(cluster, 'worker-1').spec.unschedulable, post.stdout).toBe(true);
    expect(ann(cluster, 'worker-1')[A.owner]).toBe(owner);
    expect(JSON.stringify({ spec: node(cluster, 'worker-1').spec, ann: ann(cluster, 'worker-1') })).toBe(before);
    expect(post.annotations.some((a) => a.title === 'worker-1: released by the post step')).toBe(false);
    expect(post.exitCode).toBe(1);
    expect(post.annotations.some((a) => a.kind === 'error' && a.title.startsWith('worker-1'))).toBe(true);
  });
});

describe('e2e: however the run ends, the summary and the outputs list every node it touched', () => {
  it('a later listing finds two nodes sharing an InternalIP: the rolled node is reported, and nothing claims "nothing was changed"', async () => {
    c = await startCluster();
    const cluster = c;
    const shared = cluster.talos.node('worker-3').ip;
    cluster.kube.beforeWrite({ method: 'POST', path: /\/eviction$/, once: true }, () => {
      // A node registers during worker-1's drain with an address worker-3 already has.
      cluster.kube.addNode({ name: 'worker-7', ip: shared, role: 'worker' });
    });
    const r = await act(cluster, { nodes: 'worker-1' });
    expect(r.exitCode).toBe(1);
    expect(r.outputs.result).toBe('failed');
    expect(byName(r)['worker-1']?.outcome, r.stdout).toBe('rebooted');
    expect(r.outputs.rebooted).toBe('1');
    expect(verifiedRev(ann(cluster, 'worker-1'))).toBe(REVISION);
    expect(r.summary).toContain('worker-1');
    expect(r.summary).not.toContain('No node was processed');
    const failure = r.annotations.find((a) => a.kind === 'error' && a.message.includes(shared));
    expect(failure, r.stdout).toBeDefined();
    expect(`${failure!.message} ${r.summary}`).not.toMatch(/nothing was changed/i);
    expect(failure!.message).toMatch(/1 node\(s\) were already processed/);
  });

  it('cancelled while the run lists the nodes again at the end: the rebooted node is in the summary and the outputs', async () => {
    c = await startCluster();
    const cluster = c;
    // the node listings as the log shows them (one request over the channel each: `HTTP 200  GET /api/v1/nodes`)
    const listings = (out: string) => out.split('\n').filter((l) => /HTTP \d+\s+GET \/api\/v1\/nodes\s*$/.test(l)).length;
    // The kill arrives after the first listing again (during the pause before the second one).
    const r = await act(
      cluster,
      { nodes: 'worker-1' },
      { env: { ...cluster.env(), RAR_POLL_INTERVAL_MS: '300', RAR_RELIST_PAUSE_MS: '3000' }, killWhen: (out) => listings(out) >= 2 },
    );
    expect(r.stdout).toMatch(/received SIGINT/);
    expect(r.exitCode).toBe(1);
    expect(r.outputs.result).toBe('failed');
    expect(byName(r)['worker-1']?.outcome, r.stdout).toBe('rebooted');
    expect(r.outputs.rebooted).toBe('1');
    expect(r.summary).toContain('worker-1');
    expect(r.summary).not.toContain('No node was processed');
    expect(r.annotations.some((a) => a.kind === 'error' && /cancel/.test(a.message))).toBe(true);
    expect(verifiedRev(ann(cluster, 'worker-1'))).toBe(REVISION);
  });
});

describe('e2e: a run refused because the Lease is kept for a fenced node', () => {
  it('names the fenced node and the command that releases it', async () => {
    c = await startCluster();
    const cluster = c;
    // Stopped once its Reboot was sent, so worker-1 is left fenced whatever the machine's speed.
    const first = await act(cluster, { nodes: 'worker-1' }, { killOn: rebootReached(cluster, 'worker-1') });
    expect(first.exitCode).toBe(1);
    expect(ann(cluster, 'worker-1')[A.phase]).toBe('mutating');
    const second = await act(cluster, { nodes: 'worker-3' });
    expect(second.exitCode).toBe(1);
    const refusal = second.annotations.find((a) => a.kind === 'error' && /Lease .* is held by/.test(a.message));
    expect(refusal, second.stdout).toBeDefined();
    expect(refusal!.message).toMatch(/worker-1 \(phase=mutating/);
    expect(refusal!.message).toContain('patch node worker-1 --type=json');
    expect(cluster.talos.mutatingCommands().filter((x) => x.nodes.includes(cluster.talos.node('worker-3').ip))).toEqual([]);
  });
});

describe('e2e: the Lease is proven ours immediately before each mutation', () => {
  it('the Lease taken between the claim and the credential patch: no Talos mutation, the claim undone, the Lease left to its holder', async () => {
    c = await startCluster();
    const cluster = c;
    const thief = 'acme/platform/runs/777/attempts/1/5ca1ab1e';
    let patches = 0;
    // The second PATCH of worker-1 is phase=mutating; a person overwrites the Lease as it is applied.
    // The theft is made inside the write hook, not by an HTTP request from a setImmediate: on a loaded
    // machine such a request could arrive after the action's next read and the test would not test it.
    cluster.kube.beforeWrite({ method: 'PATCH', path: /^\/api\/v1\/nodes\/worker-1$/ }, () => {
      if (++patches === 2) cluster.kube.setLeaseHolder('kube-system', 'registry-auth-rollout', thief);
    });
    const r = await act(cluster, { nodes: 'worker-1' });
    expect(patches).toBeGreaterThanOrEqual(2);
    expect(r.exitCode).toBe(1);
    const d = byName(r)['worker-1'];
    expect(d.outcome, r.stdout).toBe('failed');
    expect(d.reason).toContain(thief);
    expect(cluster.talos.mutatingCommands()).toEqual([]);
    expect(ann(cluster, 'worker-1')[A.owner]).toBeUndefined();
    expect(node(cluster, 'worker-1').spec.unschedulable).toBeFalsy();
    expect(cluster.kube.lease('kube-system', 'registry-auth-rollout').spec.holderIdentity).toBe(thief);
  });
});
