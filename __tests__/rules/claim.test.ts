import { describe, expect, it } from 'vitest';
import type { NodeState, Taint } from '../../src/core/model/node.js';
import { ADVISORY_TAINT, CONDITION_TAINT_KEYS, MIRROR_TAINT } from '../../src/rules/controllerTaints.js';
import {
  buildClaimPatch,
  buildPhasePatch,
  captureClaim,
  checkGuard,
  claimBackoffMs,
  escapePointer,
  judgeClaimRejection,
  schedulingTaints,
} from '../../src/rules/claim.js';
import { oneShotClaimPatch } from '../../bench/claimLoop.js';
import { keys, node, OTHER_OWNER, OWNER } from './fixtures.js';

const P = {
  owner: '/metadata/annotations/registry-auth-rollout~1owner',
  phase: '/metadata/annotations/registry-auth-rollout~1phase',
  wasCordoned: '/metadata/annotations/registry-auth-rollout~1was-cordoned',
};

const gpu: Taint = { key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' };
const mirror: Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: '2026-08-20T10:00:00Z' };
const advisory: Taint = { key: 'DeletionCandidateOfClusterAutoscaler', value: '1755684000', effect: 'PreferNoSchedule' };
const dedicated: Taint = { key: 'dedicated', value: 'db', effect: 'NoExecute' };

