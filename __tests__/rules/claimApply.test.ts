// The heart of the first bug, shown with an apiserver-faithful JSON Patch applier: the claim is built
// from one read, the node is then written by someone else, and the claim is applied to the LATEST
// object. Unrelated writes must not break it; writes that matter to drain safety must.
import { describe, expect, it } from 'vitest';
import type { NodeState, Taint } from '../../src/core/model/node.js';
import { oneShotClaimPatch } from '../../bench/claimLoop.js';
import { buildClaimPatch, buildPhasePatch, captureClaim, judgeClaimRejection } from '../../src/rules/claim.js';
import { markerWrite } from '../../src/rules/marker.js';
import { buildReleasePatch } from '../../src/rules/release.js';
import { keys, node, OTHER_OWNER, OWNER } from './fixtures.js';
import { applyJsonPatch, nodeFromJson, nodeJson, PatchRejected, type NodeJson } from '../fakes/jsonPatch.js';

const gpu: Taint = { key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule', timeAdded: '2026-08-01T00:00:00Z' };
const mirror: Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: '2026-08-20T10:00:00Z' };

/** A write by someone else between our read and our PATCH; each bumps the RV like a real write. */
type Write = (j: NodeJson) => void;
const bump = (j: NodeJson) => {
  j.metadata.resourceVersion = String(Number(j.metadata.resourceVersion) + 1);
};

const variants: Array<{ name: string; n: NodeState }> = [
  { name: 'no annotations map, untainted, schedulable', n: node({ name: 'w1', resourceVersion: '100' }) },
  {
    name: 'annotations map, tainted, schedulable',
    n: node({ name: 'w2', resourceVersion: '100', taints: [gpu], annotations: { 'example.com/a': '1' }, hasAnnotationsMap: true }),
  },
  {
    name: 'pre-existing cordon with mirror taint',
    n: node({
      name: 'w3',
      resourceVersion: '100',
      unschedulable: true,
      taints: [mirror, gpu],
      annotations: { 'example.com/a': '1' },
      hasAnnotationsMap: true,
    }),
  },
];

const benign: Array<{ name: string; write: Write }> = [
  {
    name: 'kubelet status heartbeat',
    write: (j) => {
      j.status.conditions = [{ type: 'Ready', status: 'True', lastHeartbeatTime: '2026-08-20T10:05:00Z' }];
      bump(j);
    },
  },
  {
    name: 'a label',
    write: (j) => {
      j.metadata.labels = { ...j.metadata.labels, 'topology.kubernetes.io/zone': 'b' };
      bump(j);
    },
  },
  {
    name: "someone else's annotation on an existing map",
    write: (j) => {
      if (j.metadata.annotations) j.metadata.annotations['example.com/b'] = '2';
      bump(j);
    },
  },
  {
    name: 'many writes in a row',
    write: (j) => {
      for (let i = 0; i < 50; i++) bump(j);
    },
  },
];

const breaking: Array<{ name: string; write: Write }> = [
  {
    name: 'unschedulable flipped',
    write: (j) => {
      j.spec.unschedulable = !j.spec.unschedulable;
      bump(j);
    },
  },
  {
    name: 'a taint added',
    write: (j) => {
      j.spec.taints = [...(j.spec.taints ?? []), { key: 'dedicated', value: 'db', effect: 'NoExecute' }];
      bump(j);
    },
  },
  {
    name: 'another owner',
    write: (j) => {
      j.metadata.annotations = { ...j.metadata.annotations, [keys.owner]: OTHER_OWNER };
      bump(j);
    },
  },
  {
    name: 'deletion started',
    write: (j) => {
      j.metadata.deletionTimestamp = '2026-08-20T10:00:00Z';
      bump(j);
    },
  },
  {
    name: 'node re-created (new uid)',
    write: (j) => {
      j.metadata.uid = 'uid-replacement';
      j.metadata.resourceVersion = '1';
    },
  },
];

function afterWrite(n: NodeState, write: Write): NodeJson {
  const j = nodeJson(n);
  write(j);
  return j;
}

describe.each(variants)('claim on: $name', ({ n }) => {
  it.each(benign)('applies after an unrelated write ($name), where the old one-shot claim fails', ({ write }) => {
    const stored = afterWrite(n, write);
    const after = applyJsonPatch(stored, buildClaimPatch(n, OWNER, keys));
    const claimed = nodeFromJson(after, n.role);
    expect(claimed.unschedulable).toBe(true);
    expect(claimed.annotations[keys.owner]).toBe(OWNER);
    expect(claimed.annotations[keys.phase]).toBe('claimed');
    expect(claimed.annotations[keys.wasCordoned]).toBe(String(n.unschedulable));
    // what the other writer did survives
    expect(after.metadata.labels).toEqual(stored.metadata.labels);
    expect(after.status).toEqual(stored.status);
    // the old script's claim, same read, same write: rejected
    expect(() => applyJsonPatch(stored, oneShotClaimPatch(n, OWNER, keys))).toThrow(PatchRejected);
  });

  it('the old one-shot claim does apply when nothing was written (it is a faithful baseline)', () => {
    expect(() => applyJsonPatch(nodeJson(n), oneShotClaimPatch(n, OWNER, keys))).not.toThrow();
  });

  it.each(breaking)('is rejected after $name, and the re-read is judged a conflict', ({ write }) => {
    const stored = afterWrite(n, write);
    expect(() => applyJsonPatch(stored, buildClaimPatch(n, OWNER, keys))).toThrow(PatchRejected);
    const verdict = judgeClaimRejection(captureClaim(n, OWNER), nodeFromJson(stored, n.role), keys);
    expect(verdict.kind).toBe('conflict');
  });
});

