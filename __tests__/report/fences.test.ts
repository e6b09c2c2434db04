// The fences job summary, rendered from plain objects: what each mode says about the Lease and each
// fence, and that nothing taken from the cluster or the GitHub API reaches the HTML unescaped.
import { describe, expect, it } from 'vitest';
import type { LeaseState } from '../../src/adapters/types.js';
import type { FencesMode, FencesReport } from '../../src/fences/run.js';
import { renderFencesSummary } from '../../src/report/fences.js';
import type { FenceRow } from '../../src/rules/fences.js';

const A = 'acme/infra/runs/101/attempts/1/aaaa';
const RUN_A = { state: 'completed' as const, conclusion: 'failure', url: 'https://github.com/acme/infra/actions/runs/101/attempts/1' };
const ctx = {
  leaseRef: { namespace: 'kube-system', name: 'registry-auth-rollout' },
  asOf: Date.UTC(2026, 10, 30, 10, 0, 0),
  config: {
    annotationPrefix: 'registry-auth-rollout',
    leaseNamespace: 'kube-system',
    leaseName: 'registry-auth-rollout',
    kubeContext: 'admin@prod',
  },
};

function row(node: string, over: Partial<FenceRow> = {}): FenceRow {
  return {
    node,
    uid: `uid-${node}`,
    owner: A,
    phase: 'claimed',
    wasCordoned: 'false',
    schedulableNow: false,
    run: RUN_A,
    releaseCommand: `\`kubectl patch node ${node} --type=json -p '[]'\``,
    ...over,
  };
}

function lease(holderIdentity: string): LeaseState {
  return {
    namespace: ctx.leaseRef.namespace,
    name: ctx.leaseRef.name,
    uid: 'l-uid',
    resourceVersion: '7',
    holderIdentity,
    leaseDurationSeconds: 120,
    renewTime: '2026-11-30T09:00:00.000000Z',
  };
}

function report(mode: FencesMode, over: Partial<FencesReport> = {}): FencesReport {
  return {
    kind: 'fences',
    mode,
    result: 'clean',
    ...ctx,
    rows: [],
    leaseDecision: { action: 'none', reason: 'no holder' },
    decisions: [],
    runs: new Map(),
    releasedNodes: [],
    refused: [],
    leaseReleased: false,
    failures: [],
    actions: [],
    ok: true,
    ...over,
  };
}

describe('renderFencesSummary', () => {
  it('no fence and no Lease: says both, and fences mode lists no actions', () => {
    const html = renderFencesSummary(report('fences'));
    expect(html).toContain('<h2>Fences: 0 nodes carrying a claim</h2>');
    expect(html).toContain('Read at 2026-11-30T10:00:00.000Z');
    expect(html).toContain('does not exist (no run holds the lock)');
    expect(html).toContain('No node carries a claim.');
    expect(html).not.toContain('<h3>Actions');
    expect(html).not.toContain('Nothing was released');
  });

  it('a free Lease is reported as free', () => {
    expect(renderFencesSummary(report('fences', { lease: lease('') }))).toContain('</code>: free.</p>');
  });

  it('fences mode: what recover-fences would do, per fence and for the Lease, with the release commands', () => {
    const html = renderFencesSummary(
      report('fences', {
        rows: [row('w1'), row('w2', { phase: 'mutating' })],
        lease: lease(A),
        runs: new Map([[A, RUN_A]]),
        leaseDecision: { action: 'release', holder: A, reason: 'its run has completed' },
        decisions: [
          { node: 'w1', action: 'release', capture: {} as never, reason: 'its run has completed' },
          { node: 'w2', action: 'refuse', reason: 'phase is mutating' },
        ],
      }),
    );
    expect(html).toContain('<h2>Fences: 2 nodes carrying a claim</h2>');
    expect(html).toContain(`<a href="${RUN_A.url}">completed (failure)</a>`);
    expect(html).toContain('recover-fences would release it: its run has completed');
    expect(html).toContain('<td>would release: its run has completed</td>');
    expect(html).toContain('<td>would refuse: phase is mutating</td>');
    expect(html).toContain('<summary>w1: how to release it</summary>');
    expect(html).toContain('kubectl patch node w1 --type=json -p &#39;[]&#39;'); // backticks of the inline form dropped
    expect(html).toContain('--context=&#39;admin@prod&#39; patch lease -n &#39;kube-system&#39;');
  });

  it('recover-fences: released, refused, failed and untouched fences each say so; failures are listed as FAILED', () => {
    const html = renderFencesSummary(
      report('recover-fences', {
        rows: [row('w1'), row('w2'), row('w3'), row('w4')],
        decisions: [
          { node: 'w1', action: 'release', capture: {} as never, reason: 'r' },
          { node: 'w2', action: 'refuse', reason: 'phase is mutating' },
          { node: 'w3', action: 'release', capture: {} as never, reason: 'r' },
          { node: 'w4', action: 'release', capture: {} as never, reason: 'r' },
        ],
        releasedNodes: ['w1'],
        refused: [{ node: 'w2', reason: 'phase is mutating' }],
        failures: [{ node: 'w3', reason: 'release failed: connection refused' }],
        actions: ['w1: released (r)'],
        ok: false,
      }),
    );
    expect(html).toContain('<h2>Recover fences: 4 nodes carrying a claim</h2>');
    expect(html).toContain('<td>released</td>');
    expect(html).toContain('<td>refused: phase is mutating</td>');
    expect(html).toContain('<td>failed: release failed: connection refused</td>');
    expect(html).toContain('<td>not attempted</td>');
    expect(html).toMatch(/<h3>Actions<\/h3>\n<ul>\n<li>w1: released \(r\)<\/li>\n<li>FAILED: w3: release failed: connection refused<\/li>/);
  });

  it('recover-fences with nothing done says nothing was released', () => {
    expect(renderFencesSummary(report('recover-fences'))).toContain('<p>Nothing was released.</p>');
  });

  it('escapes everything taken from the cluster and the GitHub API', () => {
    const evil = '<script>alert(1)</script>';
    const html = renderFencesSummary(
      report('fences', {
        rows: [
          row('w9<b>', {
            owner: evil,
            phase: '<i>',
            note: '<img src=x onerror=alert(2)>',
            run: { state: 'unknown', url: 'https://x/"><b>', error: '<u>boom</u>' },
          }),
        ],
        lease: lease('<img src=y>'),
        decisions: [{ node: 'w9<b>', action: 'refuse', reason: '<s>why</s>' }],
      }),
    );
    expect(html).not.toMatch(/<script|<img|<b>|<i>|<u>|<s>/);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&lt;img src=x onerror=alert(2)&gt;');
    expect(html).toContain('href="https://x/&quot;&gt;&lt;b&gt;"');
  });
});
