// The job summary's old-credential line: present when the run judged it, in the head, before the table.
import { describe, expect, it } from 'vitest';
import { renderSummary, type SummaryInput } from '../../src/report/summary.js';
import { record } from './fixtures.js';

const base: SummaryInput = {
  mode: 'apply',
  registry: ['ghcr.io'],
  revision: 'r7',
  result: 'processed',
  records: [record('w1', 'rebooted')],
};

describe('renderSummary: the old-credential line', () => {
  it('says whether it is safe to revoke, lists what may still hold it, before the table', () => {
    const html = renderSummary({
      ...base,
      revocation: {
        revocable: false,
        reason: '1 of 2 node(s) of the cluster still hold or may hold the old credential',
        holders: [{ node: 'w2', kind: 'quarantined', why: 'quarantined: cordoned and not rebooted', selected: true }],
        judged: 2,
        outsideScope: 0,
        selectionConverged: false,
      },
    });
    expect(html).toContain('<b>Old credential:</b> ⚠️ not safe to revoke yet');
    expect(html).toContain('<li><code>w2</code>: quarantined: cordoned and not rebooted</li>');
    expect(html.indexOf('Old credential')).toBeLessThan(html.indexOf('<table>'));
  });

  it('is absent when the run did not judge it, and shown on a clean run', () => {
    expect(renderSummary(base)).not.toContain('Old credential');
    const clean = renderSummary({
      ...base,
      result: 'clean',
      records: [],
      revocation: {
        revocable: true,
        reason: 'all 3 node(s) of the cluster carry verified-revision=r7',
        holders: [],
        judged: 3,
        outsideScope: 0,
        selectionConverged: true,
      },
    });
    expect(clean).toContain('✅ safe to revoke — all 3 node(s)');
  });
});
