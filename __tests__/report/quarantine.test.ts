// A quarantined node in every report: the summary row (old credential, how to lift it) and its details,
// the counts, an error annotation, the `decisions` output and the log group title.
import { describe, expect, it } from 'vitest';
import type { DecisionRecord } from '../../src/core/model/record.js';
import { buildAnnotations } from '../../src/report/annotations.js';
import { formatGroupTitle } from '../../src/report/log.js';
import { buildOutputs } from '../../src/report/outputs.js';
import { renderSummary } from '../../src/report/summary.js';
import { record } from './fixtures.js';

const QUARANTINED: DecisionRecord = record('w2', 'quarantined', {
  reason:
    'drain timed out after 45m0s, blocked by PodDisruptionBudget shop/db (allows 0 disruptions, 1/1 healthy) holding shop/db-0; quarantined: left cordoned and not rebooted, so its running containerd still holds the OLD credential',
  nextStep: 'To lift the quarantine, let PodDisruptionBudget shop/db allow the eviction, then rerun.',
  quarantine: {
    blockers: [{ pdb: 'shop/db', status: { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 }, pods: ['shop/db-0'] }],
    lift: 'let PodDisruptionBudget shop/db allow the eviction, then rerun: the rerun reboots w2 and restores its schedulability',
    byHand: "`kubectl patch node w2 --type=json -p '[]'`",
  },
});

describe('a quarantined node', () => {
  const html = renderSummary({
    mode: 'apply',
    registry: ['ghcr.io'],
    revision: 'r42',
    result: 'failed',
    records: [record('w1', 'rebooted'), QUARANTINED],
  });

  it('has a row saying the old credential is still in containerd, and how to lift it', () => {
    const row = html.split('\n').find((l) => l.startsWith('<tr><td>w2</td>'))!;
    expect(row).toContain('🚧 quarantined');
    expect(row).toContain('still holds the OLD credential');
    expect(row).toContain('<br><b>Lift:</b> let PodDisruptionBudget shop/db allow the eviction, then rerun');
  });

  it('is counted, and its details name the PDB, its pods and the by-hand command', () => {
    expect(html).toContain('0 refused · 1 quarantined · 0 failed');
    expect(html).toContain('PodDisruptionBudget <code>shop/db</code> (allows 0 disruptions, 1/1 healthy): shop/db-0');
    expect(html).toContain('<code>kubectl patch node w2 --type=json -p &#39;[]&#39;</code>');
  });

  it('gets an error annotation with its next step, the decisions output carries it, the log says it', () => {
    const a = buildAnnotations([QUARANTINED]).filter((x) => x.kind === 'error');
    expect(a).toHaveLength(1);
    expect(a[0].title).toBe('w2: quarantined');
    expect(a[0].message).toContain('Next step: To lift the quarantine');
    const [d] = JSON.parse(buildOutputs({ result: 'failed', records: [QUARANTINED] }).decisions);
    expect(d.outcome).toBe('quarantined');
    expect(d.quarantine.blockers[0].pdb).toBe('shop/db');
    expect(formatGroupTitle(QUARANTINED)).toMatch(/^w2 \(worker\): quarantined in /);
  });
});
