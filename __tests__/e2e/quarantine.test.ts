// End to end: `undrainable: quarantine` against the twin. A PodDisruptionBudget that never allows an
// eviction on one worker of three: the drain times out on it, the bundle quarantines it
// and rolls the other two; a rerun once the PDB allows the eviction rolls it and lifts the quarantine.
// Checked from the twin's own records (its reboot log, the node as stored), not from what the action says.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { parseQuarantine } from '../../src/rules/quarantine.js';
import { A, act, ann, byName, node, postStep, REVISION, requireKubectl, startCluster, verifiedRev } from './helpers.js';
import { blockedCluster, QUARANTINE_INPUTS, QUARANTINED, WORKERS } from './quarantineCluster.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

const rebooted = (cluster: SimCluster): string[] =>
  WORKERS.filter((w) => cluster.talos.mutatingCommands().some((x) => x.command === 'reboot' && x.nodes.includes(cluster.talos.node(w).ip)));

describe('e2e: undrainable: quarantine', () => {
  it('quarantines the worker a PDB blocks (cordoned, not rebooted, annotated, named), rolls the other two, fails; a rerun after the PDB is lifted rolls it and restores it', async () => {
    const cluster = (c = await blockedCluster());
    const run = await act(cluster, QUARANTINE_INPUTS);
    expect(run.exitCode, run.stdout).toBe(1);
    expect(run.outputs.result).toBe('failed');
    const d = byName(run);
    expect(WORKERS.map((w) => d[w].outcome)).toEqual(['rebooted', 'quarantined', 'rebooted']);
    expect(run.outputs.left).toBe('0');

    // The twin's reboot log: worker-2 was never rebooted.
    expect(rebooted(cluster)).toEqual(['worker-1', 'worker-3']);
    // The twin's node: cordoned, no claim, no verified revision, the quarantine recorded.
    const w2 = node(cluster, 'worker-2');
    expect(w2.spec.unschedulable).toBe(true);
    expect(ann(cluster, 'worker-2')[A.owner]).toBeUndefined();
    expect(ann(cluster, 'worker-2')[A.phase]).toBeUndefined();
    expect(ann(cluster, 'worker-2')[A.verified]).toBeUndefined();
    expect(parseQuarantine(ann(cluster, 'worker-2')[QUARANTINED])).toMatchObject({
      ok: true,
      record: {
        reason: 'drain-timeout',
        wasCordoned: false,
        blockedBy: [{ pdb: 'shop/db', status: { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 }, pods: ['shop/db-0'] }],
      },
    });
    // The pod the PDB protects is still there.
    expect(cluster.kube.pods().some((p: any) => p.metadata.name === 'db-0' && p.spec.nodeName === 'worker-2')).toBe(true);
    // The others were given back schedulable and verified.
    for (const w of ['worker-1', 'worker-3']) {
      expect(node(cluster, w).spec.unschedulable).toBeFalsy();
      expect(verifiedRev(ann(cluster, w))).toBe(REVISION);
    }

    // Named in the summary row (old credential, lift) and in the error.
    const row = run.summary.split('\n').find((l) => l.startsWith('<tr><td>worker-2</td>'));
    expect(row).toContain('quarantined');
    expect(row).toContain('OLD credential');
    expect(row).toContain('let PodDisruptionBudget shop/db allow the eviction, then rerun');
    const failure = run.annotations.find((a) => a.kind === 'error' && a.message.includes('node(s) quarantined'));
    expect(failure?.message).toContain('worker-2: drain timed out after 4.0 s, blocked by PodDisruptionBudget shop/db');
    expect(failure?.message).toContain('patch node worker-2 --type=json');
    expect(run.annotations.some((a) => a.kind === 'error' && a.title === 'worker-2: quarantined')).toBe(true);

    // No claim is left: the Lease went back, and the post step has nothing to do.
    expect(cluster.kube.lease('kube-system', 'registry-auth-rollout')?.spec?.holderIdentity ?? '').toBe('');
    const post = await postStep(cluster, run);
    expect(post.exitCode, post.stdout).toBe(0);
    expect(node(cluster, 'worker-2').spec.unschedulable).toBe(true);

    // The PDB is lifted: the rerun rolls worker-2 (rebooted now) and gives it back schedulable.
    cluster.kube.setPdbAllowed('shop', 'db', 1);
    const again = await act(cluster, QUARANTINE_INPUTS);
    expect(again.exitCode, again.stdout).toBe(0);
    expect(again.outputs.result).toBe('processed');
    expect(Object.keys(byName(again))).toEqual(['worker-2']);
    expect(byName(again)['worker-2'].outcome).toBe('rebooted');
    expect(rebooted(cluster)).toEqual(WORKERS);
    expect(node(cluster, 'worker-2').spec.unschedulable).toBeFalsy();
    expect(ann(cluster, 'worker-2')[QUARANTINED]).toBeUndefined();
    expect(verifiedRev(ann(cluster, 'worker-2'))).toBe(REVISION);
  });

  it('an unknown undrainable is an input error before any command runs', async () => {
    const cluster = (c = await startCluster());
    const run = await act(cluster, { undrainable: 'skip' });
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toContain('input "undrainable": "skip" is not one of stop, quarantine');
    expect(cluster.kube.requests).toEqual([]);
    expect(cluster.talos.commands).toEqual([]);
  });

  it('mode: fences lists the quarantined node with what blocked it and how to lift it', async () => {
    const cluster = (c = await blockedCluster());
    const run = await act(cluster, { ...QUARANTINE_INPUTS, nodes: 'worker-2' });
    expect(byName(run)['worker-2'].outcome, run.stdout).toBe('quarantined');
    const fences = await act(cluster, { mode: 'fences' });
    expect(fences.exitCode, fences.stdout).toBe(0);
    expect(fences.summary).toContain('Quarantined: 1 node left cordoned');
    expect(fences.summary).toContain('<td>worker-2</td>');
    expect(fences.summary).toContain('PodDisruptionBudget shop/db');
    expect(fences.summary).toContain('worker-2: how to lift the quarantine');
    // recover-fences leaves it alone: it is no claim
    const recover = await act(cluster, { mode: 'recover-fences' });
    expect(recover.exitCode, recover.stdout).toBe(0);
    expect(node(cluster, 'worker-2').spec.unschedulable).toBe(true);
    expect(ann(cluster, 'worker-2')[QUARANTINED]).toBeDefined();
  });
});
