// The adoption of an abandoned claim (src/rules/adopt.ts): which claims a run holding the run Lease may
// take over, and the one CAS patch that does it.
//
// The correctness argument (docs/recovery.md, "The claims of a run that lost the Lease are adopted"):
// every claim is written under the run Lease, and a holder proves the Lease before each Talos mutation,
// drain, reboot and verified release. So once this run holds the Lease, a claim of another token of this
// action belongs to a run that can no longer act; it may be completed by this run, provided everything a
// release needs is still on the node and the fence still stands. Each condition below is one case:
// - owner: an owner token of this action, not this run's own (another attempt of the same run is another run);
// - phase: `claimed` or `mutating` (the phases a claim writes);
// - `was-cordoned`: `true` or `false` (what the release gives back);
// - the node is still cordoned (an operator who uncordoned a claimed node took it back: a person decides);
// - no deletion started.
// Anything else stays a residual claim the inventory refuses, for a person. A claim outside the run's
// selection is refused by the pipeline before anything changes (__tests__/pipeline/adoption.test.ts).
// The patch tests the whole claim as judged, so a node that moved since the read is left as it is.
import { describe, expect, it } from 'vitest';
import type { NodeState } from '../../src/core/model/node.js';
import { adoptable, adoptedCapture, adoptionRefusal, buildAdoptPatch } from '../../src/rules/adopt.js';
import { applyJsonPatch, nodeFromJson, nodeJson, PatchRejected } from '../fakes/jsonPatch.js';
import { keys, node } from './fixtures.js';

const ME = 'acme/platform/runs/7070/attempts/2/a1b2c3d4';
const KILLED = 'acme/platform/runs/7070/attempts/1/0c0ffee0';
const OTHER_RUN = 'acme/platform/runs/6969/attempts/1/deadbeef';

function claimed(owner: string | undefined, phase: string | undefined, was: string | undefined, over: Partial<NodeState> = {}): NodeState {
  const annotations: Record<string, string> = { 'example.com/keep': 'x' };
  if (owner !== undefined) annotations[keys.owner] = owner;
  if (phase !== undefined) annotations[keys.phase] = phase;
  if (was !== undefined) annotations[keys.wasCordoned] = was;
  return node({ name: 'w1', annotations, hasAnnotationsMap: true, unschedulable: true, ...over });
}

describe('adoptionRefusal / adoptable: which abandoned claims a run holding the Lease takes over', () => {
  for (const [owner, phase, was] of [
    [KILLED, 'claimed', 'false'],
    [KILLED, 'mutating', 'false'],
    [KILLED, 'mutating', 'true'],
    [OTHER_RUN, 'claimed', 'true'],
  ] as const) {
    it(`adoptable: owner ${owner}, phase ${phase}, was-cordoned ${was}, cordoned, not being deleted`, () => {
      const n = claimed(owner, phase, was);
      expect(adoptionRefusal(n, keys, ME)).toBeUndefined();
      expect(adoptable(n, keys, ME)).toBe(true);
    });
  }

  it('a node with no claim: nothing to refuse, nothing to adopt', () => {
    const n = node({ name: 'w1' });
    expect(adoptionRefusal(n, keys, ME)).toBeUndefined();
    expect(adoptable(n, keys, ME)).toBe(false);
  });

  const refused: Array<[string, NodeState, RegExp]> = [
    ['a phase without an owner', claimed(undefined, 'mutating', 'false'), /set without an owner/],
    ['this run’s own claim (not abandoned)', claimed(ME, 'mutating', 'false'), /this run’s own claim/],
    ['an owner that is not a token of this action (another tool, a person)', claimed('ops-team', 'claimed', 'false'), /not an owner token/],
    ['no phase', claimed(KILLED, undefined, 'false'), /is missing, not one a claim writes/],
    ['a phase a claim never writes', claimed(KILLED, 'draining', 'false'), /"draining", not one a claim writes/],
    ['no was-cordoned (nothing says what to give back)', claimed(KILLED, 'claimed', undefined), /was-cordoned is missing/],
    ['an unreadable was-cordoned', claimed(KILLED, 'claimed', 'yes'), /was-cordoned is "yes"/],
    [
      'the node uncordoned since (someone took it back)',
      claimed(KILLED, 'mutating', 'false', { unschedulable: false }),
      /not cordoned any more/,
    ],
    [
      'the node being deleted',
      claimed(KILLED, 'mutating', 'false', { deletionTimestamp: '2026-12-06T10:00:00Z' }),
      /deletion started at 2026-12-06T10:00:00Z/,
    ],
  ];
  for (const [what, n, why] of refused) {
    it(`refused: ${what}`, () => {
      expect(adoptionRefusal(n, keys, ME)).toMatch(why);
      expect(adoptable(n, keys, ME)).toBe(false);
    });
  }
});

describe('buildAdoptPatch: one CAS patch that changes the owner and nothing else', () => {
  it('applied to the node as judged: only the owner changes', () => {
    const n = claimed(KILLED, 'mutating', 'false');
    const after = nodeFromJson(applyJsonPatch(nodeJson(n), buildAdoptPatch(n, keys, ME)), n.role);
    expect(after.annotations).toEqual({ ...n.annotations, [keys.owner]: ME });
    expect(after.unschedulable).toBe(true);
    expect(after.annotations[keys.phase]).toBe('mutating');
  });

  const moved: Array<[string, (n: NodeState) => NodeState]> = [
    ['another run adopted it first', (n) => ({ ...n, annotations: { ...n.annotations, [keys.owner]: OTHER_RUN } })],
    ['a person released it (no owner)', (n) => ({ ...n, annotations: { 'example.com/keep': 'x' } })],
    ['its phase changed', (n) => ({ ...n, annotations: { ...n.annotations, [keys.phase]: 'claimed' } })],
    ['was-cordoned changed', (n) => ({ ...n, annotations: { ...n.annotations, [keys.wasCordoned]: 'true' } })],
    ['uncordoned', (n) => ({ ...n, unschedulable: false })],
    ['deletion started', (n) => ({ ...n, deletionTimestamp: '2026-12-06T10:00:00Z' })],
    ['a new node of the same name (another uid)', (n) => ({ ...n, uid: 'uid-w1-new' })],
  ];
  for (const [what, change] of moved) {
    it(`fails (422) when the node moved since the read: ${what}`, () => {
      const n = claimed(KILLED, 'mutating', 'false');
      expect(() => applyJsonPatch(nodeJson(change(n)), buildAdoptPatch(n, keys, ME))).toThrow(PatchRejected);
    });
  }
});

describe('adoptedCapture: what the release gives back, under the adopting run’s token', () => {
  it('the cordon to give back comes from was-cordoned, the owner is this run', () => {
    expect(adoptedCapture(claimed(KILLED, 'mutating', 'false'), keys, ME)).toMatchObject({ owner: ME, wasCordoned: false });
    expect(adoptedCapture(claimed(KILLED, 'claimed', 'true'), keys, ME)).toMatchObject({ owner: ME, wasCordoned: true });
  });
});
