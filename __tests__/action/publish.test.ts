// The one publisher, through a recording core-like port: a plain report of any mode in, the exact
// outputs, log lines, annotations, summary and failure calls out.
import { describe, expect, it } from 'vitest';
import { MaskedCore } from '../../src/action/masked.js';
import { publish, type ActionReport } from '../../src/action/publish.js';
import { InputError, RolloutError } from '../../src/core/errors.js';
import { annotationKeys } from '../../src/core/model/node.js';
import type { FencesReport } from '../../src/fences/run.js';
import type { RolloutReport } from '../../src/pipeline/rolloutMode.js';
import { Redactor } from '../../src/core/redact.js';
import type { FenceRow } from '../../src/rules/fences.js';
import { record } from '../report/fixtures.js';
import { HOLDS, W1 } from '../report/timelineFixture.js';
import { recorder } from './recorder.js';

const OUTPUT_KEYS = ['result', 'decisions', 'rebooted', 'reboots-skipped', 'refused', 'left', 'in-flight-max'];

function rollout(over: Partial<RolloutReport> = {}): RolloutReport {
  return {
    kind: 'rollout',
    mode: 'apply',
    registry: ['registry.example.com'],
    revision: 'r7',
    talosReads: 'reading Talos through the API',
    failOnPartial: false,
    result: 'processed',
    records: [],
    notReached: [],
    upToDate: [],
    ...over,
  };
}

const ROW: FenceRow = {
  node: 'w1',
  uid: 'uid-w1',
  owner: 'acme/infra/runs/101/attempts/1/aaaa',
  phase: 'mutating',
  wasCordoned: 'false',
  schedulableNow: false,
  releaseCommand: "`kubectl patch node w1 --type=json -p '[]'`",
};

function fences(over: Partial<FencesReport> = {}): FencesReport {
  return {
    kind: 'fences',
    mode: 'fences',
    result: 'clean',
    config: { annotationPrefix: 'registry-auth-rollout', leaseNamespace: 'kube-system', leaseName: 'rar' },
    leaseRef: { namespace: 'kube-system', name: 'rar' },
    asOf: Date.UTC(2026, 10, 30, 10),
    rows: [ROW],
    leaseDecision: { action: 'none', reason: 'no holder' },
    decisions: [{ node: 'w1', action: 'refuse', reason: 'phase is mutating' }],
    runs: new Map(),
    releasedNodes: [],
    refused: [],
    leaseReleased: false,
    failures: [],
    actions: [],
    ok: true,
    ...over,
  };
}

