// Plan mode's per-node details show the action's own change list for the machine config beside the
// predicted decision: each place written and what each credential field does there, every value as
// `***` (the record holds no value to show), the checks made without the node, "no change" for a
// config already carrying the credential, and why no list is shown otherwise.
import { describe, expect, it } from 'vitest';
import { renderSummary, type SummaryInput } from '../../src/report/summary.js';
import type { CredentialEdit, DecisionRecord } from '../../src/core/model/record.js';
import { record } from './fixtures.js';

const TITLE = "<b>Machine config change (the action's own change list, every value masked):</b>";

const EDITS: CredentialEdit[] = [
  {
    target: 'RegistryAuthConfig/ghcr.io',
    action: 'added',
    fields: [
      { name: 'username', change: 'added' },
      { name: 'password', change: 'added' },
    ],
    because: 'the patch gives this document',
  },
  {
    target: 'v1alpha1 machine.registries.config.ghcr.io.auth',
    action: 'replaced',
    fields: [
      { name: 'username', change: 'unchanged' },
      { name: 'password', change: 'changed' },
      { name: 'auth', change: 'removed' },
    ],
    because: 'the node carries this form for ghcr.io too: <written>',
  },
];
const CHECKS = ['the patched config parses: 3 documents', 'ghcr.io: Talos will read the new credential from RegistryAuthConfig/ghcr.io'];

const plan = (records: DecisionRecord[]): SummaryInput => ({
  mode: 'plan',
  registry: ['ghcr.io'],
  revision: 'r1',
  result: 'planned',
  records,
});

const detailsOf = (html: string, node: string): string => {
  const start = html.indexOf(`<details><summary>${node} — `);
  if (start < 0) throw new Error(`no details for ${node}`);
  return html.slice(start, html.indexOf('</details>', start));
};

describe('renderSummary: the machine-config change list in plan mode', () => {
  const html = renderSummary(
    plan([
      record('w1', 'planned-reboot', { configPreview: { shown: true, edits: EDITS, checks: CHECKS } }),
      record('w2', 'planned-skip', { configPreview: { shown: true, edits: [], checks: [] } }),
      record('w3', 'planned-reboot', { configPreview: { shown: false, why: 'Talos is reached through talosctl' } }),
      record('w4', 'planned-reboot'),
    ]),
  );

  it('lists each place written, field by field with every value masked, after the predicted decision, then the checks', () => {
    const d = detailsOf(html, 'w1');
    expect(d.indexOf(TITLE)).toBeGreaterThan(d.indexOf('<p>'));
    expect(d).toContain(
      `${TITLE}</p>\n<pre>RegistryAuthConfig/ghcr.io: added (username: ***, password: ***)\n  the patch gives this document\n` +
        'v1alpha1 machine.registries.config.ghcr.io.auth: replaced (username: *** unchanged, password: *** changed, auth: removed)\n' +
        '  the node carries this form for ghcr.io too: &lt;written&gt;\n</pre>',
    );
    expect(d).toContain(
      '<p>Checked without the node (nothing is sent to it in a plan):</p>\n<ul><li>the patched config parses: 3 documents</li><li>ghcr.io: Talos will read the new credential from RegistryAuthConfig/ghcr.io</li></ul>',
    );
    expect(d).not.toMatch(/Dry run|Config diff/);
  });

  it('says "no change" when the config already carries the credential', () => {
    expect(detailsOf(html, 'w2')).toContain(`${TITLE} no change (the config already carries the credential in every form it has)`);
  });

  it('says why no change list is shown', () => {
    expect(detailsOf(html, 'w3')).toContain(`${TITLE} not shown — Talos is reached through talosctl`);
  });

  it('a record without a preview (apply mode) shows no such line', () => {
    expect(detailsOf(html, 'w4')).not.toContain('Machine config change');
  });
});
