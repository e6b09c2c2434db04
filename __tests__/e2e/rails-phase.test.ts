// End to end: what the main step decided to leave is exactly what the post step leaves. The bundle
// (dist/index.js, then dist/cleanup.js with the state the main step saved) through the real kubectl on the twin.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { A, act, ann, byName, node, postStep, requireKubectl, startCluster } from './helpers.js';

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
