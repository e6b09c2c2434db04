// The Kubernetes Events of a node's roll, built from its decision record alone: plain records in,
// plain Events out (no pipeline, no kubectl).
import { describe, expect, it } from 'vitest';
import { EVENT_REASONS } from '../../src/core/events.js';
import type { DecisionRecord, StepRecord } from '../../src/core/model/record.js';
import { criRestartStep, STEP, verifyImageStep } from '../../src/core/steps.js';
import { nodeEvents, runEvent } from '../../src/report/events.js';
import { record } from './fixtures.js';

/** Steps one second apart from 10:00:00, each lasting 500 ms; `fail` names the one that failed. */
function stepsOf(names: string[], fail?: string): StepRecord[] {
  return names.map((name, i) => ({
    name,
    startedAt: new Date(Date.UTC(2026, 2, 1, 10, 0, i)).toISOString(),
    durationMs: 500,
    ok: name !== fail,
  }));
}
const at = (second: number) => new Date(Date.UTC(2026, 2, 1, 10, 0, second, 500)).toISOString();

const REBOOTED = [
  STEP.readNode,
  STEP.claim,
  STEP.readEvidence,
  STEP.markMutating,
  STEP.applyPatch,
  STEP.drain,
  STEP.reboot,
  STEP.waitReady,
  STEP.prove,
  STEP.release,
];

describe('nodeEvents', () => {
  it('a rebooted node: claimed, drained, rebooted (with the evidence), verified, released, in order, each at its step end', () => {
    const r = record('worker-1', 'rebooted', { steps: stepsOf(REBOOTED) });
    const events = nodeEvents(r);
    expect(events.map((e) => e.reason)).toEqual(['Claimed', 'Drained', 'Rebooted', 'Verified', 'Released']);
    expect(events.map((e) => e.at)).toEqual([at(1), at(5), at(6), at(8), at(9)]);
    for (const e of events) {
      expect(e.about).toEqual({ kind: 'Node', name: 'worker-1', uid: 'uid-worker-1' });
      expect(e.type).toBe('Normal');
    }
    expect(events[2].message).toBe('rebooted (a new boot id): cri.toml carries the old credential');
    expect(events[3].message).toContain('bootID changed and containerd started after the config write');
  });

  it('a skipped reboot carries its one-line evidence, at the decision after the patch; no drain, no reboot', () => {
    const r = record('worker-3', 'reboot-skipped', {
      steps: stepsOf([
        STEP.readNode,
        STEP.claim,
        STEP.readEvidence,
        STEP.markMutating,
        STEP.applyPatch,
        STEP.reReadBeforeRelease,
        STEP.release,
      ]),
    });
    const events = nodeEvents(r);
    expect(events.map((e) => e.reason)).toEqual(['Claimed', 'RebootSkipped', 'Released']);
    expect(events[1]).toMatchObject({
      at: at(4),
      message: 'reboot skipped: containerd started 63s after the last config write (margin 2s)',
    });
  });

  it('a skip decided by the wait for Talos to restart cri is dated at the end of that wait', () => {
    const r = record('worker-3', 'reboot-skipped', {
      reason: 'Talos restarted cri after the patch: containerd started 2s after cri.toml',
      steps: stepsOf([STEP.claim, STEP.readEvidence, STEP.markMutating, STEP.applyPatch, criRestartStep('20s'), STEP.release]),
    });
    expect(nodeEvents(r).find((e) => e.reason === 'RebootSkipped')?.at).toBe(at(4));
  });

  it('verify-image adds a Verified of its own; an undecided proof released with a warning is a Warning', () => {
    const image = 'ghcr.io/acme/private:1';
    const r = record('worker-1', 'rebooted', {
      steps: stepsOf([...REBOOTED.slice(0, -1), verifyImageStep(image), STEP.release]),
      proofUndecided: { unproven: 'the gap is 0.4 s', settledBy: 'warning', residualRisk: 'containerd may run the old credential' },
    });
    const verified = nodeEvents(r).filter((e) => e.reason === 'Verified');
    expect(verified.map((e) => e.type)).toEqual(['Warning', 'Normal']);
    expect(verified[0].message).toContain('residual risk: containerd may run the old credential');
    expect(verified[1].message).toBe(`pulled ${image} through containerd: the credential works`);
  });

  it('a failed node: only what happened, then RolloutFailed with the next step, at the end of its run', () => {
    const r = record('worker-2', 'failed', {
      steps: stepsOf(
        [STEP.readNode, STEP.claim, STEP.readEvidence, STEP.markMutating, STEP.applyPatch, STEP.drain, STEP.reboot],
        STEP.reboot,
      ),
      endedAt: at(20),
    });
    const events = nodeEvents(r);
    expect(events.map((e) => e.reason)).toEqual(['Claimed', 'Drained', 'RolloutFailed']);
    expect(events[2]).toMatchObject({ type: 'Warning', at: at(20) });
    expect(events[2].message).toBe(`drain timed out after 45m Next step: ${r.nextStep}`);
  });

  it('a quarantined node is a Warning that says how to lift it; a refused one names no claim it never made', () => {
    const q = record('worker-2', 'quarantined', {
      steps: stepsOf([STEP.claim, STEP.drain, STEP.quarantine], STEP.drain),
      nextStep: 'lift it: rerun',
    });
    expect(nodeEvents(q).map((e) => [e.reason, e.type])).toEqual([
      ['Claimed', 'Normal'],
      ['Quarantined', 'Warning'],
    ]);
    expect(nodeEvents(q)[1].message).toContain('Next step: lift it: rerun');
    const refused = record('worker-2', 'refused', { claim: undefined, steps: stepsOf([STEP.readNode]) });
    expect(nodeEvents(refused).map((e) => e.reason)).toEqual(['RolloutRefused']);
  });

  it('a stop that released the node says so: claimed, released (restored), failed', () => {
    const r = record('worker-2', 'failed', { steps: stepsOf([STEP.claim, STEP.readEvidence, STEP.releaseRestore]), endedAt: at(9) });
    const events = nodeEvents(r);
    expect(events.map((e) => e.reason)).toEqual(['Claimed', 'Released', 'RolloutFailed']);
    expect(events[1].message).toContain('no verified marker');
  });

  it('messages are built whole (the writer masks, folds and cuts them: __tests__/pipeline/events.test.ts), every reason documented', () => {
    const reason = `line one\nline two ${'x'.repeat(3000)}`;
    const r = record('worker-2', 'failed', { reason, nextStep: undefined, steps: stepsOf([STEP.claim]) });
    const events = nodeEvents(r);
    expect(events.find((e) => e.reason === 'RolloutFailed')?.message).toBe(reason);
    for (const e of events) expect(EVENT_REASONS).toContain(e.reason);
  });
});

