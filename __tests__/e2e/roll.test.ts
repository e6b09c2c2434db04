// End to end: the bundled action, run as a runner would, through the real kubectl against the twin.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NEW_CREDENTIAL, type SimCluster } from '../../sim/cluster.js';
import { A, act, assertNoSecret, byName, drainRequests, node, REVISION, requireKubectl, startCluster } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

describe('e2e: a roll of the default cluster', () => {
  it(
    'reboots the stale nodes, skips the fresh autoscaler node, keeps the operator cordon, and reports every decision',
    { timeout: 120_000 },
    async () => {
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
        expect(a[A.verified]).toBe(REVISION);
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
    },
  );

  it('plan mode issues no mutating request and runs no mutating talosctl command', async () => {
    c = await startCluster();
    const run = await act(c, { mode: 'plan' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('planned');
    expect(c.kube.mutatingRequests()).toEqual([]);
    expect(c.talos.mutatingCommands()).toEqual([]);
    const d = byName(run);
    expect(d['worker-3'].outcome).toBe('planned-skip');
    expect(d['worker-1'].outcome).toBe('planned-reboot');
    expect(run.summary).toMatch(/planned/i);
  });

  it('a second run finds nothing to do', async () => {
    c = await startCluster();
    const nodePatches = () => c!.kube.mutatingRequests().filter((r) => r.command === 'kubectl patch' && r.path.includes('/nodes/')).length;
    expect((await act(c, { nodes: 'worker-3' })).outputs.result).toBe('processed');
    expect(nodePatches()).toBe(3); // claim, phase=mutating, release
    const again = await act(c, { nodes: 'worker-3' });
    expect(again.exitCode).toBe(0);
    expect(again.outputs.result).toBe('clean');
    expect(nodePatches()).toBe(3);
  });
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
