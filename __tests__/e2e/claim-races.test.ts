// End to end: the claim under concurrent writes (the first bug): benign changes retried, real conflicts refused.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type SimCluster } from '../../sim/cluster.js';
import { A, act, byName, drainRequests, node, requireKubectl, startCluster } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

describe('e2e: the claim under concurrent writes (the first bug)', () => {
  it('a kubelet heartbeat landing between the claim’s read and its PATCH does not even cause a retry', async () => {
    c = await startCluster();
    let fired = 0;
    c.kube.beforeWrite({ method: 'PATCH', path: /^\/api\/v1\/nodes\/worker-1$/, once: true }, () => {
      fired++;
      c!.kube.heartbeat('worker-1');
    });
    const run = await act(c, { nodes: 'worker-1' });
    expect(fired).toBe(1);
    expect(run.exitCode, run.stdout).toBe(0);
    expect(byName(run)['worker-1'].claim).toEqual({ attempts: 1, conflicts: [] });
    expect(byName(run)['worker-1'].outcome).toBe('rebooted');
  });

  it('the cordon’s mirror taint re-written between the read and the PATCH: 422, re-read, retried, roll succeeds', async () => {
    c = await startCluster();
    c.kube.beforeWrite({ method: 'PATCH', path: /^\/api\/v1\/nodes\/worker-2$/, once: true }, () => {
      c!.kube.mutateNode('worker-2', (n) => {
        for (const t of n.spec.taints) if (t.key === 'node.kubernetes.io/unschedulable') t.timeAdded = '2026-11-30T00:00:00Z';
      });
    });
    const run = await act(c, { nodes: 'worker-2' });
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run)['worker-2'];
    expect(d.claim?.attempts).toBe(2);
    expect(d.claim?.conflicts.join(' ')).toMatch(/node.kubernetes.io\/unschedulable/);
    expect(run.annotations.some((a) => a.kind === 'warning' && a.title.startsWith('worker-2'))).toBe(true);
    expect(node(c, 'worker-2').spec.unschedulable).toBe(true);
  });

  it('a concurrent cordon at the same moment is refused: never drained, node left as the other actor set it', async () => {
    c = await startCluster();
    c.kube.beforeWrite({ method: 'PATCH', path: /^\/api\/v1\/nodes\/worker-1$/, once: true }, () => {
      c!.kube.mutateNode('worker-1', (n) => {
        n.spec.unschedulable = true;
      });
    });
    const run = await act(c, { nodes: 'worker-1' });
    expect(run.exitCode).toBe(1);
    expect(run.outputs.result).toBe('failed');
    expect(run.outputs.refused).toBe('1');
    const d = byName(run)['worker-1'];
    expect(d.outcome).toBe('refused');
    expect(d.reason).toMatch(/unschedulable/);
    expect(drainRequests(c, 'worker-1')).toEqual([]);
    expect(c.talos.mutatingCommands()).toEqual([]);
    expect(node(c, 'worker-1').spec.unschedulable).toBe(true);
    expect(node(c, 'worker-1').metadata.annotations?.[A.owner]).toBeUndefined();
    expect(run.annotations.some((a) => a.kind === 'error' && a.title.startsWith('worker-1'))).toBe(true);
  });

  it('another run’s owner annotation already on a node refuses the whole run before any mutation', async () => {
    c = await startCluster({ defaultNodes: false });
    c.addNode({
      name: 'worker-1',
      role: 'worker',
      annotations: { [A.owner]: 'acme/platform/runs/77/attempts/1/0a0b', [A.phase]: 'claimed' },
    });
    c.addNode({ name: 'worker-2', role: 'worker' });
    const run = await act(c);
    expect(run.exitCode).toBe(1);
    expect(run.outputs.result).toBe('failed');
    expect(run.stdout).toMatch(/worker-1/);
    expect(c.kube.mutatingRequests()).toEqual([]);
    expect(c.talos.mutatingCommands()).toEqual([]);
  });

  it('a node replaced (new uid) between the inventory and the claim is refused', async () => {
    c = await startCluster();
    c.kube.beforeWrite({ method: 'PATCH', path: /^\/api\/v1\/nodes\/worker-1$/, once: true }, () => c!.kube.replaceNode('worker-1'));
    const run = await act(c, { nodes: 'worker-1' });
    expect(run.exitCode).toBe(1);
    const d = byName(run)['worker-1'];
    expect(d.outcome).toBe('refused');
    expect(d.reason).toMatch(/uid/);
    expect(c.talos.mutatingCommands()).toEqual([]);
    expect(drainRequests(c, 'worker-1')).toEqual([]);
  });
});
