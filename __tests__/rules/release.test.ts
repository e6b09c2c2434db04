import { describe, expect, it } from 'vitest';
import { captureClaim } from '../../src/rules/claim.js';
import { markerWrite } from '../../src/rules/marker.js';
import { buildReleasePatch, leftAsSetKeepsLease } from '../../src/rules/release.js';
import { keys, node, OWNER } from './fixtures.js';

const P = {
  owner: '/metadata/annotations/registry-auth-rollout~1owner',
  phase: '/metadata/annotations/registry-auth-rollout~1phase',
  wasCordoned: '/metadata/annotations/registry-auth-rollout~1was-cordoned',
  verified: '/metadata/annotations/registry-auth-rollout~1verified',
};
const head = [
  { op: 'test', path: '/metadata/uid', value: 'uid-w1' },
  { op: 'test', path: P.owner, value: OWNER },
];
const AT = '2026-12-06T07:00:00.000Z';
const r2 = markerWrite({}, keys, { hosts: ['ghcr.io'], revision: 'r2' }, AT, 'evidence');
const R2 = '{"ghcr.io":{"revision":"r2","at":"2026-12-06T07:00:00.000Z","proof":"evidence"}}';
const removals = [
  { op: 'remove', path: P.owner },
  { op: 'add', path: P.phase, value: '' },
  { op: 'remove', path: P.phase },
  { op: 'add', path: P.wasCordoned, value: '' },
  { op: 'remove', path: P.wasCordoned },
  // the autoscaler marks the claim wrote (the node carried neither), each only while "true"
  { op: 'test', path: '/metadata/annotations/cluster-autoscaler.kubernetes.io~1scale-down-disabled', value: 'true' },
  { op: 'remove', path: '/metadata/annotations/cluster-autoscaler.kubernetes.io~1scale-down-disabled' },
  { op: 'test', path: '/metadata/annotations/karpenter.sh~1do-not-disrupt', value: 'true' },
  { op: 'remove', path: '/metadata/annotations/karpenter.sh~1do-not-disrupt' },
  // the record tested to be exactly as the claim wrote it (naming this run), then removed
  {
    op: 'test',
    path: '/metadata/annotations/registry-auth-rollout~1autoscaler-marks',
    value: `{"run":"${OWNER}","wrote":{"cluster-autoscaler.kubernetes.io/scale-down-disabled":"true","karpenter.sh/do-not-disrupt":"true"}}`,
  },
  { op: 'remove', path: '/metadata/annotations/registry-auth-rollout~1autoscaler-marks' },
];

describe('buildReleasePatch: exact shape', () => {
  const rows = [
    {
      name: 'schedulable before the claim, verified: set the marker and uncordon',
      unschedulable: false,
      marker: r2 as typeof r2 | undefined,
      want: [...head, { op: 'add', path: P.verified, value: R2 }, ...removals, { op: 'add', path: '/spec/unschedulable', value: false }],
    },
    {
      name: 'cordoned before the claim: the cordon survives',
      unschedulable: true,
      marker: r2,
      want: [...head, { op: 'add', path: P.verified, value: R2 }, ...removals],
    },
    {
      name: 'drain failure restore: no verified marker, uncordon',
      unschedulable: false,
      marker: undefined,
      want: [...head, ...removals, { op: 'add', path: '/spec/unschedulable', value: false }],
    },
  ];
  it.each(rows)('$name', ({ unschedulable, marker, want }) => {
    const capture = captureClaim(node({ name: 'w1', unschedulable }), OWNER);
    expect(buildReleasePatch(capture, keys, { marker })).toEqual(want);
  });
});

describe('leftAsSetKeepsLease: only once the run reached phase=mutating', () => {
  it.each([
    ['claiming', false],
    ['claimed', false],
    ['mutating', true],
    ['draining', true],
    ['rebooting', true],
    ['proving', true],
  ] as const)('stopped in %s → %s', (phase, keep) => expect(leftAsSetKeepsLease(phase)).toBe(keep));
});
