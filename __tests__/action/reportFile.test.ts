// The report file as the main step publishes it: written through the masking port into RUNNER_TEMP with
// mode 0600, its path and the old-credential verdict as outputs; a failed write is an error annotation
// that leaves the run's own result, outputs and failure as they were; the fences modes write none.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MaskedCore } from '../../src/action/masked.js';
import { publish } from '../../src/action/publish.js';
import { reportFilePath, writePrivateFile } from '../../src/action/reportFile.js';
import { Redactor } from '../../src/core/redact.js';
import type { RolloutReport } from '../../src/pipeline/rolloutMode.js';
import { RUN_REPORT_SCHEMA } from '../../src/report/runReport.js';
import { record } from '../report/fixtures.js';
import { readReport } from '../report/reportSchema.js';
import { recorder } from './recorder.js';

const OWNER = 'acme/platform/runs/4242/attempts/2/a1b2c3';

function rollout(over: Partial<RolloutReport> = {}): RolloutReport {
  return {
    kind: 'rollout',
    mode: 'apply',
    registry: ['ghcr.io'],
    revision: 'r7',
    talosReads: 'reading Talos through the API',
    failOnPartial: false,
    result: 'processed',
    records: [record('w1', 'rebooted')],
    notReached: [],
    upToDate: ['w2'],
    owner: OWNER,
    revocation: { revocable: true, reason: 'all 2 node(s)', holders: [], judged: 2, outsideScope: 0, selectionConverged: true },
    ...over,
  };
}

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});
const temp = () => (dir = mkdtempSync(join(tmpdir(), 'rar-report-')));
const NOW = () => new Date('2026-03-01T10:10:00.000Z');

describe('the report file', () => {
  it('is written into RUNNER_TEMP with mode 0600, masked, its path and the verdict as outputs', async () => {
    const runnerTemp = temp();
    const secret = 's3cr3t-passw0rd';
    const rec = recorder();
    const port = new MaskedCore(rec.port, new Redactor([secret]));
    const report = rollout({ records: [record('w1', 'rebooted', { reason: `said ${secret}` })] });
    await publish(report, port, { redactor: port.redactor, reportFile: { runnerTemp, serverUrl: 'https://github.com', now: NOW } });
    const path = rec.outputs()['report-file'];
    expect(path).toBe(join(runnerTemp, 'talos-registry-auth-rollout-4242-2-a1b2c3.json'));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8')).not.toContain(secret);
    const doc = readReport(path);
    expect(doc).toMatchObject({ schema: RUN_REPORT_SCHEMA, version: 2, mode: 'apply', result: 'processed', upToDate: ['w2'] });
    expect(doc.run).toEqual({
      repository: 'acme/platform',
      runId: '4242',
      runAttempt: '2',
      owner: OWNER,
      url: 'https://github.com/acme/platform/actions/runs/4242/attempts/2',
    });
    expect(doc.nodes[0].reason).toBe('said ***');
    expect(rec.outputs()['old-credential-revocable']).toBe('true');
    expect(rec.outputs()['selection-converged']).toBe('true');
    expect(rec.of('error')).toEqual([]);
  });

  it('RUNNER_TEMP missing or unwritable: an error annotation naming it; the result, outputs and failure stand', async () => {
    const rec = recorder();
    const port = new MaskedCore(rec.port);
    await publish(rollout({ result: 'failed', error: new Error('lost the Lease') }), port, { reportFile: { runnerTemp: undefined } });
    expect(rec.outputs()).toMatchObject({
      result: 'failed',
      'report-file': '',
      'old-credential-revocable': 'true',
      'selection-converged': 'true',
    });
    expect(rec.of('error')).toEqual([['report file not written', expect.stringContaining('RUNNER_TEMP is not set')]]);
    expect(rec.of('setFailed')).toEqual([['lost the Lease']]);

    const gone = recorder();
    await publish(rollout(), new MaskedCore(gone.port), { reportFile: { runnerTemp: join(tmpdir(), 'rar-no-such-dir', 'x') } });
    expect(gone.outputs()).toMatchObject({ result: 'processed', 'report-file': '' });
    expect(gone.of('error')[0][1]).toMatch(/cannot create .* in RUNNER_TEMP \(ENOENT\)/);
    expect(gone.of('setFailed')).toEqual([]);
  });

  it('the fences modes and a mode that could not run write none: report-file empty, revocable and converged false', async () => {
    const rec = recorder();
    await publish({ kind: 'error', error: new Error('bad input') }, new MaskedCore(rec.port), { reportFile: { runnerTemp: temp() } });
    expect(rec.outputs()).toMatchObject({
      result: 'failed',
      'report-file': '',
      'old-credential-revocable': 'false',
      'selection-converged': 'false',
    });
  });

  it('a run without a verdict says false', async () => {
    const rec = recorder();
    await publish(rollout({ revocation: undefined }), new MaskedCore(rec.port), { reportFile: { runnerTemp: temp(), now: NOW } });
    expect(rec.outputs()['old-credential-revocable']).toBe('false');
    expect(rec.outputs()['selection-converged']).toBe('false');
  });
});

describe('writePrivateFile and reportFilePath', () => {
  it('never writes over an existing file (or a link planted at the path)', () => {
    const p = join(temp(), 'r.json');
    writeFileSync(p, 'theirs');
    expect(() => writePrivateFile(p, 'ours')).toThrow(/cannot create .* \(EEXIST\)/);
    expect(readFileSync(p, 'utf8')).toBe('theirs');
  });

  it('needs an absolute RUNNER_TEMP; without an identity the file is named by the instant', () => {
    expect(() => reportFilePath('relative/dir', undefined, NOW())).toThrow(/RUNNER_TEMP is not an absolute path/);
    expect(reportFilePath('/tmp/x', undefined, NOW())).toBe('/tmp/x/talos-registry-auth-rollout-2026-03-01T10-10-00-000Z.json');
  });
});
