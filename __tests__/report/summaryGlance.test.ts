// The summary read at a glance: the Reason cell names in a few words the rule the evidence rested on
// (the whole sentence stays in the details), a proof reads as a proof, a long recovery command sits in
// a code block GitHub gives a copy button, and a released node that stays cordoned says why.
import { describe, expect, it } from 'vitest';
import type { EvidenceRule } from '../../src/core/model/verdict.js';
import { renderSummary } from '../../src/report/summary.js';
import { releaseCommand } from '../../src/rules/commands.js';
import { keptCordonReason } from '../../src/rules/release.js';
import { annotationKeys } from '../../src/core/model/node.js';
import { record, verdict } from './fixtures.js';

const base = { mode: 'apply' as const, registry: ['ghcr.io'], revision: 'r42', result: 'processed' as const };
const cellsOf = (html: string, node: string): string[] => {
  const row = html.split('\n').find((l) => l.startsWith(`<tr><td>${node}</td>`))!;
  return [...row.matchAll(/<td>(.*?)<\/td>/g)].map((m) => m[1]);
};

describe('the Reason cell', () => {
  it.each<[EvidenceRule | undefined, string, Partial<Parameters<typeof verdict>[2]>, object]>([
    ['cri-service', 'the cri service was not running and healthy', {}, { contradicts: true }],
    ['containerd-start', 'containerd’s start could not be placed', {}, {}],
    ['launch-after-patch', 'containerd was not restarted after the patch', {}, {}],
    ['config-write', 'the config’s last write could not be placed', {}, {}],
    ['credential', 'the config’s credential could not be read', {}, { contradicts: false }],
    ['clock', 'the node clock could not be trusted', {}, {}],
    ['ordering', 'the config was written after containerd started', {}, { ordering: 'before' }],
    ['ordering', 'containerd’s start and the config write were too close to order', {}, { ordering: 'undecidable' }],
    [undefined, 'the evidence did not prove the new credential loaded', {}, {}],
  ])('names the rule %s in a few words, the sentence in the details', (rule, brief, values, extra) => {
    const long = 'a long sentence of the evidence rule, with the path and the read path and every bound it compared';
    const v = { ...verdict('reboot', long, values), failedRule: rule, contradicts: undefined, ...extra };
    const html = renderSummary({
      ...base,
      mode: 'plan',
      result: 'planned',
      records: [record('w1', 'planned-reboot', { evidence: v, reason: long })],
    });
    expect(cellsOf(html, 'w1')[3]).toBe(`would reboot: ${brief}`);
    expect(html).toContain(`<p>${long}</p>`);
  });

  it('says `reboot: always` when no evidence was read', () => {
    const html = renderSummary({
      ...base,
      mode: 'plan',
      result: 'planned',
      records: [record('w1', 'planned-reboot', { evidence: undefined })],
    });
    expect(cellsOf(html, 'w1')[3]).toBe('would reboot: `reboot: always` was requested');
  });

  it('words an undecided proof settled by verify-image, and one released with a warning', () => {
    const undecided = { unproven: 'the gap is within the margin', residualRisk: 'r', nextStep: 'n' };
    const a = record('w1', 'rebooted', { proofUndecided: { ...undecided, settledBy: 'verify-image' } });
    const b = record('w2', 'rebooted', { proofUndecided: { ...undecided, settledBy: 'warning' } });
    const html = renderSummary({ ...base, records: [a, b] });
    expect(cellsOf(html, 'w1')[3]).toMatch(/ · proven by a pull of verify-image$/);
    expect(cellsOf(html, 'w2')[3]).toMatch(/ · ⚠️ not proven \(released with a warning\)$/);
  });

  it('keeps a stop’s first clause, cut, and says a quarantined node still holds the old credential', () => {
    const reason = `${'x'.repeat(200)}; the rest`;
    const html = renderSummary({ ...base, result: 'failed', records: [record('w1', 'failed', { reason }), record('w2', 'quarantined')] });
    expect(cellsOf(html, 'w1')[3]).toBe(`${'x'.repeat(139)}…`);
    expect(cellsOf(html, 'w2')[3]).toContain('not rebooted: containerd still holds the OLD credential');
  });

  it('says a proof after the patch was read after the patch (Talos restarted cri), not after a reboot', () => {
    const r = record('w1', 'reboot-skipped', { evidence: verdict('reboot', 'old'), proof: verdict('skip', 'new launch') });
    const html = renderSummary({ ...base, records: [r] });
    expect(cellsOf(html, 'w1')[3]).toBe(
      'no reboot needed: Talos restarted containerd after the patch (proven: containerd started after the new config)',
    );
    expect(html).toContain('<b>Proof after the patch (Talos restarted cri):</b> proven:');
  });
});

