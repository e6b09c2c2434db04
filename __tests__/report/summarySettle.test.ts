import { describe, expect, it } from 'vitest';
import { renderSummary } from '../../src/report/summary.js';

const plan = { mode: 'plan' as const, registry: ['ghcr.io'], revision: 'r42', result: 'planned' as const, records: [] };

describe('renderSummary: the settle gate in a plan', () => {
  it('names the workloads a roll would wait for, escaped; says none; says nothing when the gate is off', () => {
    const html = renderSummary({ ...plan, settleWaits: ['Deployment shop/web', 'StatefulSet shop/<db>'] });
    expect(html).toContain(
      '<p><b>Settle gate:</b> before each next drain, the roll would wait for these workloads to be available again: <code>Deployment shop/web</code>, <code>StatefulSet shop/&lt;db&gt;</code></p>',
    );
    expect(renderSummary({ ...plan, settleWaits: [] })).toContain('would wait for these workloads to be available again: none</p>');
    expect(renderSummary(plan)).not.toContain('Settle gate');
  });
});
