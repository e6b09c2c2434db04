// May the old credential be revoked: every node of the cluster (not only those the inputs select) must
// carry this revision's marker, none quarantined or claimed; this run's records win over the listing;
// the selection's own answer is `selectionConverged`. Plain objects only.
import { describe, expect, it } from 'vitest';
import type { NodeState } from '../../src/core/model/node.js';
import { judgeRevocation, markerMissing, type RevocationInput } from '../../src/rules/revocation.js';
import { record } from '../report/fixtures.js';
import { keys, node } from './fixtures.js';

const REV = 'r2';
const marker = (rev: string, proof?: string) => JSON.stringify({ 'ghcr.io': { revision: rev, ...(proof ? { proof } : {}) } });
const verified = (name: string, rev = REV, proof: string | undefined = 'evidence'): NodeState =>
  node({ name, annotations: { [keys.verified]: marker(rev, proof) }, hasAnnotationsMap: true });

/** Every node listed is selected unless `outside` names it. */
function judge(nodes: NodeState[] | undefined, over: Partial<RevocationInput> & { outside?: string[] } = {}) {
  const { outside = [], ...rest } = over;
  return judgeRevocation({
    mode: 'apply',
    revision: REV,
    hosts: ['ghcr.io'],
    keys,
    listing: nodes ? { nodes, selected: new Set(nodes.filter((n) => !outside.includes(n.name)).map((n) => n.uid)) } : undefined,
    records: [],
    ...rest,
  });
}

