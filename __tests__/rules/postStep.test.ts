// The post step's choice per saved phase, with plain objects: what it does with a node the main step
// still held, given the node as read now (src/rules/postStep.ts).
import { describe, expect, it } from 'vitest';
import type { HeldNode, NodePhase } from '../../src/core/model/phase.js';
import { captureClaim } from '../../src/rules/claim.js';
import { fencedNextStep, releaseCommand } from '../../src/rules/commands.js';
import { choosePostAction, leftAfter, type PostChoice } from '../../src/rules/postStep.js';
import { buildReleasePatch, guardedReleasePatch } from '../../src/rules/release.js';
import { keys, node, OTHER_OWNER, OWNER } from './fixtures.js';

const capture = captureClaim(node({ name: 'w1' }), OWNER);
const held = (phase: NodePhase, stoppedIn?: NodePhase): HeldNode => ({ node: 'w1', phase, stoppedIn, owner: OWNER, capture });
const ours = node({ name: 'w1', annotations: { [keys.owner]: OWNER } });

describe('choosePostAction: by the saved phase', () => {
  it.each<[NodePhase, PostChoice]>([
    ['claiming', { action: 'release', from: 'claiming', expectedPhase: 'claimed' }],
    ['claimed', { action: 'release', from: 'claimed', expectedPhase: 'claimed' }],
    ['settling', { action: 'release', from: 'settling', expectedPhase: 'mutating' }],
    ['draining', { action: 'release', from: 'draining', expectedPhase: 'mutating' }],
    ['mutating', { action: 'leave-fenced', stoppedWhile: 'changing-config' }],
    ['rebooting', { action: 'leave-fenced', stoppedWhile: 'rebooting' }],
    ['proving', { action: 'leave-fenced', stoppedWhile: 'rebooting' }],
  ])('%s, still ours → %o', (phase, want) => {
    expect(choosePostAction(held(phase), ours, keys)).toEqual(want);
  });

  it('left fenced: says what the run was doing when it stopped (mutating when not saved)', () => {
    expect(choosePostAction(held('left-fenced', 'rebooting'), ours, keys)).toEqual({ action: 'leave-fenced', stoppedWhile: 'rebooting' });
    expect(choosePostAction(held('left-fenced', 'mutating'), ours, keys)).toEqual({
      action: 'leave-fenced',
      stoppedWhile: 'changing-config',
    });
    expect(choosePostAction(held('left-fenced'), ours, keys)).toEqual({ action: 'leave-fenced', stoppedWhile: 'changing-config' });
  });

  it('left fenced before any reboot was sent: said from the phase and whether the drain had finished, never "rebooting"', () => {
    const leftIn = (stoppedIn: NodePhase, drained?: true) => choosePostAction({ ...held('left-fenced', stoppedIn), drained }, ours, keys);
    expect(leftIn('draining', true)).toEqual({ action: 'leave-fenced', stoppedWhile: 'drained' });
    expect(leftIn('draining')).toEqual({ action: 'leave-fenced', stoppedWhile: 'draining' });
    expect(leftIn('settling')).toEqual({ action: 'leave-fenced', stoppedWhile: 'settling' });
    expect(leftIn('proving', true)).toEqual({ action: 'leave-fenced', stoppedWhile: 'rebooting' });
  });

  it('left as set: never written, read or not; the Lease stays only once the run had reached phase=mutating', () => {
    expect(choosePostAction(held('left-as-set', 'claimed'), undefined, keys)).toEqual({ action: 'report-as-set', keepsLease: false });
    expect(choosePostAction(held('left-as-set', 'draining'), ours, keys)).toEqual({ action: 'report-as-set', keepsLease: true });
  });

  it('a node that cannot be read: left for a person; for `claiming` the claim may be on it', () => {
    expect(choosePostAction(held('claiming'), undefined, keys)).toEqual({ action: 'unreadable', claimMayBeOn: true });
    expect(choosePostAction(held('draining'), undefined, keys)).toEqual({ action: 'unreadable', claimMayBeOn: false });
  });

  it("a node without this run's token, or a re-created one after an unknown claim: nothing to do", () => {
    const other = node({ name: 'w1', annotations: { [keys.owner]: OTHER_OWNER } });
    expect(choosePostAction(held('claimed'), other, keys)).toEqual({ action: 'nothing', claimDidNotLand: false });
    expect(choosePostAction(held('mutating'), node({ name: 'w1' }), keys)).toEqual({ action: 'nothing', claimDidNotLand: false });
    expect(choosePostAction(held('claiming'), node({ name: 'w1' }), keys)).toEqual({ action: 'nothing', claimDidNotLand: true });
    const recreated = node({ name: 'w1', uid: 'uid-new', annotations: { [keys.owner]: OWNER } });
    expect(choosePostAction(held('claiming'), recreated, keys)).toEqual({ action: 'nothing', claimDidNotLand: true });
  });
});

describe('leftAfter: what fails the step and what keeps the Lease', () => {
  it.each<[PostChoice, boolean, { left: boolean; keepsLease: boolean }]>([
    [{ action: 'release', from: 'claimed', expectedPhase: 'claimed' }, false, { left: false, keepsLease: false }],
    [{ action: 'release', from: 'claimed', expectedPhase: 'claimed' }, true, { left: true, keepsLease: true }],
    [{ action: 'nothing', claimDidNotLand: true }, false, { left: false, keepsLease: false }],
    [{ action: 'unreadable', claimMayBeOn: false }, false, { left: true, keepsLease: true }],
    [{ action: 'leave-fenced', stoppedWhile: 'rebooting' }, false, { left: true, keepsLease: true }],
    [{ action: 'report-as-set', keepsLease: false }, false, { left: true, keepsLease: false }],
  ])('%o (release failed: %s) → %o', (choice, failed, want) => {
    expect(leftAfter(choice, failed)).toEqual(want);
  });
});

describe('the one guarded release and the one left-fenced next step', () => {
  it('guardedReleasePatch: the release behind a test of the phase annotation', () => {
    expect(guardedReleasePatch(capture, keys, 'mutating')).toEqual([
      { op: 'test', path: '/metadata/annotations/registry-auth-rollout~1phase', value: 'mutating' },
      ...buildReleasePatch(capture, keys, {}),
    ]);
  });

  it('releaseCommand with a phase prints exactly that patch', () => {
    const cmd = releaseCommand(capture, keys, {}, 'claimed');
    const ops: unknown = JSON.parse(/-p '([^']+)'/.exec(cmd)![1]);
    expect(ops).toEqual(guardedReleasePatch(capture, keys, 'claimed'));
  });

  it('fencedNextStep: what to check, the release command, and why the run stopped when known', () => {
    const text = fencedNextStep({ node: 'w1', address: '10.0.0.1', release: '`kubectl patch …`', stopped: 'while it was being rebooted' });
    expect(text).toContain('phase=mutating) because the run stopped while it was being rebooted');
    for (const s of ['`kubectl get node w1`', '`talosctl -n 10.0.0.1 service cri`', '`talosctl -n 10.0.0.1 version`', '`kubectl patch …`'])
      expect(text).toContain(s);
    expect(fencedNextStep({ node: 'w1', address: '10.0.0.1', release: 'x' })).not.toContain('because');
  });
});