describe('publish: apply and plan', () => {
  it('every output, one annotation per node outcome, the summary, and no failure', async () => {
    const rec = recorder();
    const records = [record('w1', 'rebooted'), record('w2', 'reboot-skipped')];
    await publish(rollout({ records, notReached: ['w3'], inFlightMax: 2, maxUnavailable: 2 }), rec.port);
    expect(Object.keys(rec.outputs()).sort()).toEqual([...OUTPUT_KEYS].sort());
    expect(rec.outputs()).toMatchObject({
      result: 'processed',
      rebooted: '1',
      'reboots-skipped': '1',
      refused: '0',
      left: '1',
      'in-flight-max': '2',
    });
    expect(JSON.parse(rec.outputs().decisions).map((d: { name: string }) => d.name)).toEqual(['w1', 'w2']);
    expect(rec.of('notice').map((n) => n[0])).toEqual(['w1: rebooted', 'w2: reboot skipped']);
    const [[html]] = rec.of('summary') as string[][];
    expect(html).toContain('Registry auth rollout: <code>registry.example.com</code> revision <code>r7</code>');
    expect(html).toContain('At most 2 in flight at once');
    expect(rec.of('setFailed')).toEqual([]);
    // outputs first: a step that fails later still has them
    expect(rec.calls[0][0]).toBe('setOutput');
  });

  it('clean: says so in the log; plan: the plan heading', async () => {
    const rec = recorder();
    await publish(rollout({ mode: 'plan', result: 'clean', upToDate: ['w1'] }), rec.port);
    expect(rec.of('info')).toEqual([['every selected node already verified revision r7: nothing to do']]);
    expect(String(rec.of('summary')[0][0])).toContain('Registry auth rollout plan (read-only)');
  });

  it('the Alertmanager silence: its id in the summary; a failure of Alertmanager one warning annotation, never a failure', async () => {
    const rec = recorder();
    const silence = {
      alertmanager: 'https://am.example:9093',
      silences: [
        { id: '3a0f6c1e-2b4d-4e8f-9a7b-1c2d3e4f5a6b', matchers: 'node=~"w1|w2"', state: 'expired' as const },
        { matchers: 'instance=~"(w1|w2)(:[0-9]+)?"', state: 'not-created' as const },
      ],
      warnings: [
        'Alertmanager silence: the silence instance=~"(w1|w2)(:[0-9]+)?" was not created: POST https://am.example:9093/api/v2/silences: ECONNREFUSED',
      ],
    };
    await publish(rollout({ records: [W1], silence }), rec.port);
    const summary = String(rec.of('summary')[0][0]);
    expect(summary).toContain('<code>3a0f6c1e-2b4d-4e8f-9a7b-1c2d3e4f5a6b</code>');
    expect(summary).toContain('expired at the end of the roll');
    expect(rec.of('warning')).toEqual([['Alertmanager silence', silence.warnings[0]]]);
    expect(rec.of('setFailed')).toEqual([]);
  });

  it('partial: a notice, or a failure with fail-on-partial', async () => {
    const partial = { result: 'partial' as const, notReached: ['w2', 'w3'], notice: 'time-budget 1h reached' };
    const soft = recorder();
    await publish(rollout(partial), soft.port);
    expect(soft.of('notice')).toEqual([
      [
        'time-budget reached',
        '2 node(s) left for the next run (time-budget 1h reached); every node started ended released or verified, and a rerun continues with the rest',
      ],
    ]);
    expect(soft.of('setFailed')).toEqual([]);
    expect(soft.outputs().left).toBe('2');

    const hard = recorder();
    await publish(rollout({ ...partial, failOnPartial: true }), hard.port);
    expect(hard.of('notice')).toEqual([]);
    expect(hard.of('setFailed')).toEqual([[expect.stringMatching(/^2 node\(s\) left for the next run .* \(fail-on-partial: true\)$/)]]);
  });

  it('the holds of the run reach the summary: the timeline marks the budget stop', async () => {
    const rec = recorder();
    await publish(rollout({ result: 'partial', records: [W1], holds: [HOLDS[1]], notReached: ['w4'], inFlightMax: 1 }), rec.port);
    const [[html]] = rec.of('summary') as Array<[string]>;
    expect(html).toContain('! time budget at 1m55s (w4): time-budget: 40s left');
  });

  it("a run's error fails the step with its next step, and no secret reaches the failure, the outputs or the summary", async () => {
    const rec = recorder();
    const secret = 's3cr3t-passw0rd';
    const error = new RolloutError('w1', `kubectl said ${secret}`, 'release w1 by hand');
    const records = [record('w1', 'failed', { reason: `boom ${secret}` })];
    // as src/action/main.ts publishes: through the masking port, the same redactor for the renderers
    const port = new MaskedCore(rec.port, new Redactor([secret]));
    await publish(rollout({ result: 'failed', records, error }), port, { redactor: port.redactor });
    expect(rec.of('setFailed')).toEqual([['w1: kubectl said ***\nNext step: release w1 by hand']]);
    expect(rec.outputs().result).toBe('failed');
    expect(JSON.stringify(rec.calls)).not.toContain(secret);
    expect(rec.of('error')).toHaveLength(1);
  });

  it('a summary that cannot be written is a warning: the outputs and the failure stand', async () => {
    const rec = recorder({ summaryThrows: true });
    await publish(rollout({ result: 'failed', error: new Error('lost the Lease') }), rec.port);
    expect(rec.of('warning')).toEqual([[undefined, 'could not write the job summary: EACCES: step summary file']]);
    expect(rec.outputs().result).toBe('failed');
    expect(rec.of('setFailed')).toEqual([['lost the Lease']]);
  });
});