describe('judgeRevocation', () => {
  it('true when every node of the cluster carries the marker, those rolled now and those already verified alike', () => {
    const v = judge([verified('w1'), verified('w2'), verified('cp-1')], {
      records: [record('w1', 'rebooted'), record('w2', 'reboot-skipped')],
    });
    expect(v.revocable).toBe(true);
    expect(v.holders).toEqual([]);
    expect(v.judged).toBe(3);
    expect(v.selectionConverged).toBe(true);
    expect(v.reason).toMatch(/all 3 node\(s\) of the cluster carry the verified marker of revision r2 for ghcr.io/);
    // what the action cannot see is said every time
    expect(v.reason).toMatch(/nodes the cluster creates later .* which the action does not see/);
  });

  it('false, naming each node and why: another revision, no marker, quarantined, claimed', () => {
    const v = judge([
      verified('w1', 'r1'),
      node({ name: 'w2' }),
      node({ name: 'w3', annotations: { [keys.verified]: marker(REV, 'evidence'), [keys.quarantined]: '{"reason":"pdb"}' } }),
      node({ name: 'w4', annotations: { [keys.owner]: 'o/runs/1/attempts/1/n', [keys.phase]: 'mutating' } }),
      verified('w5'),
    ]);
    expect(v.revocable).toBe(false);
    expect(v.holders.map((h) => [h.node, h.kind, h.selected])).toEqual([
      ['w1', 'not-verified', true],
      ['w2', 'not-verified', true],
      ['w3', 'quarantined', true],
      ['w4', 'claimed', true],
    ]);
    expect(v.selectionConverged).toBe(false);
    expect(v.holders[0].why).toBe('ghcr.io verified for revision r1, not r2');
    expect(v.holders[1].why).toBe('no verified marker for ghcr.io');
    expect(v.holders[3].why).toContain('phase=mutating');
    expect(v.reason).toBe(
      '4 of 5 node(s) of the cluster still hold or may hold the old credential; the nodes the inputs select have not all converged',
    );
  });

  it("this run's record wins over a listing taken before the node was rolled", () => {
    const stale = node({ name: 'w1' });
    expect(judge([stale], { records: [record('w1', 'rebooted')] }).revocable).toBe(true);
    const v = judge([verified('w2')], { records: [record('w2', 'failed')] });
    expect(v.holders).toEqual([{ node: 'w2', kind: 'failed', why: 'failed in this run: drain timed out after 45m', selected: true }]);
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

  it('a node outside the selection without the marker keeps it false and is named; the selection still converged', () => {
    // the defect: a run scoped to pool=blue rolled the pool, a control plane outside it never got the credential
    const v = judge([verified('blue-1'), verified('blue-2'), node({ name: 'cp-1', role: 'control-plane' })], {
      outside: ['cp-1'],
      records: [record('blue-1', 'rebooted')],
    });
    expect(v.revocable).toBe(false);
    expect(v.selectionConverged).toBe(true);
    expect(v).toMatchObject({ judged: 3, outsideScope: 1 });
    expect(v.holders).toEqual([
      {
        node: 'cp-1',
        kind: 'not-verified',
        why: 'no verified marker for ghcr.io; outside nodes/node-selector, so this run does not roll it',
        selected: false,
      },
    ]);
    expect(v.reason).toBe(
      '1 of 3 node(s) of the cluster still hold or may hold the old credential (1 of them outside nodes/node-selector); the 2 node(s) the inputs select all carry it (selection converged)',
    );
  });

  it('quarantined and claimed nodes outside the selection hold it too; outside nodes carrying the marker count as verified', () => {
    const v = judge(
      [
        verified('blue-1'),
        verified('green-1'),
        node({ name: 'green-2', annotations: { [keys.verifiedRevision]: REV, [keys.quarantined]: '{"reason":"pdb"}' } }),
        node({ name: 'green-3', annotations: { [keys.owner]: 'o/runs/1/attempts/1/n', [keys.phase]: 'left-fenced' } }),
      ],
      { outside: ['green-1', 'green-2', 'green-3'] },
    );
    expect(v.holders.map((h) => [h.node, h.kind, h.selected])).toEqual([
      ['green-2', 'quarantined', false],
      ['green-3', 'claimed', false],
    ]);
    expect(v).toMatchObject({ revocable: false, selectionConverged: true, outsideScope: 3 });
    // the whole cluster verified: true, with the nodes outside the selection counted
    const all = judge([verified('blue-1'), verified('green-1')], { outside: ['green-1'] });
    expect(all).toMatchObject({ revocable: true, selectionConverged: true, judged: 2, outsideScope: 1 });
    expect(all.reason).toContain(
      'all 2 node(s) of the cluster carry the verified marker of revision r2 for ghcr.io, each proven, none quarantined or claimed (1 of them outside nodes/node-selector)',
    );
  });

  it('a marker whose proof was undecided keeps it false in every later run, naming the node, until a run proves it', () => {
    // the merge queue's next run: nothing rolled, the listing alone
    const later = judge([verified('w1', REV, 'undecided'), verified('w2')]);
    expect(later).toMatchObject({ revocable: false, selectionConverged: false });
    expect(later.holders).toEqual([
      {
        node: 'w1',
        kind: 'proof-undecided',
        selected: true,
        why: 'ghcr.io: its post-reboot proof was undecided when it was released (released with a warning); a run with nothing to roll proves it (a read of the evidence, or a pull of verify-image)',
      },
    ]);
    // a run that tried and could not: why, and what proves it
    const tried = judge([verified('w1', REV, 'undecided')], {
      proofChecks: [
        {
          node: 'w1',
          uid: 'uid-w1',
          hosts: [{ host: 'ghcr.io', why: 'u' }],
          by: 'evidence',
          proven: false,
          detail: 'the evidence does not prove it',
          nextStep: 'Set verify-image',
        },
      ],
    });
    expect(tried.revocable).toBe(false);
    expect(tried.holders[0].why).toMatch(/undecided .*; not proven by this run: the evidence does not prove it\. Set verify-image$/);
    // a run that proved it: the listing predates the write, the check wins
    const proven = judge([verified('w1', REV, 'undecided')], {
      proofChecks: [
        { node: 'w1', uid: 'uid-w1', hosts: [{ host: 'ghcr.io', why: 'u' }], by: 'verify-image', proven: true, detail: 'pulled' },
      ],
    });
    expect(proven).toMatchObject({ revocable: true, selectionConverged: true });
    // a check of another machine under the name does not count
    const other = judge([verified('w1', REV, 'undecided')], {
      proofChecks: [{ node: 'w1', uid: 'uid-old', hosts: [], by: 'verify-image', proven: true, detail: 'pulled' }],
    });
    expect(other.revocable).toBe(false);
  });

  it('a marker that does not say how (written before it did), or the old single-key one, counts as not proven: the safest reading', () => {
    const v = judge([verified('w1', REV, ''), node({ name: 'w2', annotations: { [keys.verifiedRevision]: REV } })]);
    expect(v.holders.map((h) => [h.node, h.kind])).toEqual([
      ['w1', 'proof-undecided'],
      ['w2', 'proof-undecided'],
    ]);
    expect(v.holders[0].why).toMatch(/does not record how it was proven/);
    // outside the selection: named, and not proven by this run
    const outside = judge([verified('w1', REV, 'undecided')], { outside: ['w1'] });
    expect(outside.holders[0]).toMatchObject({
      selected: false,
      why: expect.stringMatching(/outside nodes\/node-selector, so this run does not prove it$/),
    });
    // a plan says an apply would prove it
    expect(judge([verified('w1', REV, 'undecided')], { mode: 'plan' }).holders[0].why).toMatch(
      /an apply run with nothing to roll proves it/,
    );
  });

  it('a node this run released for one host still holds it when another host of the run is not proven', () => {
    const two = (proof: string) =>
      node({
        name: 'w1',
        annotations: {
          [keys.verified]: JSON.stringify({
            'ghcr.io': { revision: REV, proof },
            'mirror.local:5000': { revision: REV, proof: 'undecided' },
          }),
        },
      });
    const records = [record('w1', 'reboot-skipped', { hosts: [{ host: 'ghcr.io', why: 'no verified marker' }] })];
    const v = judgeRevocation({
      mode: 'apply',
      revision: REV,
      hosts: ['ghcr.io', 'mirror.local:5000'],
      keys,
      listing: { nodes: [two('evidence')], selected: new Set(['uid-w1']) },
      records,
    });
    expect(v.holders.map((h) => [h.node, h.kind])).toEqual([['w1', 'proof-undecided']]);
    expect(v.holders[0].why).toMatch(/^mirror\.local:5000: its post-reboot proof was undecided/);
  });

  it('markerMissing: the one reading of the marker', () => {
    expect(markerMissing(verified('w1'), keys, ['ghcr.io'], REV)).toBeUndefined();
    expect(markerMissing(verified('w1', 'r1'), keys, ['ghcr.io'], REV)).toBe('ghcr.io verified for revision r1, not r2');
    expect(markerMissing(node({ name: 'w1' }), keys, ['ghcr.io'], REV)).toBe('no verified marker for ghcr.io');
  });

  it('no node listed, or no listing at all, is never safe; no node selected never converged', () => {
    const none = judge([]);
    expect(none).toMatchObject({ revocable: false, judged: 0, selectionConverged: false });
    expect(none.reason).toMatch(/the cluster lists no node/);
    expect(judge(undefined)).toMatchObject({
      revocable: false,
      selectionConverged: false,
      reason: expect.stringMatching(/before it listed the nodes/),
    });
    // a selector that matches nothing: the cluster may be verified, the selection never converged
    const unselected = judge([verified('w1'), node({ name: 'w2' })], { outside: ['w1', 'w2'] });
    expect(unselected).toMatchObject({ revocable: false, selectionConverged: false, outsideScope: 2 });
    expect(unselected.reason).toMatch(/the inputs select no node$/);
    expect(judge([verified('w1')], { outside: ['w1'] })).toMatchObject({ revocable: true, selectionConverged: false });
  });
});
