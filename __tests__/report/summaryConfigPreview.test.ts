// Plan mode's per-node details show the machine-config dry run beside the predicted decision: the
// diff in a block that keeps its lines, "no change" for a config already carrying the credential, and
// why no diff is shown otherwise. A credential the record still carries is masked by the redactor.
import { describe, expect, it } from 'vitest';
import { Redactor } from '../../src/core/redact.js';
import { renderSummary, type SummaryInput } from '../../src/report/summary.js';
import type { DecisionRecord } from '../../src/core/model.js';
import { record } from './fixtures.js';

const PASSWORD = 'plan-secret-7Qx';
const CLUSTER_SECRET = 'c2ltLWNsdXN0ZXItc2VjcmV0';

const DIFF = [
  'Dry run summary:',
  'Applied configuration without a reboot (skipped in dry-run).',
  'Config diff:',
  '',
  '--- a',
  '+++ b',
  '@@ -11,3 +11,9 @@',
  ' cluster:',
  `   secret: ${CLUSTER_SECRET}`,
  '+---',
  '+kind: RegistryAuthConfig',
  '+name: ghcr.io',
  `+password: ${PASSWORD}`,
  '+note: <b>&',
].join('\n');

const plan = (records: DecisionRecord[]): SummaryInput => ({
  mode: 'plan',
  registry: 'ghcr.io',
  revision: 'r1',
  result: 'planned',
  records,
});

const detailsOf = (html: string, node: string): string => {
  const start = html.indexOf(`<details><summary>${node} — `);
  if (start < 0) throw new Error(`no details for ${node}`);
  return html.slice(start, html.indexOf('</details>', start));
};

describe('renderSummary: the machine-config dry run in plan mode', () => {
  const html = renderSummary(
    plan([
      record('w1', 'planned-reboot', { configPreview: { shown: true, details: DIFF } }),
      record('w2', 'planned-skip', { configPreview: { shown: true } }),
      record('w3', 'planned-reboot', { configPreview: { shown: false, why: 'Talos is reached through talosctl' } }),
      record('w4', 'planned-reboot'),
    ]),
    { redactor: new Redactor([PASSWORD, CLUSTER_SECRET]) },
  );

  it('shows the diff line by line, after the predicted decision, with credential values masked and HTML escaped', () => {
    const d = detailsOf(html, 'w1');
    expect(d).toContain('<b>Machine config change (ApplyConfiguration dry run):</b>');
    expect(d.indexOf('Machine config change')).toBeGreaterThan(d.indexOf('<p>'));
    expect(d).toContain(
      '<pre>Dry run summary:\nApplied configuration without a reboot (skipped in dry-run).\nConfig diff:\n\n--- a\n+++ b\n@@ -11,3 +11,9 @@',
    );
    expect(d).toContain('\n+kind: RegistryAuthConfig\n+name: ghcr.io\n+password: ***\n+note: &lt;b&gt;&amp;</pre>');
    expect(html).not.toContain(PASSWORD);
    expect(html).not.toContain(CLUSTER_SECRET);
  });

  it('says "no change" when the config already carries the credential', () => {
    expect(detailsOf(html, 'w2')).toContain('<b>Machine config change (ApplyConfiguration dry run):</b> no change');
  });

  it('says why no diff is shown', () => {
    expect(detailsOf(html, 'w3')).toContain(
      '<b>Machine config change (ApplyConfiguration dry run):</b> not shown — Talos is reached through talosctl',
    );
  });

  it('a record without a preview (apply mode) shows no such line', () => {
    expect(detailsOf(html, 'w4')).not.toContain('Machine config change');
  });
});
