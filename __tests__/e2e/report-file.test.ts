// End to end: the report file and the old-credential verdict, from the bundle run as a runner would
// against the twin: the file parsed (its version, every node with its evidence, mode 0600, its path an
// output), and `old-credential-revocable` for a roll, a rerun with nothing left, a plan, and a run scoped
// to one pool while a node outside it lacks the marker (`selection-converged` beside it).
import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NEW_CREDENTIAL, type SimCluster } from '../../sim/cluster.js';
import { act, readReport, REVISION, requireKubectl, startCluster, verifiedMarker } from './helpers.js';

const NODES = ['worker-1', 'worker-2', 'worker-3', 'cp-1', 'cp-2', 'cp-3'];
let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

/** The report file of a run, checked against its schema (readReport) and for the credential. */
function reportOf(path: string | undefined): any {
  expect(path, 'the report-file output').toBeTruthy();
  expect(readFileSync(path!, 'utf8')).not.toContain(NEW_CREDENTIAL.password);
  return readReport(path!);
}

describe('e2e: the report file and the old-credential verdict', () => {
  it('a roll writes every node with its evidence into RUNNER_TEMP (0600); revocable once every node is verified, also on a rerun', async () => {
    c = await startCluster();
    const run = await act(c);
    expect(run.exitCode, run.stdout).toBe(0);
    const path = run.outputs['report-file'];
    const doc = reportOf(path);
    expect(statSync(path!).mode & 0o777).toBe(0o600);
    expect(basename(path!)).toMatch(/^talos-registry-auth-rollout-\d+-1-[0-9a-f]+\.json$/);
    expect(doc).toMatchObject({ schema: 'talos-registry-auth-rollout/run-report', version: 2, mode: 'apply', revision: REVISION });
    // version 2: the hosts rolled as a list (version 1: one comma-separated string)
    expect(doc.registry).toEqual(['ghcr.io']);
    expect(doc.result).toBe(run.outputs.result);
    expect(doc.run).toMatchObject({ repository: 'acme/platform', runAttempt: '1' });
    expect(doc.nodes.map((n: any) => n.name)).toEqual(NODES);
    for (const n of doc.nodes) {
      expect(n.evidence?.values?.files?.length, n.name).toBeGreaterThan(0);
      expect(n.steps.length, n.name).toBeGreaterThan(0);
    }
    expect(doc.nodes.find((n: any) => n.name === 'worker-2').proof.verdict).toBe('skip');
    expect(doc.timeline.nodes.map((n: any) => n.node)).toEqual(NODES);
    expect(doc.oldCredential).toMatchObject({ revocable: true, judged: 6, holders: [] });
    expect(run.outputs['old-credential-revocable']).toBe('true');
    expect(run.summary).toContain('<b>Old credential:</b> ✅ safe to revoke');

    // a rerun with nothing left: every node counts by its marker, though none is rolled
    const again = await act(c);
    expect(again.outputs.result).toBe('clean');
    expect(again.outputs['old-credential-revocable']).toBe('true');
    const clean = reportOf(again.outputs['report-file']);
    expect(clean.nodes).toEqual([]);
    expect(clean.upToDate).toHaveLength(6);
    expect(again.outputs['report-file']).not.toBe(path);
  });

  it('a plan writes its report too, and says the old credential is still held, node by node', async () => {
    c = await startCluster();
    const run = await act(c, { mode: 'plan' });
    expect(run.exitCode, run.stdout).toBe(0);
    const doc = reportOf(run.outputs['report-file']);
    expect(doc.mode).toBe('plan');
    expect(doc.nodes.map((n: any) => n.name)).toEqual(NODES);
    expect(run.outputs['old-credential-revocable']).toBe('false');
    expect(doc.oldCredential.holders.map((h: any) => [h.node, h.kind])).toEqual(
      ['cp-1', 'cp-2', 'cp-3', 'worker-1', 'worker-2', 'worker-3'].map((n) => [n, 'planned']),
    );
    expect(run.summary).toContain('not safe to revoke yet');
    expect(run.summary).toContain('<li><code>worker-1</code>');
  });

  it('a run scoped to a pool: false while a control plane outside the selector lacks the marker, named; true once the cluster converged', async () => {
    // the defect: `node-selector: pool=blue` rolled the pool and said `true` with cp-1 still on the old credential
    c = await startCluster({ defaultNodes: false });
    c.addNode({ name: 'blue-1', role: 'worker', current: true, labels: { pool: 'blue' } });
    // blue-2 verified this revision in an earlier run: it counts by its marker
    c.addNode({
      name: 'blue-2',
      role: 'worker',
      current: true,
      labels: { pool: 'blue' },
      annotations: verifiedMarker('ghcr.io'),
    });
    c.addNode({ name: 'cp-1', role: 'control-plane', current: true });
    const scoped = await act(c, { 'node-selector': 'pool=blue' });
    expect(scoped.exitCode, scoped.stdout).toBe(0);
    expect(scoped.outputs['reboots-skipped']).toBe('1');
    expect(scoped.outputs['old-credential-revocable']).toBe('false');
    expect(scoped.outputs['selection-converged']).toBe('true');
    expect(scoped.summary).toContain('not safe to revoke yet');
    expect(scoped.summary).toContain('<li><code>cp-1</code> (outside nodes/node-selector): no verified marker for ghcr.io');
    const doc = reportOf(scoped.outputs['report-file']);
    expect(doc.oldCredential).toMatchObject({ revocable: false, selectionConverged: true, judged: 3, outsideScope: 1 });
    expect(doc.oldCredential.holders.map((h: any) => [h.node, h.selected])).toEqual([['cp-1', false]]);

    // cp-1 verified meanwhile (as its own pool's job would leave it): the same scoped run, nothing left
    // to roll, now sees every node of the cluster carry the marker, so the old credential may go
    c.kube.mutateNode('cp-1', (o) => {
      o.metadata.annotations = { ...o.metadata.annotations, ...verifiedMarker('ghcr.io') };
    });
    const again = await act(c, { 'node-selector': 'pool=blue' });
    expect(again.outputs.result).toBe('clean');
    expect(again.outputs['old-credential-revocable']).toBe('true');
    expect(again.outputs['selection-converged']).toBe('true');
    expect(again.summary).toContain('✅ safe to revoke — all 3 node(s) of the cluster carry');
  });
});