describe('constants and helpers', () => {
  it('escapes ~ before /', () => {
    expect(escapePointer('a~b/c')).toBe('a~0b~1c');
  });

  const rows: Array<{ name: string; taints: Taint[]; want: string[] }> = [
    { name: 'none', taints: [], want: [] },
    { name: 'mirror and advisory are not scheduling taints', taints: [mirror, advisory], want: [] },
    {
      name: 'sorted key=value:effect (tolerations match on the value)',
      taints: [gpu, dedicated],
      want: ['dedicated=db:NoExecute', 'nvidia.com/gpu=present:NoSchedule'],
    },
    { name: 'de-duplicated', taints: [gpu, { ...gpu, timeAdded: '2026-08-20T10:00:00Z' }], want: ['nvidia.com/gpu=present:NoSchedule'] },
    {
      name: 'the same key and effect with two values are two taints',
      taints: [gpu, { ...gpu, value: 'other' }],
      want: ['nvidia.com/gpu=other:NoSchedule', 'nvidia.com/gpu=present:NoSchedule'],
    },
    {
      name: 'an absent value and an empty one are the same taint (the apiserver stores neither)',
      taints: [
        { key: 'dedicated', effect: 'NoSchedule' },
        { key: 'dedicated', value: '', effect: 'NoSchedule' },
      ],
      want: ['dedicated:NoSchedule'],
    },
    {
      name: 'mirror and advisory are excluded whatever their value',
      taints: [
        { ...mirror, value: 'x' },
        { ...advisory, value: '1755699999' },
      ],
      want: [],
    },
    {
      name: 'same key with another effect is kept',
      taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoExecute' }],
      want: ['node.kubernetes.io/unschedulable:NoExecute'],
    },
    {
      name: 'the condition taints are excluded, any effect and value (the node lifecycle controller writes them)',
      taints: [
        { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' },
        { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: '2026-08-20T10:00:00Z' },
        { key: 'node.kubernetes.io/not-ready', value: 'x', effect: 'NoSchedule' },
        gpu,
      ],
      want: ['nvidia.com/gpu=present:NoSchedule'],
    },
    {
      name: 'advisory key with a hard effect is kept',
      taints: [{ key: 'DeletionCandidateOfClusterAutoscaler', effect: 'NoSchedule' }],
      want: ['DeletionCandidateOfClusterAutoscaler:NoSchedule'],
    },
  ];
  it.each(rows)('schedulingTaints: $name', ({ taints, want }) => {
    expect(schedulingTaints(taints)).toEqual(want);
  });
});

describe('buildClaimPatch: exact shape', () => {
  it('schedulable node without annotations map and without taints', () => {
    const n = node({ name: 'w1' });
    expect(buildClaimPatch(n, OWNER, keys)).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'uid-w1' },
      { op: 'test', path: '/metadata/deletionTimestamp', value: null },
      { op: 'test', path: '/spec/unschedulable', value: null },
      { op: 'test', path: '/spec/taints', value: null },
      { op: 'test', path: '/metadata/annotations', value: null },
      {
        op: 'add',
        path: '/metadata/annotations',
        value: {
          'registry-auth-rollout/owner': OWNER,
          'registry-auth-rollout/phase': 'claimed',
          'registry-auth-rollout/was-cordoned': 'false',
          'cluster-autoscaler.kubernetes.io/scale-down-disabled': 'true',
          'karpenter.sh/do-not-disrupt': 'true',
          'registry-auth-rollout/autoscaler-marks': `{"run":"${OWNER}","wrote":{"cluster-autoscaler.kubernetes.io/scale-down-disabled":"true","karpenter.sh/do-not-disrupt":"true"}}`,
        },
      },
      { op: 'add', path: '/spec/unschedulable', value: true },
    ]);
  });

  it('cordoned node with annotations map and taints (taints as stored: no empty value, timeAdded kept)', () => {
    const n = node({
      name: 'w1',
      unschedulable: true,
      taints: [mirror, { key: 'dedicated', value: '', effect: 'NoSchedule' }, gpu],
      annotations: { 'example.com/note': 'x' },
      hasAnnotationsMap: true,
    });
    expect(buildClaimPatch(n, OWNER, keys)).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'uid-w1' },
      { op: 'test', path: '/metadata/deletionTimestamp', value: null },
      { op: 'test', path: '/spec/unschedulable', value: true },
      {
        op: 'test',
        path: '/spec/taints',
        value: [
          { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: '2026-08-20T10:00:00Z' },
          { key: 'dedicated', effect: 'NoSchedule' },
          { key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' },
        ],
      },
      { op: 'test', path: P.owner, value: null },
      { op: 'test', path: P.phase, value: null },
      { op: 'add', path: P.owner, value: OWNER },
      { op: 'add', path: P.phase, value: 'claimed' },
      { op: 'add', path: P.wasCordoned, value: 'true' },
      // the autoscaler marks the node does not carry, each tested absent, and their record
      { op: 'test', path: '/metadata/annotations/cluster-autoscaler.kubernetes.io~1scale-down-disabled', value: null },
      { op: 'add', path: '/metadata/annotations/cluster-autoscaler.kubernetes.io~1scale-down-disabled', value: 'true' },
      { op: 'test', path: '/metadata/annotations/karpenter.sh~1do-not-disrupt', value: null },
      { op: 'add', path: '/metadata/annotations/karpenter.sh~1do-not-disrupt', value: 'true' },
      {
        op: 'add',
        path: '/metadata/annotations/registry-auth-rollout~1autoscaler-marks',
        value: `{"run":"${OWNER}","wrote":{"cluster-autoscaler.kubernetes.io/scale-down-disabled":"true","karpenter.sh/do-not-disrupt":"true"}}`,
      },
      { op: 'add', path: '/spec/unschedulable', value: true },
    ]);
  });

  it('never tests resourceVersion; the one-shot comparison patch tests only that', () => {
    const n = node({ name: 'w1', resourceVersion: '777', hasAnnotationsMap: true, annotations: { a: 'b' } });
    expect(buildClaimPatch(n, OWNER, keys).some((op) => op.path === '/metadata/resourceVersion')).toBe(false);
    const old = oneShotClaimPatch(n, OWNER, keys);
    expect(old.filter((op) => op.op === 'test')).toEqual([{ op: 'test', path: '/metadata/resourceVersion', value: '777' }]);
    expect(old.filter((op) => op.op !== 'test')).toEqual(buildClaimPatch(n, OWNER, keys).filter((op) => op.op !== 'test'));
  });
});

