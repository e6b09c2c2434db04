// May the old credential be revoked: every node the inputs select must carry this revision's marker,
// none quarantined or claimed; this run's records win over the listing. Plain objects only.
import { describe, expect, it } from 'vitest';
import type { NodeState } from '../../src/core/model/node.js';
import { judgeRevocation, type RevocationInput } from '../../src/rules/revocation.js';
import { record } from '../report/fixtures.js';
import { keys, node } from './fixtures.js';

const REV = 'r2';
const verified = (name: string, rev = REV): NodeState =>
  node({ name, annotations: { [keys.verifiedRevision]: rev }, hasAnnotationsMap: true });

function judge(nodes: NodeState[] | undefined, over: Partial<RevocationInput> = {}) {
  return judgeRevocation({
    mode: 'apply',
    revision: REV,
    hosts: ['ghcr.io'],
    keys,
    scope: nodes ? { nodes, outside: 0 } : undefined,
    records: [],
    ...over,
  });
}

describe('judgeRevocation', () => {
  it('true when every selected node carries the marker, those rolled now and those already verified alike', () => {
    const v = judge([verified('w1'), verified('w2'), verified('cp-1')], {
      records: [record('w1', 'rebooted'), record('w2', 'reboot-skipped')],
    });
    expect(v.revocable).toBe(true);
    expect(v.holders).toEqual([]);
    expect(v.judged).toBe(3);
    expect(v.reason).toMatch(/all 3 node\(s\) the inputs select carry the verified marker of revision r2 for ghcr.io/);
    // what the action cannot see is said every time
    expect(v.reason).toMatch(/nodes the cluster creates later .* which the action does not see/);
  });

  it('false, naming each node and why: another revision, no marker, quarantined, claimed', () => {
    const v = judge([
      verified('w1', 'r1'),
      node({ name: 'w2' }),
      node({ name: 'w3', annotations: { [keys.verifiedRevision]: REV, [keys.quarantined]: '{"reason":"pdb"}' } }),
      node({ name: 'w4', annotations: { [keys.owner]: 'o/runs/1/attempts/1/n', [keys.phase]: 'mutating' } }),
      verified('w5'),
    ]);
    expect(v.revocable).toBe(false);
    expect(v.holders.map((h) => [h.node, h.kind])).toEqual([
      ['w1', 'not-verified'],
      ['w2', 'not-verified'],
      ['w3', 'quarantined'],
      ['w4', 'claimed'],
    ]);
    expect(v.holders[0].why).toBe('ghcr.io verified for revision r1, not r2');
    expect(v.holders[1].why).toBe('no verified marker for ghcr.io');
    expect(v.holders[3].why).toContain('phase=mutating');
    expect(v.reason).toBe('4 of 5 node(s) the inputs select still hold or may hold the old credential');
  });

  it("this run's record wins over a listing taken before the node was rolled", () => {
    const stale = node({ name: 'w1' });
    expect(judge([stale], { records: [record('w1', 'rebooted')] }).revocable).toBe(true);
    const v = judge([verified('w2')], { records: [record('w2', 'failed')] });
    expect(v.holders).toEqual([{ node: 'w2', kind: 'failed', why: 'failed in this run: drain timed out after 45m' }]);
    // matched by uid: a node re-created under the same name is judged by its own annotations
    const recreated = { ...node({ name: 'w3' }), uid: 'uid-new' };
    expect(judge([recreated], { records: [record('w3', 'rebooted')] }).holders[0].kind).toBe('not-verified');
  });

  it('a node released with a warning (proof undecided, no verify-image) may still hold it; one proven by verify-image does not', () => {
    const undecided = (settledBy: 'warning' | 'verify-image') =>
      record('w1', 'rebooted', {
        proofUndecided: {
          unproven: 'gap within rounding',
          settledBy,
          residualRisk: 'containerd may have read its config before the write',
        },
      });
    const warned = judge([verified('w1')], { records: [undecided('warning')] });
    expect(warned.revocable).toBe(false);
    expect(warned.holders[0]).toMatchObject({ kind: 'proof-undecided', why: expect.stringContaining('may have read its config') });
    expect(judge([verified('w1')], { records: [undecided('verify-image')] }).revocable).toBe(true);
  });

  it('quarantined, refused and not-reached nodes hold it', () => {
    const v = judge([node({ name: 'w1' }), node({ name: 'w2' }), node({ name: 'w3' })], {
      records: [record('w1', 'quarantined'), record('w2', 'refused')],
      notReached: ['w3'],
    });
    expect(v.holders.map((h) => h.kind)).toEqual(['quarantined', 'refused', 'not-reached']);
    expect(v.holders[2].why).toBe('no verified marker for ghcr.io; the roll stopped before it');
  });

  it('plan: true only when nothing is left to roll; a planned node is not verified yet', () => {
    expect(judge([verified('w1')], { mode: 'plan' }).revocable).toBe(true);
    const v = judge([node({ name: 'w1' }), node({ name: 'w2' })], {
      mode: 'plan',
      records: [record('w1', 'planned-reboot'), record('w2', 'planned-skip')],
    });
    expect(v.revocable).toBe(false);
    expect(v.holders.map((h) => h.kind)).toEqual(['planned', 'planned']);
    expect(v.holders[1].why).toMatch(/only an apply proves and marks it/);
    expect(v.reason).toMatch(/a plan changes nothing/);
  });

  it('no node selected, or no listing at all, is never safe', () => {
    const none = judgeRevocation({ mode: 'apply', revision: REV, hosts: ['ghcr.io'], keys, scope: { nodes: [], outside: 4 }, records: [] });
    expect(none).toMatchObject({ revocable: false, judged: 0, outsideScope: 4 });
    expect(none.reason).toMatch(/select no node/);
    expect(judge(undefined)).toMatchObject({ revocable: false, reason: expect.stringMatching(/before it listed the nodes/) });
  });

  it('counts the nodes outside nodes/node-selector, which it does not judge', () => {
    const v = judgeRevocation({
      mode: 'apply',
      revision: REV,
      hosts: ['ghcr.io'],
      keys,
      scope: { nodes: [verified('w1')], outside: 2 },
      records: [],
    });
    expect(v).toMatchObject({ revocable: true, outsideScope: 2 });
    expect(v.reason).toContain('2 node(s) outside nodes/node-selector were not judged');
  });
});