describe('benign writes that DO fail the claim test are retried, and the rebuilt claim applies', () => {
  const n = node({ name: 'w1', resourceVersion: '100', taints: [gpu] });
  const rows: Array<{ name: string; write: Write }> = [
    {
      name: 'annotations map appeared',
      write: (j) => {
        j.metadata.annotations = { 'example.com/b': '2' };
        bump(j);
      },
    },
    {
      name: 'autoscaler advisory taint appeared',
      write: (j) => {
        j.spec.taints = [
          ...(j.spec.taints ?? []),
          { key: 'DeletionCandidateOfClusterAutoscaler', value: '1755684000', effect: 'PreferNoSchedule' },
        ];
        bump(j);
      },
    },
  ];
  it.each(rows)('$name', ({ write }) => {
    const stored = afterWrite(n, write);
    expect(() => applyJsonPatch(stored, buildClaimPatch(n, OWNER, keys))).toThrow(PatchRejected);
    const reread = nodeFromJson(stored, n.role);
    expect(judgeClaimRejection(captureClaim(n, OWNER), reread, keys).kind).toBe('retry');
    const claimed = nodeFromJson(applyJsonPatch(stored, buildClaimPatch(reread, OWNER, keys)), n.role);
    expect(claimed.annotations[keys.owner]).toBe(OWNER);
    expect(claimed.unschedulable).toBe(true);
  });
});

describe('a lost response: re-applying our own claim fails, and the re-read is ours', () => {
  it('judges ours', () => {
    const n = node({ name: 'w1', taints: [gpu] });
    const after = applyJsonPatch(nodeJson(n), buildClaimPatch(n, OWNER, keys));
    expect(() => applyJsonPatch(after, buildClaimPatch(n, OWNER, keys))).toThrow(PatchRejected);
    expect(judgeClaimRejection(captureClaim(n, OWNER), nodeFromJson(after, 'worker'), keys)).toEqual({ kind: 'ours' });
  });
});

const AT = '2026-12-06T07:00:00.000Z';
const R2 = '{"ghcr.io":{"revision":"r2","at":"2026-12-06T07:00:00.000Z","proof":"evidence"}}';

describe('claim → phase → release round trip', () => {
  const rows = [
    {
      name: 'schedulable node, no annotations map: back to schedulable, only the verified marker left',
      n: node({ name: 'w1', taints: [gpu] }),
      rev: 'r2' as string | undefined,
      unschedulable: false,
      annotations: { [keys.verified]: R2 } as Record<string, string>,
    },
    {
      name: 'pre-existing cordon survives the release',
      n: node({ name: 'w2', unschedulable: true, taints: [mirror], annotations: { 'example.com/a': '1' }, hasAnnotationsMap: true }),
      rev: 'r2',
      unschedulable: true,
      annotations: { 'example.com/a': '1', [keys.verified]: R2 },
    },
    {
      name: 'release after a drain failure: no verified marker',
      n: node({ name: 'w3' }),
      rev: undefined,
      unschedulable: false,
      annotations: {},
    },
  ];
  it.each(rows)('$name', ({ n, rev, unschedulable, annotations }) => {
    const capture = captureClaim(n, OWNER);
    let j = applyJsonPatch(nodeJson(n), buildClaimPatch(n, OWNER, keys));
    j = applyJsonPatch(j, buildPhasePatch(capture, keys, 'mutating'));
    expect(j.metadata.annotations?.[keys.phase]).toBe('mutating');
    bump(j); // the node lifecycle controller adds/removes the mirror taint, kubelet writes status...
    const marker =
      rev === undefined
        ? undefined
        : markerWrite(j.metadata.annotations ?? {}, keys, { hosts: ['ghcr.io'], revision: rev }, AT, 'evidence');
    j = applyJsonPatch(j, buildReleasePatch(capture, keys, { marker }));
    const released = nodeFromJson(j, n.role);
    expect(released.unschedulable).toBe(unschedulable);
    expect(released.annotations).toEqual(annotations);
  });

  it('release is refused when someone else holds the node', () => {
    const n = node({ name: 'w1' });
    const capture = captureClaim(n, OWNER);
    const j = applyJsonPatch(nodeJson(n), buildClaimPatch(n, OTHER_OWNER, keys));
    expect(() =>
      applyJsonPatch(
        j,
        buildReleasePatch(capture, keys, { marker: markerWrite({}, keys, { hosts: ['ghcr.io'], revision: 'r2' }, AT, 'evidence') }),
      ),
    ).toThrow(PatchRejected);
    expect(() => applyJsonPatch(j, buildPhasePatch(capture, keys, 'mutating'))).toThrow(PatchRejected);
  });

  it('release still works when a human deleted phase and was-cordoned by hand', () => {
    const n = node({ name: 'w1' });
    const capture = captureClaim(n, OWNER);
    let j = applyJsonPatch(nodeJson(n), buildClaimPatch(n, OWNER, keys));
    delete j.metadata.annotations![keys.phase];
    delete j.metadata.annotations![keys.wasCordoned];
    j = applyJsonPatch(j, buildReleasePatch(capture, keys, {}));
    expect(nodeFromJson(j, 'worker').annotations).toEqual({});
    expect(j.spec.unschedulable).toBeUndefined();
  });
});
