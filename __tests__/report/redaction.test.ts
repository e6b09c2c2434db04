// Each report sink redacts what it is given, as a second line of defence behind the exec layer: text
// that reaches a record without passing a child's output (an error of our own, a message built from
// a parsed file) must not reach the summary, the outputs, the annotations or the log either.
import { describe, expect, it } from 'vitest';
import type { AuthFields } from '../../src/core/model/credential.js';
import type { DecisionRecord } from '../../src/core/model/record.js';
import { REDACTED, Redactor, secretForms } from '../../src/core/redact.js';
import { buildAnnotations } from '../../src/report/annotations.js';
import { formatCommandLine } from '../../src/report/log.js';
import { buildOutputs } from '../../src/report/outputs.js';
import { renderSummary } from '../../src/report/summary.js';
import { record, steps, verdict } from './fixtures.js';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
// HTML-special characters: the summary escapes them, so redaction must happen before escaping.
const cred: AuthFields = { username: 'acme-bot', password: 'p<a&ss|w"ord-2026', auth: '', identitytoken: '' };
const FORMS = {
  password: cred.password,
  'base64(password)': b64(cred.password),
  'user:password': `acme-bot:${cred.password}`,
  'base64(user:password)': b64(`acme-bot:${cred.password}`),
};
const redactor = new Redactor(secretForms([cred]));

/** Every form, and its HTML-escaped spelling, that appears in `text`. */
function leaks(text: string): string[] {
  const html = (s: string) =>
    s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/\|/g, '&#124;');
  return Object.entries(FORMS).flatMap(([form, v]) => [
    ...(text.includes(v) ? [form] : []),
    ...(html(v) !== v && text.includes(html(v)) ? [`${form} (HTML-escaped)`] : []),
  ]);
}

function leakyRecords(): DecisionRecord[] {
  const echo = `failed to decode patch: password: ${FORMS.password} auth ${FORMS['base64(user:password)']} (${FORMS['user:password']}) token ${FORMS['base64(password)']}`;
  const failed = record('w1', 'failed', {
    reason: `applying the credential patch failed: ${echo}`,
    nextStep: `Check the patch (${FORMS.password}), then rerun.`,
    steps: [
      ...steps(3),
      { name: 'talosctl patch machineconfig', startedAt: '2026-03-01T10:00:09.000Z', durationMs: 700, ok: false, detail: echo },
    ],
    evidence: verdict('reboot', `the cri config could not be read: ${echo}`),
    claim: { attempts: 2, conflicts: [`something ${FORMS.password}`] },
  });
  const refused = record('cp-1', 'refused', { reason: `refused: ${FORMS['user:password']}` });
  return [failed, refused];
}

describe('report sinks redact every form of the credential', () => {
  it('the sinks see the secret at all without a redactor (so the checks below can fail)', () => {
    expect(leaks(buildOutputs({ result: 'failed', records: leakyRecords() }).decisions)).not.toEqual([]);
  });

  it('the decisions output', () => {
    const out = buildOutputs({ result: 'failed', records: leakyRecords() }, { redactor });
    expect(leaks(JSON.stringify(out))).toEqual([]);
    expect(out.decisions).toContain(REDACTED);
    expect(out.decisions).toContain('failed to decode patch');
  });

  it('the decisions output when it has to be compacted', () => {
    const out = buildOutputs({ result: 'failed', records: leakyRecords() }, { redactor, budgetBytes: 100 });
    expect(leaks(out.decisions)).toEqual([]);
  });

  it('the annotations', () => {
    const a = buildAnnotations(leakyRecords(), { redactor });
    expect(a.length).toBeGreaterThan(0);
    expect(leaks(JSON.stringify(a))).toEqual([]);
    expect(a.some((x) => x.message.includes('failed to decode patch'))).toBe(true);
  });

  it('the job summary, before HTML escaping and truncation', () => {
    for (const budgetBytes of [undefined, 2000]) {
      const html = renderSummary(
        {
          mode: 'apply',
          registry: ['ghcr.io'],
          revision: 'r1',
          result: 'failed',
          records: leakyRecords(),
          error: `the run stopped: ${FORMS['base64(user:password)']} ${FORMS.password}`,
        },
        { redactor, budgetBytes },
      );
      expect(leaks(html)).toEqual([]);
      expect(html).toContain(REDACTED);
    }
  });

  it('the log lines', () => {
    const c = {
      command: `curl -u ${FORMS['user:password']} -H 'Authorization: Basic ${FORMS['base64(user:password)']}'`,
      durationMs: 5,
      exitCode: 1,
    };
    expect(leaks(formatCommandLine(c, redactor))).toEqual([]);
    expect(leaks([c, c].map((x) => formatCommandLine(x, redactor)).join('\n'))).toEqual([]);
    expect(formatCommandLine(c, redactor)).toContain(`curl -u ${REDACTED}`);
  });
});
