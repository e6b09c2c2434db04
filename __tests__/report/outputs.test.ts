import { describe, expect, it } from 'vitest';
import type { DecisionRecord, Outcome } from '../../src/core/model/record.js';
import { buildOutputs, type DecisionOutput } from '../../src/report/outputs.js';
import { record } from './fixtures.js';

const OUTCOMES: Outcome[] = [
  'rebooted',
  'rebooted',
  'reboot-skipped',
  'reboot-skipped',
  'reboot-skipped',
  'refused',
  'failed',
  'planned-skip',
  'refused',
];

describe('buildOutputs', () => {
  const records = OUTCOMES.map((o, i) => record(`w${i}`, o));
  records[2].claim = { attempts: 3, conflicts: ['taint node.kubernetes.io/unschedulable:NoSchedule appeared', 'annotations map appeared'] };
  const out = buildOutputs({ result: 'failed', records });

  it('counts each outcome as a string', () => {
    expect(out.result).toBe('failed');
    expect(out.rebooted).toBe('2');
    expect(out['reboots-skipped']).toBe('3');
    expect(out.refused).toBe('2');
  });

  it('round-trips every record through JSON', () => {
    const decisions = JSON.parse(out.decisions) as DecisionOutput[];
    expect(decisions).toHaveLength(records.length);
    decisions.forEach((d, i) => {
      const r = records[i];
      expect(d.name).toBe(r.node);
      expect(d.uid).toBe(r.uid);
      expect(d.role).toBe(r.role);
      expect(d.internalIP).toBe(r.internalIP);
      expect(d.outcome).toBe(r.outcome);
      expect(d.reason).toBe(r.reason);
      expect(d.evidence).toEqual(r.evidence ?? null);
      expect(d.proof).toEqual(r.proof ?? null);
      expect(d.claim).toEqual(r.claim ?? null);
      expect(d.nextStep).toBe(r.nextStep ?? null);
      expect(d.durationMs).toBe(r.durationMs);
      expect(d.steps).toEqual(r.steps.map((s) => JSON.parse(JSON.stringify(s))));
    });
    expect(decisions[2].claim?.conflicts).toHaveLength(2);
    expect(decisions[0].proof?.verdict).toBe('skip');
    expect(decisions[7].claim).toBeNull();
  });

  it('does not share objects with the records', () => {
    const before = JSON.stringify(records);
    const decisions = JSON.parse(buildOutputs({ result: 'processed', records }).decisions) as DecisionOutput[];
    decisions[0].evidence!.values.files.push({ path: 'x' });
    expect(JSON.stringify(records)).toBe(before);
  });

  it('is an empty array with zero counts when nothing was selected', () => {
    expect(buildOutputs({ result: 'clean', records: [] })).toEqual({
      result: 'clean',
      decisions: '[]',
      rebooted: '0',
      'reboots-skipped': '0',
      refused: '0',
      left: '0',
      'in-flight-max': '0',
    });
  });

  it('stays under the job-output budget for 1000 nodes with long step details, keeping every decision', () => {
    const many: DecisionRecord[] = Array.from({ length: 1000 }, (_, i) =>
      record(`node-${String(i).padStart(4, '0')}`, i % 2 ? 'reboot-skipped' : 'rebooted', {
        steps: record('x', 'rebooted').steps.map((s) => ({ ...s, detail: 'x'.repeat(400) })),
      }),
    );
    const full = JSON.stringify(many);
    expect(Buffer.byteLength(full)).toBeGreaterThan(1024 * 1024);
    const o = buildOutputs({ result: 'processed', records: many });
    expect(Buffer.byteLength(o.decisions)).toBeLessThanOrEqual(900_000);
    const decisions = JSON.parse(o.decisions) as DecisionOutput[];
    expect(decisions).toHaveLength(1000);
    expect(decisions.every((d) => d.evidence?.verdict && d.reason && d.outcome)).toBe(true);
    expect(o.rebooted).toBe('500');
    expect(o['reboots-skipped']).toBe('500');
  });
});
