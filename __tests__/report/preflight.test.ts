import { describe, expect, it } from 'vitest';
import { present } from '../../src/action/publish.js';
import { PreflightError } from '../../src/core/errors.js';
import { preflightLine } from '../../src/report/preflight.js';
import { renderSummary } from '../../src/report/summary.js';

describe('the pre-flight check in the report', () => {
  it('one line per verdict', () => {
    expect(preflightLine({ verdict: 'ok', host: 'ghcr.io', proves: 'pull', what: 'token flow + manifest HEAD of org/app:tag' })).toBe(
      'pre-flight: ghcr.io token flow + manifest HEAD of org/app:tag: ok',
    );
    expect(preflightLine({ verdict: 'ok', host: 'ghcr.io', proves: 'login', what: 'token flow, login only' })).toContain(
      'a login proves less than a pull',
    );
  });
  it('the summary head carries the lines, escaped', () => {
    const html = renderSummary({
      mode: 'plan',
      registry: ['ghcr.io'],
      revision: 'r1',
      result: 'planned',
      records: [],
      preflight: ['pre-flight: ghcr.io token flow + manifest HEAD of org/app:<b>: ok'],
    });
    expect(html).toContain('<p><b>Pre-flight:</b><br>ghcr.io token flow + manifest HEAD of org/app:&lt;b&gt;: ok</p>');
  });
  it('a run the check stopped: the failure names host, asked and answered; the summary says nothing was touched', () => {
    const error = new PreflightError({
      host: 'ghcr.io',
      verdict: 'refused',
      asked: 'GET https://ghcr.io/token?service=ghcr.io&scope=repository%3Aorg%2Fapp%3Apull with the new credential',
      answered: '401 Unauthorized: UNAUTHORIZED authentication required',
      lines: ['pre-flight: ghcr.io refused: …'],
    });
    // the run stops after its first listing, before the Lease: a failed rollout carrying the error
    const p = present({
      kind: 'rollout',
      mode: 'apply',
      registry: ['ghcr.io'],
      revision: 'r1',
      failOnPartial: false,
      result: 'failed',
      records: [],
      notReached: [],
      upToDate: [],
      error,
    });
    expect(p.failures).toEqual([error.message]);
    expect(error.message).toBe(
      'pre-flight: ghcr.io refused the new credential: asked GET https://ghcr.io/token?service=ghcr.io&scope=repository%3Aorg%2Fapp%3Apull with the new credential; the registry answered 401 Unauthorized: UNAUTHORIZED authentication required. nothing was claimed or changed; fix the credential (or the preflight-image) and run again',
    );
    expect(p.outputs?.result).toBe('failed');
    expect(p.summary?.()).toContain('No node was claimed, drained, patched or rebooted, and no Lease was taken.');
    // any other error of a mode that could not run writes no summary
    expect(present({ kind: 'error', error: new Error('x') }).summary).toBeUndefined();
  });
});
