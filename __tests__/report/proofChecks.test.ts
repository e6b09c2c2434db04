// The nodes a run with nothing to roll tried to prove, as the step shows them: the summary's list (every
// cluster-supplied string escaped) and one annotation per node, capped per kind.
import { describe, expect, it } from 'vitest';
import type { ProofCheck } from '../../src/core/model/proofCheck.js';
import { proofCheckAnnotations, renderProofChecks } from '../../src/report/proofChecks.js';

const check = (node: string, proven: boolean, over: Partial<ProofCheck> = {}): ProofCheck => ({
  node,
  uid: `uid-${node}`,
  hosts: [{ host: 'ghcr.io', why: 'ghcr.io: its post-reboot proof was undecided when it was released (released with a warning)' }],
  by: proven ? 'verify-image' : 'evidence',
  proven,
  detail: proven
    ? 'proven by a pull of ghcr.io/acme/private:1 through its containerd (sha256:1)'
    : 'the evidence does not prove containerd loaded the desired credential: a tie',
  ...(proven ? {} : { nextStep: 'To prove it, set verify-image to a private image of ghcr.io and rerun' }),
  ...over,
});

describe('renderProofChecks', () => {
  it('lists each node: proven and how, or not proven with why and the next step; escaped', () => {
    const html = renderProofChecks([check('w1', true), check('<w2>', false)]);
    expect(html).toMatch(/<b>Nodes to prove<\/b>/);
    expect(html).toContain('<li><code>w1</code> (ghcr.io: its post-reboot proof was undecided');
    expect(html).toContain('✅ proven by a pull of ghcr.io/acme/private:1');
    expect(html).toContain('<code>&lt;w2&gt;</code>');
    expect(html).toMatch(/⚠️ not proven: the evidence does not prove .*\. To prove it, set verify-image/);
  });
});

describe('proofCheckAnnotations', () => {
  it('a notice for a node proven, a warning naming the node that keeps old-credential-revocable false', () => {
    const a = proofCheckAnnotations([check('w1', true), check('w2', false)]);
    expect(a.map((x) => [x.kind, x.title])).toEqual([
      ['notice', 'w1: proven, nothing rolled'],
      ['warning', 'w2: not proven, old-credential-revocable stays false'],
    ]);
    expect(a[1].message).toMatch(/Could not prove: the evidence does not prove .*\nNext step: To prove it, set verify-image/);
  });

  it('past a few of one kind, the rest in one annotation that names them (GitHub drops the overflow)', () => {
    const a = proofCheckAnnotations(['a', 'b', 'c', 'd', 'e'].map((n) => check(n, false)));
    expect(a).toHaveLength(4);
    expect(a[3]).toEqual({ kind: 'warning', title: '2 more node(s) to prove not proven', message: 'd, e' });
  });
});