describe('runEvent', () => {
  const lease = { namespace: 'kube-system', name: 'registry-auth-rollout', uid: 'lease-uid' };
  const records: DecisionRecord[] = [record('w-1', 'rebooted'), record('w-2', 'rebooted'), record('w-3', 'reboot-skipped')];

  it('a run that processed every node: RolloutSucceeded on the Lease, with the nodes by outcome', () => {
    const e = runEvent(lease, { result: 'processed', records, notReached: 0, at: at(30) });
    expect(e).toEqual({
      about: { kind: 'Lease', ...lease },
      reason: 'RolloutSucceeded',
      type: 'Normal',
      message: 'the run ended processed (2 rebooted, 1 reboot-skipped)',
      at: at(30),
    });
  });

  it('a failed or partial run is a Warning that says why and how many nodes were not reached', () => {
    const failed = runEvent(lease, { result: 'failed', records, notReached: 2, at: at(30), error: 'a node failed' });
    expect(failed).toMatchObject({ reason: 'RolloutFailed', type: 'Warning' });
    expect(failed.message).toBe('the run ended failed: a node failed (2 rebooted, 1 reboot-skipped; 2 node(s) not reached)');
    expect(runEvent(lease, { result: 'partial', records, notReached: 1, at: at(30) }).reason).toBe('RolloutPartial');
  });
});

it('every reason is a stable CamelCase word', () => {
  for (const r of EVENT_REASONS) expect(r).toMatch(/^[A-Z][a-zA-Z]+$/);
});
