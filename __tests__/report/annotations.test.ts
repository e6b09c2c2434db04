import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/core/model/record.js';
import { buildAnnotations, MAX_ANNOTATIONS_PER_KIND } from '../../src/report/annotations.js';
import { record, verdict } from './fixtures.js';

const ofKind = (a: ReturnType<typeof buildAnnotations>, kind: string) => a.filter((x) => x.kind === kind);

describe('buildAnnotations', () => {
  it.each<[Outcome, string]>([
    ['rebooted', 'w1: rebooted'],
    ['reboot-skipped', 'w1: reboot skipped'],
    ['planned-reboot', 'w1: planned reboot'],
    ['planned-skip', 'w1: planned skip'],
  ])('a %s node gets one notice with the evidence reason', (outcome, title) => {
    const r = record('w1', outcome, { reason: 'one-line reason' });
    const a = buildAnnotations([r]);
    expect(a).toHaveLength(1);
    expect(a[0]).toMatchObject({ kind: 'notice', title });
    expect(a[0].message).toContain('one-line reason');
    expect(a[0].message).toContain(r.evidence!.reason);
  });

  it.each<[Outcome]>([['refused'], ['failed']])('a %s node gets an error with the cause and the next step, and no notice', (outcome) => {
    const r = record('cp-1', outcome);
    const a = buildAnnotations([r]);
    expect(a).toHaveLength(1);
    expect(a[0].kind).toBe('error');
    expect(a[0].title).toBe(`cp-1: ${outcome}`);
    expect(a[0].message).toContain(r.reason);
    expect(a[0].message).toContain(`Next step: ${r.nextStep}`);
  });

  it('warns when the claim needed retries, naming the conflicts', () => {
    const r = record('w2', 'reboot-skipped', {
      claim: { attempts: 2, conflicts: ['taint DeletionCandidateOfClusterAutoscaler:PreferNoSchedule appeared'] },
    });
    const a = buildAnnotations([r, record('w3', 'rebooted')]);
    const warnings = ofKind(a, 'warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0].title).toBe('w2: claim needed 2 attempts');
    expect(warnings[0].message).toContain('DeletionCandidateOfClusterAutoscaler');
    expect(ofKind(a, 'notice')).toHaveLength(2);
  });

  it('does not warn on a first-attempt claim', () => {
    expect(ofKind(buildAnnotations([record('w1', 'rebooted', { claim: { attempts: 1, conflicts: [] } })]), 'warning')).toHaveLength(0);
  });

  it('keeps titles on one line and starting with the node name', () => {
    const a = buildAnnotations([record('evil\nnode', 'failed', { reason: 'line1\nline2' })]);
    expect(a[0].title).toBe('evil node: failed');
    expect(a[0].message).toContain('line1\nline2');
  });

  it('keeps at most 10 of each kind with 25 nodes, summarising the rest in the 10th', () => {
    const records = Array.from({ length: 25 }, (_, i) => {
      const outcome: Outcome = i < 15 ? 'rebooted' : 'reboot-skipped';
      return record(`w${String(i).padStart(2, '0')}`, outcome, { claim: { attempts: 3, conflicts: [`conflict on w${i}`] } });
    });
    // Real runs stop at the first failure; a report must still respect the cap if handed more.
    const failures = Array.from({ length: 25 }, (_, i) => record(`f${String(i).padStart(2, '0')}`, i % 2 ? 'refused' : 'failed'));
    const a = buildAnnotations([...records, ...failures]);

    for (const kind of ['notice', 'warning', 'error']) expect(ofKind(a, kind)).toHaveLength(MAX_ANNOTATIONS_PER_KIND);

    const notices = ofKind(a, 'notice');
    expect(notices.slice(0, 9).map((n) => n.title)).toEqual(records.slice(0, 9).map((r) => `${r.node}: rebooted`));
    const last = notices[9];
    expect(last.title).toBe('w09 and 15 more: rebooted 6, reboot skipped 10');
    expect(last.message).toContain('16 more node outcomes');
    expect(last.message).toContain('rebooted (6): w09, w10, w11, w12, w13, w14');
    expect(last.message).toMatch(/reboot skipped \(10\): w15, .*w24/);

    const warnings = ofKind(a, 'warning');
    expect(warnings[9].title).toBe('w09 and 15 more: claim retried 16');
    expect(warnings[9].message).toContain('16 more warnings');

    const errors = ofKind(a, 'error');
    expect(errors[9].title).toBe('f09 and 15 more: refused 8, failed 8');
  });

  it('truncates the names listed in an overflow summary', () => {
    const records = Array.from({ length: 60 }, (_, i) => record(`n${i}`, 'reboot-skipped'));
    const last = ofKind(buildAnnotations(records), 'notice')[9];
    expect(last.title).toBe('n9 and 50 more: reboot skipped 51');
    expect(last.message).toContain('and 31 more');
    expect(last.message).not.toContain('n59');
  });

  it('emits exactly 10 without summarising when there are exactly 10', () => {
    const a = buildAnnotations(Array.from({ length: 10 }, (_, i) => record(`n${i}`, 'rebooted')));
    expect(a).toHaveLength(10);
    expect(a[9].title).toBe('n9: rebooted');
  });
});

describe('buildAnnotations: the readings behind a notice', () => {
  it('names the read path and the gap ± its uncertainty of both the pre-patch reading and the proof', () => {
    const r = record('w1', 'rebooted', {
      evidence: verdict('reboot', 'cri.toml carries the old credential', { gap: { lowMs: 7_000, highMs: 9_000 }, readPath: 'cli' }),
      proof: verdict('skip', 'containerd started after the write', { gap: { lowMs: 410, highMs: 414 }, readPath: 'api' }),
    });
    const [notice] = buildAnnotations([r]);
    expect(notice.message).toContain(
      'Readings: before the patch: start − write +8 s ± 1 s, read via cli; proof: start − write +412 ms ± 2 ms, read via api',
    );
  });

  it('says when a reading measured no gap', () => {
    const r = record('w1', 'reboot-skipped', {
      evidence: verdict('reboot', 'cri is not Running', { gap: undefined, readPath: undefined }),
    });
    expect(buildAnnotations([r])[0].message).toContain('Readings: before the patch: start − write not measured');
  });
});