describe('the recovery command', () => {
  it('sits in a code block of its own, whole, with the prose around it', () => {
    const keys = annotationKeys('registry-auth-rollout.io');
    const capture = {
      node: 'w1',
      uid: 'uid-w1',
      owner: 'run-1-1-token',
      wasCordoned: false,
      schedulingTaints: [],
      unschedulable: false,
    } as unknown as Parameters<typeof releaseCommand>[0];
    const cmd = releaseCommand(capture, keys, { kubeconfig: '/tmp/kc', kubeContext: '' });
    expect(cmd.length).toBeGreaterThan(200);
    const nextStep = `Node w1 is left cordoned. Check it: \`kubectl get node w1\`. When it is healthy, release it: ${cmd}, and rerun.`;
    const html = renderSummary({ ...base, result: 'failed', records: [record('w1', 'failed', { nextStep })] });
    const inner = cmd
      .slice(1, -1)
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&#39;');
    expect(html).toContain(
      `<p><b>Next step:</b> Node w1 is left cordoned. Check it: <code>kubectl get node w1</code>. When it is healthy, release it: </p>\n<pre><code>${inner}</code></pre>\n<p>, and rerun.</p>`,
    );
  });
});

describe('a released node that stays cordoned', () => {
  const keys = annotationKeys('registry-auth-rollout.io');
  it('says why in its row and details: an operator’s cordon found at the claim is kept', () => {
    const why = keptCordonReason({ wasCordoned: true }, keys, true)!;
    expect(why).toContain('cordoned before this run claimed it');
    const html = renderSummary({ ...base, records: [record('w1', 'rebooted', { cordonKept: why })] });
    expect(cellsOf(html, 'w1')[3]).toContain(`<br><b>Stays cordoned:</b> ${why.replace(/'/g, '&#39;')}`);
    expect(html).toContain('<p><b>Stays cordoned:</b>');
  });

  it('names a quarantine kept by a release that was not verified, and nothing when the release uncordons', () => {
    expect(keptCordonReason({ wasCordoned: false, quarantined: '{}' }, keys, false)).toContain(
      'still quarantined (registry-auth-rollout.io/quarantined)',
    );
    expect(keptCordonReason({ wasCordoned: true, quarantined: '{}' }, keys, true)).toContain('cordoned before its quarantine');
    expect(keptCordonReason({ wasCordoned: false, quarantined: '{}' }, keys, true)).toBeUndefined();
    expect(keptCordonReason({ wasCordoned: false }, keys, false)).toBeUndefined();
  });
});

describe('plan: the health gates now', () => {
  it('lists each gate with its value, escaped, and says a gate that does not hold', () => {
    const html = renderSummary({
      ...base,
      mode: 'plan',
      result: 'planned',
      records: [record('w1', 'planned-reboot')],
      gates: [
        { name: 'storage/longhorn-volumes', holds: true, kind: 'Volume', selected: 3 },
        {
          name: 'shop-db-ready',
          holds: false,
          kind: 'Db',
          selected: 2,
          failing: { count: 1, object: { kind: 'Db', namespace: 'shop', name: '<db>' }, finding: { type: 'string' } },
        },
      ],
    });
    expect(html).toContain('<li><code>storage/longhorn-volumes</code>: holds (3 Volumes, all hold)</li>');
    expect(html).toContain(
      '<li><code>shop-db-ready</code>: <b>does not hold</b> (Db shop/&lt;db&gt;: returned a string, not a boolean)</li>',
    );
  });

  it('says so when no gate kind is served, and nothing when no gate is configured', () => {
    const none = renderSummary({ ...base, mode: 'plan', result: 'planned', records: [], gates: [] });
    expect(none).toContain('<b>Health gates:</b> none to check');
    const off = renderSummary({ ...base, mode: 'plan', result: 'planned', records: [] });
    expect(off).not.toContain('Health gates');
  });
});
