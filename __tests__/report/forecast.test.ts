// The drain forecast in words and in the summary: grouped by PDB and by refusal, escaped.
import { describe, expect, it } from 'vitest';
import type { DrainForecast } from '../../src/core/model/record.js';
import { describeForecast, forecastLines } from '../../src/report/forecast.js';
import { renderForecast } from '../../src/report/summary/forecast.js';

const base: DrainForecast = { ok: true, evictions: 0, blocked: [], budgets: [], refusals: [], errors: [] };
const msg = "Cannot evict pod as it would violate the pod's disruption budget.";

describe('forecastLines', () => {
  it('groups blocked pods by their PDBs with the budget as read, refusals by reason', () => {
    const f: DrainForecast = {
      ...base,
      ok: false,
      evictions: 3,
      blocked: [
        { pod: 'shop/db-0', budgets: ['shop/db'], message: msg },
        { pod: 'shop/db-1', budgets: ['shop/db'], message: msg },
        { pod: 'x/y', budgets: [], message: msg },
      ],
      budgets: [{ pdb: 'shop/db', disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2 }],
      refusals: [
        { pod: 'default/a', reason: 'cannot delete Pods that declare no controller (use --force to override)' },
        { pod: 'default/b', reason: 'cannot delete Pods that declare no controller (use --force to override)' },
      ],
      errors: [{ pod: 'p/q', message: 'boom' }],
    };
    expect(forecastLines(f)).toEqual([
      'drain would refuse at once, evicting nothing: cannot delete Pods that declare no controller (use --force to override): default/a, default/b (the action never passes --force)',
      'drain would be blocked now by PDB shop/db (allows 0 disruptions; 2 healthy, 2 needed): 2 pods shop/db-0, shop/db-1',
      `drain would be blocked now by an eviction refusal (${msg}): 1 pod x/y`,
      'dry-run eviction of p/q got no answer of the PDB check: boom',
    ]);
  });
  it('ok, with and without pods; unknown', () => {
    expect(describeForecast({ ...base, evictions: 2 })).toBe('drain would go through now: 2 pods to evict, every dry-run eviction allowed');
    expect(describeForecast(base)).toBe('drain would go through now: no pod to evict');
    expect(describeForecast({ ...base, ok: false, unknown: 'forbidden' })).toBe('drain forecast not made: forbidden');
  });
});

describe('renderForecast', () => {
  it('escapes cluster-supplied names', () => {
    const html = renderForecast({ ...base, ok: false, evictions: 1, blocked: [{ pod: 'ns/<script>', budgets: [], message: 'm' }] });
    expect(html).toContain('would not go through now');
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;');
  });
});
