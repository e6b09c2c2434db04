// End to end: the claim holds for as long as the drain evicts; another actor's write ends the drain at once.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { A, act, byName, requireKubectl, isDrainRequest, startCluster } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
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
      // Ended at once: the drain would retry the held pod's eviction 5 s after its refusal. The attempt the
      // other actor acted in was the last one, and no request of the drain reached the twin later than 4 s
      // after that write (one already in flight may land; 4 s, not less: the guard's watch event and the
      // drain's end are work of a process a loaded machine may hold back for a second or two).
      expect(cluster.kube.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pods/web-1/eviction'))).toHaveLength(2);
      const drainAfter = cluster.kube.requests.filter((r) => isDrainRequest(r) && r.at > actedAt + 4000);
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
