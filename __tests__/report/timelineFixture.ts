// A fixed parallel roll for the timeline tests: three workers with max-unavailable 2, the settle
// gate holding w3's start after w2, and the time budget refusing w4 when w1 ended.
import type { DecisionRecord, RollHold, StepRecord } from '../../src/core/model/record.js';
import { criRestartStep, STEP } from '../../src/core/steps.js';

export const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

/** steps as [name, start s, end s] */
function steps(list: Array<[string, number, number]>): StepRecord[] {
  return list.map(([name, from, to]) => ({ name, startedAt: at(from), durationMs: (to - from) * 1000, ok: true }));
}

function node(
  name: string,
  outcome: DecisionRecord['outcome'],
  from: number,
  to: number,
  list: Array<[string, number, number]>,
): DecisionRecord {
  return {
    node: name,
    uid: `uid-${name}`,
    role: 'worker',
    internalIP: '10.0.0.1',
    outcome,
    reason: outcome,
    steps: steps(list),
    durationMs: (to - from) * 1000,
    startedAt: at(from),
    endedAt: at(to),
  };
}

/** A node rebooted from `s` on: claim, drain, reboot, wait for Ready, prove, release, with the reads between. */
function rebooted(name: string, s: number, drainS: number, readyS: number): DecisionRecord {
  const d = s + 4.2;
  const r = d + drainS + 0.3;
  const ready = r + 10;
  const proof = ready + readyS;
  const end = proof + 5.6;
  return node(name, 'rebooted', s, end, [
    ['read node', s, s + 0.2],
    [STEP.claim, s + 0.2, s + 0.5],
    ['read reboot evidence', s + 0.5, s + 2],
    ['phase=mutating', s + 2, s + 2.3],
    ['apply the credential patch', s + 2.3, s + 4],
    ['guard (before drain)', s + 4, d],
    [STEP.drain, d, d + drainS],
    ['guard (after drain)', d + drainS, r],
    [STEP.reboot, r, ready],
    [STEP.waitReady, ready, proof],
    [STEP.prove, proof, proof + 5],
    ['re-read node (before the release)', proof + 5, proof + 5.2],
    [STEP.release, proof + 5.2, end],
  ]);
}

export const W1 = rebooted('w1', 0, 35.8, 60); // 0 s to 115.6 s
export const W2 = node('w2', 'reboot-skipped', 0, 18, [
  ['read node', 0, 0.2],
  [STEP.claim, 0.2, 0.5],
  ['read reboot evidence', 0.5, 2],
  ['phase=mutating', 2, 2.3],
  ['apply the credential patch', 2.3, 5],
  [criRestartStep('20.0 s'), 5, 17],
  ['re-read node (before the release)', 17, 17.2],
  [STEP.release, 17.2, 18],
]);
export const W3 = rebooted('w3', 60, 25, 50); // 60 s to 155.6 s

export const HOLDS: RollHold[] = [
  { kind: 'settle', startedAt: at(18), endedAt: at(60), detail: 'deployment default/web: 1 of 2 replicas available', node: 'w3' },
  {
    kind: 'budget',
    startedAt: at(115.6),
    detail: 'time-budget: 40s left, a worker may take 7m36s; w4 is left for the next run',
    node: 'w4',
  },
];

export const RECORDS = [W1, W2, W3];