describe('publish: fences and recover-fences', () => {
  it('fences: the same seven outputs (left and in-flight-max 0), the fence rows as decisions, its own summary', async () => {
    const rec = recorder();
    await publish(fences(), rec.port);
    expect(rec.outputs()).toEqual({
      result: 'clean',
      decisions: JSON.stringify([ROW]),
      rebooted: '0',
      'reboots-skipped': '0',
      refused: '0',
      left: '0',
      'in-flight-max': '0',
    });
    expect(String(rec.of('summary')[0][0])).toContain('<h2>Fences: 1 node carrying a claim</h2>');
    expect(rec.of('setFailed')).toEqual([]);
  });

  it('recover-fences: each release in the log, each refused fence a warning, each failure in one failure message', async () => {
    const rec = recorder();
    const report = fences({
      mode: 'recover-fences',
      result: 'failed',
      ok: false,
      releasedNodes: ['w4'],
      refused: [{ node: 'w1', reason: 'phase is mutating' }],
      actions: ['w4: released (its run has completed)'],
      failures: [{ node: 'w3', reason: 'release failed: connection refused' }, { reason: 'reading it again failed: timeout' }],
    });
    await publish(report, rec.port);
    expect(rec.outputs()).toMatchObject({ result: 'failed', refused: '1', left: '0', 'in-flight-max': '0' });
    expect(rec.of('info')).toEqual([['w4: released (its run has completed)']]);
    expect(rec.of('warning')).toEqual([['w1: fence left in place', 'phase is mutating']]);
    expect(rec.of('setFailed')).toEqual([
      ['recover-fences: w3: release failed: connection refused; Lease kube-system/rar: reading it again failed: timeout'],
    ]);
    expect(String(rec.of('summary')[0][0])).toContain('<li>FAILED: Lease kube-system/rar: reading it again failed: timeout</li>');
  });
});

describe('publish: a mode that could not run', () => {
  it('every output says failed (left and in-flight-max 0), the error fails the step, no summary', async () => {
    const rec = recorder();
    const report: ActionReport = { kind: 'error', error: new InputError('mode', '"roll" is not one of apply, plan') };
    await publish(report, rec.port);
    expect(rec.outputs()).toEqual({
      result: 'failed',
      decisions: '[]',
      rebooted: '0',
      'reboots-skipped': '0',
      refused: '0',
      left: '0',
      'in-flight-max': '0',
    });
    expect(rec.of('setFailed')).toEqual([[expect.stringContaining('"roll" is not one of apply, plan')]]);
    expect(rec.of('summary')).toEqual([]);
  });
});

describe('a post step report', () => {
  const capture = {
    node: 'w1',
    uid: 'uid-w1',
    internalIP: '10.0.0.1',
    role: 'worker' as const,
    wasCordoned: false,
    taints: [],
    schedulingTaints: [],
    owner: 'o',
  };
  it('sets no output and writes no summary: its lines, its annotations, then what fails the step', async () => {
    const rec = recorder();
    const report: ActionReport = {
      kind: 'post',
      stateErrors: [],
      keys: annotationKeys('registry-auth-rollout'),
      kubectl: {},
      nodes: [
        {
          held: { node: 'w1', phase: 'claimed', owner: 'o', capture },
          choice: { action: 'release', from: 'claimed', expectedPhase: 'claimed' },
        },
        {
          held: { node: 'w2', phase: 'rebooting', owner: 'o', capture: { ...capture, node: 'w2' } },
          choice: { action: 'leave-fenced', stoppedWhile: 'rebooting' },
        },
      ],
      lease: { namespace: 'kube-system', name: 'l', outcome: 'kept' },
      leftClaimed: true,
    };
    await publish(report, rec.port);
    expect(rec.outputs()).toEqual({});
    expect(rec.of('summary')).toEqual([]);
    expect(rec.calls.map((c) => [c[0], c[1]])).toEqual([
      ['notice', 'w1: released by the post step'],
      ['error', 'w2: left fenced by a stopped run'],
      ['warning', 'run Lease kept'],
      ['setFailed', expect.stringContaining('left a node of this run claimed or cordoned')],
    ]);
  });
});

describe('the result union', () => {
  it('action.yml documents every value of the one list the run and the outputs share', async () => {
    const { readFileSync } = await import('node:fs');
    const { parse } = await import('yaml');
    const { ACTION_RESULTS } = await import('../../src/core/model/record.js');
    const action = parse(readFileSync(new URL('../../action.yml', import.meta.url), 'utf8')) as {
      outputs: Record<string, { description: string }>;
    };
    const documented = [...action.outputs.result.description.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]).filter((w) => w !== 'time-budget');
    expect(documented.sort()).toEqual([...ACTION_RESULTS].sort());
  });
});
