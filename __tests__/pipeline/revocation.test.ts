// The old-credential verdict as the apply/plan mode reports it: judged on the run's last node listing,
// every node of the cluster counted (those already verified, and those outside the selection, too), this
// run's failures holding it; the selection's own answer beside it.
import { describe, expect, it } from 'vitest';
import { parseLabelSelector } from '../../src/core/labelSelector.js';
import { ToolError } from '../../src/core/errors.js';
import { runRolloutMode } from '../../src/pipeline/rolloutMode.js';
import type { Config } from '../../src/core/config.js';
import { keys, makeCluster, OWNER, rolloutDeps, provenMarker } from './harness.js';

function mode(c: ReturnType<typeof makeCluster>, over: Partial<Config> = {}) {
  return runRolloutMode(rolloutDeps(c, over));
}

describe('runRolloutMode: may the old credential be revoked', () => {
  it('true after a roll: the nodes rolled and the one skipped as already verified, judged on the listing after the roll', async () => {
    const c = makeCluster([
      { name: 'w1' },
      { name: 'w2', current: true },
      { name: 'w3', annotations: { [keys.verified]: provenMarker('rev-2') } },
    ]);
    const report = await mode(c);
    expect(report.records.map((r) => r.node)).toEqual(['w1', 'w2']);
    expect(report.upToDate).toEqual(['w3']);
    expect(report.revocation).toMatchObject({ revocable: true, selectionConverged: true, judged: 3, outsideScope: 0, holders: [] });
    expect(report.owner).toBe(OWNER);
  });

  it('false when a node of the selection failed, naming it, the one never reached and the one outside the selector', async () => {
    const c = makeCluster([{ name: 'w1', labels: { pool: 'a' } }, { name: 'w2', labels: { pool: 'a' } }, { name: 'w9' }]);
    c.kube.drainError = new ToolError({
      tool: 'kubectl',
      command: 'kubectl drain w1',
      kind: 'timeout',
      exitCode: 1,
      stderr: 'timeout',
      node: 'w1',
    });
    const report = await mode(c, { nodeSelector: parseLabelSelector('pool=a') });
    expect(report.result).toBe('failed');
    expect(report.revocation?.revocable).toBe(false);
    expect(report.revocation?.holders.map((h) => [h.node, h.kind, h.selected])).toEqual([
      ['w1', 'failed', true],
      ['w2', 'not-reached', true],
      ['w9', 'not-verified', false],
    ]);
    expect(report.revocation).toMatchObject({ outsideScope: 1, selectionConverged: false });
  });

  it('a scoped run that rolled its pool: not revocable while a control plane outside the selector lacks the marker', async () => {
    const c = makeCluster([
      { name: 'blue-1', labels: { pool: 'blue' } },
      { name: 'blue-2', labels: { pool: 'blue' } },
      { name: 'cp-1', role: 'control-plane' },
    ]);
    const report = await mode(c, { nodeSelector: parseLabelSelector('pool=blue') });
    expect(report.result).toBe('processed');
    expect(report.records.map((r) => r.node)).toEqual(['blue-1', 'blue-2']);
    // one listing of every node per pass, the selector matched against it: the first, and the two after the
    // roll that find nothing new (no second listing filtered by kubectl)
    expect(c.kube.calls.filter((x) => x.method === 'listNodes')).toHaveLength(3);
    expect(report.revocation).toMatchObject({ revocable: false, selectionConverged: true, judged: 3, outsideScope: 1 });
    expect(report.revocation?.holders).toEqual([
      expect.objectContaining({
        node: 'cp-1',
        kind: 'not-verified',
        selected: false,
        why: expect.stringContaining('outside nodes/node-selector'),
      }),
    ]);

    // once the control plane carries the marker too, the whole cluster has converged: true
    c.kube.mutate('cp-1', (o) => {
      o.metadata.annotations = { ...o.metadata.annotations, [keys.verified]: provenMarker('rev-2') };
    });
    const again = await mode(c, { nodeSelector: parseLabelSelector('pool=blue') });
    expect(again.result).toBe('clean');
    expect(again.revocation).toMatchObject({ revocable: true, selectionConverged: true, judged: 3, outsideScope: 1, holders: [] });
  });

  it('plan: what is true before the roll; a bad input: no listing, never safe', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const plan = await mode(c, { mode: 'plan' });
    expect(plan.revocation?.holders.map((h) => h.kind)).toEqual(['planned']);
    const bad = await mode(c, { nodes: ['nope'] });
    expect(bad.revocation).toMatchObject({ revocable: false, selectionConverged: false, judged: 0 });
  });
});
