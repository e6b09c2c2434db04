// The old-credential verdict as the apply/plan mode reports it: judged on the run's last node listing,
// every node the inputs select counted (those already verified too), this run's failures holding it.
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/errors.js';
import { runRolloutMode } from '../../src/pipeline/rolloutMode.js';
import type { Config } from '../../src/core/config.js';
import { keys, makeCluster, OWNER, rolloutDeps } from './harness.js';

function mode(c: ReturnType<typeof makeCluster>, over: Partial<Config> = {}) {
  return runRolloutMode(rolloutDeps(c, over));
}

describe('runRolloutMode: may the old credential be revoked', () => {
  it('true after a roll: the nodes rolled and the one skipped as already verified, judged on the listing after the roll', async () => {
    const c = makeCluster([
      { name: 'w1' },
      { name: 'w2', current: true },
      { name: 'w3', annotations: { [keys.verifiedRevision]: 'rev-2' } },
    ]);
    const report = await mode(c);
    expect(report.records.map((r) => r.node)).toEqual(['w1', 'w2']);
    expect(report.upToDate).toEqual(['w3']);
    expect(report.revocation).toMatchObject({ revocable: true, judged: 3, outsideScope: 0, holders: [] });
    expect(report.owner).toBe(OWNER);
  });

  it('false when a node of the selection failed, naming it and the one never reached; nodes outside the selector are counted', async () => {
    const c = makeCluster([{ name: 'w1', labels: { pool: 'a' } }, { name: 'w2', labels: { pool: 'a' } }, { name: 'w9' }]);
    c.kube.drainError = new ToolError({
      tool: 'kubectl',
      command: 'kubectl drain w1',
      kind: 'timeout',
      exitCode: 1,
      stderr: 'timeout',
      node: 'w1',
    });
    const report = await mode(c, { nodeSelector: 'pool=a' });
    expect(report.result).toBe('failed');
    expect(report.revocation?.revocable).toBe(false);
    expect(report.revocation?.holders.map((h) => [h.node, h.kind])).toEqual([
      ['w1', 'failed'],
      ['w2', 'not-reached'],
    ]);
    expect(report.revocation?.outsideScope).toBe(1);
  });

  it('plan: what is true before the roll; a bad input: no listing, never safe', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const plan = await mode(c, { mode: 'plan' });
    expect(plan.revocation?.holders.map((h) => h.kind)).toEqual(['planned']);
    const bad = await mode(c, { nodes: ['nope'] });
    expect(bad.revocation).toMatchObject({ revocable: false, judged: 0 });
  });
});