describe('judgeClaimRejection', () => {
  const base = node({ name: 'w1', taints: [gpu], annotations: { 'example.com/a': '1' }, hasAnnotationsMap: true, resourceVersion: '10' });
  const bare = node({ name: 'w2', taints: [gpu], resourceVersion: '10' });
  const cordoned = node({ name: 'w3', unschedulable: true, taints: [mirror], annotations: { x: 'y' }, hasAnnotationsMap: true });
  type Row = { name: string; from: NodeState; reread: (n: NodeState) => NodeState; kind: 'ours' | 'retry' | 'conflict'; want: string[] };
  const rows: Row[] = [
    // retry: the claim's test failed (or the 422 had another cause) but nothing drain safety depends on moved
    {
      name: 'status-only change',
      from: base,
      reread: (n) => ({ ...n, resourceVersion: '11', ready: 'False' }),
      kind: 'retry',
      want: ['no change in the fields the claim tests (e.g. only status, labels or other annotations moved)'],
    },
    {
      name: 'label change',
      from: base,
      reread: (n) => ({ ...n, resourceVersion: '11', labels: { ...n.labels, team: 'b' } }),
      kind: 'retry',
      want: ['no change in the fields the claim tests (e.g. only status, labels or other annotations moved)'],
    },
    {
      name: 'other annotation',
      from: base,
      reread: (n) => ({ ...n, annotations: { ...n.annotations, 'example.com/b': '2' } }),
      kind: 'retry',
      want: ['no change in the fields the claim tests (e.g. only status, labels or other annotations moved)'],
    },
    {
      name: 'annotations map appeared',
      from: bare,
      reread: (n) => ({ ...n, annotations: { 'example.com/b': '2' }, hasAnnotationsMap: true }),
      kind: 'retry',
      want: ['metadata.annotations map appeared'],
    },
    {
      name: 'mirror taint appeared',
      from: base,
      reread: (n) => ({ ...n, taints: [...n.taints, mirror] }),
      kind: 'retry',
      want: [`cordon-mirror taint ${MIRROR_TAINT} appeared`],
    },
    {
      name: 'mirror taint disappeared on a cordoned node',
      from: cordoned,
      reread: (n) => ({ ...n, taints: [] }),
      kind: 'retry',
      want: [`cordon-mirror taint ${MIRROR_TAINT} disappeared`],
    },
    {
      name: 'advisory taint appeared',
      from: base,
      reread: (n) => ({ ...n, taints: [advisory, ...n.taints] }),
      kind: 'retry',
      want: [`autoscaler advisory taint ${ADVISORY_TAINT} appeared`],
    },
    {
      name: 'advisory taint re-written with a new timestamp value',
      from: node({ name: 'w4', taints: [advisory, gpu] }),
      reread: (n) => ({ ...n, taints: [{ ...advisory, value: '1755699999' }, gpu] }),
      kind: 'retry',
      want: [`autoscaler advisory taint ${ADVISORY_TAINT} re-written`],
    },
    // the node lifecycle controller's condition taints move with the kubelet's reports: no other actor
    {
      name: 'a memory-pressure taint lifted between the read and the claim',
      from: node({ name: 'w9', taints: [gpu, { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' }] }),
      reread: (n) => ({ ...n, taints: [gpu] }),
      kind: 'retry',
      want: ['condition taint node.kubernetes.io/memory-pressure:NoSchedule disappeared'],
    },
    {
      name: 'an unreachable blip tainted between the read and the claim',
      from: base,
      reread: (n) => ({
        ...n,
        taints: [
          ...n.taints,
          { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' },
          { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' },
        ],
      }),
      kind: 'retry',
      want: [
        'condition taint node.kubernetes.io/unreachable:NoExecute appeared',
        'condition taint node.kubernetes.io/unreachable:NoSchedule appeared',
      ],
    },
    {
      name: 'taint list re-ordered and re-stamped',
      from: node({ name: 'w5', taints: [gpu, dedicated] }),
      reread: (n) => ({ ...n, taints: [{ ...dedicated, timeAdded: '2026-08-20T10:00:00Z' }, gpu] }),
      kind: 'retry',
      want: ['spec.taints rewritten with the same scheduling taints (order or timeAdded changed)'],
    },
    {
      name: 'an empty value re-written as absent is the same taint',
      from: node({ name: 'w6', taints: [{ key: 'dedicated', value: '', effect: 'NoSchedule' }] }),
      reread: (n) => ({ ...n, taints: [{ key: 'dedicated', effect: 'NoSchedule' }] }),
      kind: 'retry',
      want: ['no change in the fields the claim tests (e.g. only status, labels or other annotations moved)'],
    },
    // conflict: someone else is acting on the node
    {
      name: 'concurrent cordon',
      from: base,
      reread: (n) => ({ ...n, unschedulable: true, taints: [...n.taints, mirror] }),
      kind: 'conflict',
      want: ['spec.unschedulable flipped from false to true (someone else cordoned the node)'],
    },
    {
      name: 'concurrent uncordon',
      from: cordoned,
      reread: (n) => ({ ...n, unschedulable: false, taints: [] }),
      kind: 'conflict',
      want: ['spec.unschedulable flipped from true to false (someone else uncordoned the node)'],
    },
    {
      name: 'other owner',
      from: base,
      reread: (n) => ({ ...n, unschedulable: true, annotations: { ...n.annotations, [keys.owner]: OTHER_OWNER, [keys.phase]: 'claimed' } }),
      kind: 'conflict',
      want: [
        `${keys.owner} is held by ${JSON.stringify(OTHER_OWNER)}`,
        `${keys.phase} is set to "claimed"`,
        'spec.unschedulable flipped from false to true (someone else cordoned the node)',
      ],
    },
    {
      name: 'phase without owner',
      from: base,
      reread: (n) => ({ ...n, annotations: { ...n.annotations, [keys.phase]: 'mutating' } }),
      kind: 'conflict',
      want: [`${keys.phase} is set to "mutating" without an owner`],
    },
    {
      name: 'taint value changed (tolerations match on it)',
      from: base,
      reread: (n) => ({ ...n, taints: [{ ...gpu, value: 'absent' }] }),
      kind: 'conflict',
      want: ['taint nvidia.com/gpu=absent:NoSchedule appeared', 'taint nvidia.com/gpu=present:NoSchedule disappeared'],
    },
    {
      name: 'a custom taint dedicated=batch → dedicated=web between the read and the claim',
      from: node({ name: 'w7', taints: [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }] }),
      reread: (n) => ({ ...n, taints: [{ key: 'dedicated', value: 'web', effect: 'NoSchedule' }] }),
      kind: 'conflict',
      want: ['taint dedicated=web:NoSchedule appeared', 'taint dedicated=batch:NoSchedule disappeared'],
    },
    {
      name: 'a value given to a taint that had none',
      from: node({ name: 'w8', taints: [{ key: 'dedicated', effect: 'NoSchedule' }] }),
      reread: (n) => ({ ...n, taints: [{ key: 'dedicated', value: 'web', effect: 'NoSchedule' }] }),
      kind: 'conflict',
      want: ['taint dedicated=web:NoSchedule appeared', 'taint dedicated:NoSchedule disappeared'],
    },
    {
      name: 'new taint',
      from: base,
      reread: (n) => ({ ...n, taints: [...n.taints, dedicated] }),
      kind: 'conflict',
      want: ['taint dedicated=db:NoExecute appeared'],
    },
    {
      name: 'taint removed',
      from: base,
      reread: (n) => ({ ...n, taints: [] }),
      kind: 'conflict',
      want: ['taint nvidia.com/gpu=present:NoSchedule disappeared'],
    },
    {
      name: 'uid replaced',
      from: base,
      reread: (n) => ({ ...n, uid: 'uid-new' }),
      kind: 'conflict',
      want: [`uid replaced (was ${base.uid}, now uid-new): the node was re-created`],
    },
    {
      name: 'deletion started',
      from: base,
      reread: (n) => ({ ...n, deletionTimestamp: '2026-08-20T10:00:00Z' }),
      kind: 'conflict',
      want: ['deletion started at 2026-08-20T10:00:00Z'],
    },
    {
      name: 'our owner on a replaced node is not ours',
      from: base,
      reread: (n) => ({ ...n, uid: 'uid-new', annotations: { [keys.owner]: OWNER } }),
      kind: 'conflict',
      want: [`uid replaced (was ${base.uid}, now uid-new): the node was re-created`, `${keys.owner} is held by ${JSON.stringify(OWNER)}`],
    },
    // ours: the patch landed, only its response was lost
    {
      name: 'our own token already applied',
      from: base,
      reread: (n) => ({
        ...n,
        unschedulable: true,
        taints: [...n.taints, mirror],
        annotations: { ...n.annotations, [keys.owner]: OWNER, [keys.phase]: 'claimed', [keys.wasCordoned]: 'false' },
      }),
      kind: 'ours',
      want: [],
    },
  ];
  it.each(rows)('$kind: $name', ({ from, reread, kind, want }) => {
    const capture = captureClaim(from, OWNER);
    const got = judgeClaimRejection(capture, reread(structuredClone(from)), keys);
    expect(got.kind).toBe(kind);
    if (got.kind === 'retry') expect(got.changed).toEqual(want);
    if (got.kind === 'conflict') expect(got.reasons).toEqual(want);
  });
});

describe('claimBackoffMs', () => {
  const rows = [
    { attempt: 1, random: 0.5, want: 200 },
    { attempt: 2, random: 0.5, want: 400 },
    { attempt: 3, random: 0, want: 400 },
    { attempt: 3, random: 0.999, want: 1199 },
    { attempt: 4, random: 0.5, want: 1600 },
    { attempt: 5, random: 0.5, want: 2000 },
    { attempt: 10, random: 1, want: 3000 },
    { attempt: 0, random: 0.5, want: 200 },
  ];
  it.each(rows)('attempt $attempt, random $random → $want ms', ({ attempt, random, want }) => {
    expect(claimBackoffMs(attempt, random)).toBe(want);
  });
});

describe('buildPhasePatch', () => {
  it('tests uid and our owner, then sets phase', () => {
    const capture = captureClaim(node({ name: 'w1' }), OWNER);
    expect(buildPhasePatch(capture, keys, 'mutating')).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'uid-w1' },
      { op: 'test', path: P.owner, value: OWNER },
      { op: 'add', path: P.phase, value: 'mutating' },
    ]);
  });
});

describe('checkGuard', () => {
  const before = node({ name: 'w1', taints: [gpu] });
  const capture = captureClaim(before, OWNER);
  const claimed: NodeState = {
    ...before,
    unschedulable: true,
    taints: [gpu, mirror],
    annotations: { [keys.owner]: OWNER, [keys.phase]: 'mutating', [keys.wasCordoned]: 'false' },
    hasAnnotationsMap: true,
  };
  const notReady: Taint[] = [
    { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' },
    { key: 'node.cilium.io/agent-not-ready', effect: 'NoSchedule' },
  ];
  const rows: Array<{ name: string; n: NodeState; want: string[] }> = [
    {
      name: 'held as claimed (mirror taint and status changes are fine)',
      n: { ...claimed, ready: 'False', resourceVersion: '9' },
      want: [],
    },
    { name: 'uid changed', n: { ...claimed, uid: 'uid-x' }, want: [`uid changed from ${before.uid} to uid-x (the node was re-created)`] },
    {
      name: 'owner taken',
      n: { ...claimed, annotations: { [keys.owner]: OTHER_OWNER } },
      want: [`${keys.owner} is held by ${JSON.stringify(OTHER_OWNER)}, not by this run`],
    },
    { name: 'owner removed', n: { ...claimed, annotations: {} }, want: [`${keys.owner} was removed`] },
    {
      name: 'uncordoned',
      n: { ...claimed, unschedulable: false, taints: [gpu] },
      want: ['spec.unschedulable is no longer true (someone uncordoned the node)'],
    },
    { name: 'taint added', n: { ...claimed, taints: [...claimed.taints, dedicated] }, want: ['taint dedicated=db:NoExecute appeared'] },
    { name: 'taint removed', n: { ...claimed, taints: [mirror] }, want: ['taint nvidia.com/gpu=present:NoSchedule disappeared'] },
    {
      name: 'deletion started',
      n: { ...claimed, deletionTimestamp: '2026-08-20T10:00:00Z' },
      want: ['deletion started at 2026-08-20T10:00:00Z'],
    },
    {
      name: 'the boot-time lifecycle taints (the Cilium one too) never count, in any guard',
      n: { ...claimed, taints: [...claimed.taints, ...notReady] },
      want: [],
    },
    {
      name: 'a taint value changed',
      n: { ...claimed, taints: [{ ...gpu, value: 'shared' }, mirror] },
      want: ['taint nvidia.com/gpu=shared:NoSchedule appeared', 'taint nvidia.com/gpu=present:NoSchedule disappeared'],
    },
    {
      name: 'a taint value changed still counts beside the lifecycle taints',
      n: { ...claimed, taints: [{ ...gpu, value: 'shared' }, mirror, ...notReady] },
      want: ['taint nvidia.com/gpu=shared:NoSchedule appeared', 'taint nvidia.com/gpu=present:NoSchedule disappeared'],
    },
    {
      name: 'lifecycle taints with a value are ignored too',
      n: { ...claimed, taints: [...claimed.taints, { key: 'node.kubernetes.io/not-ready', value: 'x', effect: 'NoExecute' }] },
      want: [],
    },
    {
      name: 'lifecycle taints ignored',
      n: { ...claimed, taints: [...claimed.taints, ...notReady] },
      want: [],
    },
    {
      name: 'other taints still count beside the lifecycle taints',
      n: { ...claimed, taints: [...notReady, dedicated, gpu] },
      want: ['taint dedicated=db:NoExecute appeared'],
    },
  ];
  it.each(rows)('$name', ({ n, want }) => {
    expect(checkGuard(capture, n, keys)).toEqual(want);
  });

  // every guard: Kubernetes' own controllers are never another actor, appearing or disappearing
  const conditionTaints = CONDITION_TAINT_KEYS.map((key) => ({ key, effect: 'NoSchedule' as const }));
  it('the condition taints are never another actor: appearing, any effect and value', () => {
    expect(CONDITION_TAINT_KEYS).toEqual([
      'node.kubernetes.io/not-ready',
      'node.kubernetes.io/unreachable',
      'node.kubernetes.io/memory-pressure',
      'node.kubernetes.io/disk-pressure',
      'node.kubernetes.io/pid-pressure',
      'node.kubernetes.io/network-unavailable',
    ]);
    const n = {
      ...claimed,
      taints: [
        ...claimed.taints,
        ...conditionTaints,
        { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' },
        { key: 'node.kubernetes.io/not-ready', value: 'x', effect: 'NoExecute' },
      ],
    };
    expect(checkGuard(capture, n, keys)).toEqual([]);
  });
  it.each(CONDITION_TAINT_KEYS)('a %s taint the claim saw that is lifted is no other actor', (key) => {
    const pressured = captureClaim({ ...before, taints: [...before.taints, { key, effect: 'NoSchedule' }] }, OWNER);
    expect(checkGuard(pressured, claimed, keys)).toEqual([]);
  });
  it('a worker claimed under memory pressure, relieved by its own drain: the guard after the drain passes', () => {
    const pressure: Taint = { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule', timeAdded: '2026-08-20T09:59:00Z' };
    const atClaim = captureClaim({ ...before, taints: [gpu, pressure] }, OWNER);
    expect(checkGuard(atClaim, { ...claimed, taints: [gpu, mirror] }, keys)).toEqual([]);
    // ... and one that comes back during the settle wait, with the unreachable blip beside it
    const unreachable: Taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' };
    expect(checkGuard(atClaim, { ...claimed, taints: [gpu, mirror, pressure, unreachable] }, keys)).toEqual([]);
  });
  it('any other taint still counts beside them', () => {
    const n = { ...claimed, taints: [...claimed.taints, ...notReady, ...conditionTaints, dedicated] };
    expect(checkGuard(capture, n, keys)).toEqual(['taint dedicated=db:NoExecute appeared']);
  });
});
