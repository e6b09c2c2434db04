// The one judge of a write whose answer was lost (src/rules/lostWrite.ts), on the action's own patches
// (the claim, phase=mutating, the verified release, the run Lease's release) and on nodes as the
// apiserver serves them: the twin's JSON Patch (evanphx/json-patch semantics, sim/kube/jsonpatch.ts)
// applies each patch, and the node goes through the adapter's parser (nodeFromJson) and back
// (nodeDocument), as a re-read would. The argument: docs/decision-rules.md#a-write-whose-answer-was-lost.
import { describe, expect, it } from 'vitest';
import { applyJsonPatch } from '../../sim/kube/jsonpatch.js';
import { nodeFromJson } from '../../src/adapters/kube/parse/nodeJson.js';
import type { FailureCause } from '../../src/core/errors.js';
import type { NodeState } from '../../src/core/model/node.js';
import type { JsonPatchOp } from '../../src/core/model/patch.js';
import { buildClaimPatch, buildPhasePatch, captureClaim } from '../../src/rules/claim.js';
import { releaseLeasePatch } from '../../src/rules/lease.js';
import { judgeLostWrite, netWrites, testHolds, WRITE_RETRY_MS, writeBackoffMs, writeTransient } from '../../src/rules/lostWrite.js';
import { markerWrite } from '../../src/rules/marker.js';
import { leaseDocument, nodeDocument } from '../../src/rules/objectDocument.js';
import { buildReleasePatch } from '../../src/rules/release.js';
import { keys, OTHER_OWNER, OWNER } from './fixtures.js';

/** A Node as the apiserver stores it. */
function raw(over: { annotations?: Record<string, string>; unschedulable?: boolean; taints?: object[]; uid?: string } = {}) {
  const spec: Record<string, unknown> = {};
  if (over.unschedulable) spec.unschedulable = true;
  if (over.taints?.length) spec.taints = over.taints;
  return {
    metadata: {
      name: 'w1',
      uid: over.uid ?? 'uid-w1',
      resourceVersion: '100',
      labels: { 'kubernetes.io/hostname': 'w1' },
      ...(over.annotations ? { annotations: over.annotations } : {}),
    },
    spec,
    status: { addresses: [{ type: 'InternalIP', address: '10.0.0.1' }], nodeInfo: { bootID: 'b1' } },
  };
}

/** What a re-read shows: the stored object through the adapter's parser, as the apiserver serves it. */
const served = (o: unknown): NodeState => nodeFromJson(o);
const doc = (o: unknown) => nodeDocument(served(o));
/** The twin applies `ops` as the apiserver does (throws on a failed `test`). */
const apply = (o: Record<string, unknown>, ops: JsonPatchOp[]) => applyJsonPatch(o, ops as never) as Record<string, unknown>;

const MEMORY = { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule', timeAdded: '2026-11-30T10:00:00Z' };

describe('the claim whose answer was lost', () => {
  const before = raw({ annotations: { 'ops.acme.io/team': 'infra' }, taints: [MEMORY] });
  const ops = buildClaimPatch(served(before), OWNER, keys);
  const after = apply(before, ops);

  it('not applied: the re-read is the node as claimed from, every test holds → sent again', () => {
    expect(judgeLostWrite(ops, doc(before))).toEqual({ kind: 'not-applied' });
  });

  it('applied: our token, the cordon and phase=claimed show, the guarded fields as tested → adopted', () => {
    expect(judgeLostWrite(ops, doc(after))).toEqual({ kind: 'applied' });
  });

  it('applied, then a condition taint re-written: conflicted with the writes shown (the claim judges it: ours, benign)', () => {
    const moved = structuredClone(after) as ReturnType<typeof raw>;
    (moved.spec as { taints: object[] }).taints = [{ ...MEMORY, timeAdded: '2026-11-30T10:05:00Z' }];
    expect(judgeLostWrite(ops, doc(moved))).toEqual({ kind: 'conflicted', failed: ['/spec/taints'], writesShown: true });
  });

  it('another run claimed it instead: conflicted, our writes do not show', () => {
    const theirs = apply(before, buildClaimPatch(served(before), OTHER_OWNER, keys));
    const v = judgeLostWrite(ops, doc(theirs));
    expect(v.kind).toBe('conflicted');
    expect(v).toMatchObject({ writesShown: false });
  });

  it('someone cordoned it meanwhile (not applied): conflicted on /spec/unschedulable', () => {
    const cordoned = raw({ annotations: { 'ops.acme.io/team': 'infra' }, taints: [MEMORY], unschedulable: true });
    expect(judgeLostWrite(ops, doc(cordoned))).toEqual({ kind: 'conflicted', failed: ['/spec/unschedulable'], writesShown: false });
  });

  it('a node without an annotations map: the claim adds the whole map; an annotation someone added beside ours since is no conflict', () => {
    const bare = raw();
    const o = buildClaimPatch(served(bare), OWNER, keys);
    expect(o).toContainEqual({ op: 'test', path: '/metadata/annotations', value: null });
    expect(judgeLostWrite(o, doc(bare))).toEqual({ kind: 'not-applied' });
    const claimed = apply(bare, o) as ReturnType<typeof raw>;
    expect(judgeLostWrite(o, doc(claimed))).toEqual({ kind: 'applied' });
    (claimed.metadata.annotations as Record<string, string>)['node.alpha.kubernetes.io/ttl'] = '0';
    expect(judgeLostWrite(o, doc(claimed))).toEqual({ kind: 'applied' });
  });

  it('the node gone (404 on the re-read): conflicted, no test holds on nothing', () => {
    expect(judgeLostWrite(ops, undefined)).toMatchObject({ kind: 'conflicted', writesShown: false });
  });
});

describe('phase=mutating whose answer was lost', () => {
  const claimedRaw = apply(raw(), buildClaimPatch(served(raw()), OWNER, keys));
  const capture = captureClaim(served(raw()), OWNER, keys);
  const ops: JsonPatchOp[] = [...buildPhasePatch(capture, keys, 'mutating'), { op: 'test', path: '/spec/unschedulable', value: true }];

  it('not applied (phase still claimed), applied (phase mutating)', () => {
    expect(judgeLostWrite(ops, doc(claimedRaw))).toEqual({ kind: 'not-applied' });
    expect(judgeLostWrite(ops, doc(apply(claimedRaw, ops)))).toEqual({ kind: 'applied' });
  });

  it('applied, then someone uncordoned the node: conflicted, the fence moved (no Talos mutation may follow)', () => {
    const marked = apply(claimedRaw, ops) as ReturnType<typeof raw>;
    delete (marked.spec as { unschedulable?: boolean }).unschedulable;
    expect(judgeLostWrite(ops, doc(marked))).toEqual({ kind: 'conflicted', failed: ['/spec/unschedulable'], writesShown: true });
  });
});

describe('the verified release whose answer was lost', () => {
  const claimedRaw = apply(raw({ annotations: {} }), buildClaimPatch(served(raw({ annotations: {} })), OWNER, keys));
  const capture = captureClaim(served(raw({ annotations: {} })), OWNER, keys);
  const marker = markerWrite(
    served(claimedRaw).annotations,
    keys,
    { hosts: ['ghcr.io'], revision: 'rev-2' },
    '2026-11-30T11:00:00Z',
    'evidence',
    ['ghcr.io'],
  );
  const ops = buildReleasePatch(capture, keys, { marker });

  it('not applied (still ours) → sent again; applied (no owner, uncordoned, the marker as written) → released', () => {
    expect(judgeLostWrite(ops, doc(claimedRaw))).toEqual({ kind: 'not-applied' });
    const released = apply(claimedRaw, ops);
    expect(served(released).annotations[keys.owner]).toBeUndefined();
    expect(judgeLostWrite(ops, doc(released))).toEqual({ kind: 'applied' });
  });

  it('another run claimed the node between: conflicted (never clobbered)', () => {
    const theirs = structuredClone(claimedRaw) as ReturnType<typeof raw>;
    (theirs.metadata.annotations as Record<string, string>)[keys.owner] = OTHER_OWNER;
    expect(judgeLostWrite(ops, doc(theirs))).toMatchObject({ kind: 'conflicted', writesShown: false });
  });

  it('the node re-created under its name (new uid, no claim): conflicted although nothing of ours is on it', () => {
    const fresh = raw({ uid: 'uid-new', annotations: {} });
    expect(judgeLostWrite(buildReleasePatch(capture, keys, {}), doc(fresh))).toMatchObject({
      kind: 'conflicted',
      failed: expect.arrayContaining(['/metadata/uid']) as unknown,
    });
  });
});

describe("the run Lease's release whose answer was lost", () => {
  const lease = (holderIdentity: string, times = true) =>
    leaseDocument({
      namespace: 'kube-system',
      name: 'registry-auth-rollout',
      uid: 'l1',
      resourceVersion: '7',
      holderIdentity,
      leaseDurationSeconds: 60,
      ...(times ? { acquireTime: '2026-11-30T10:00:00.000000Z', renewTime: '2026-11-30T10:01:00.000000Z' } : {}),
    });
  const ops = releaseLeasePatch(OWNER);

  it('still ours → not applied; free → applied; held by another run → conflicted', () => {
    expect(judgeLostWrite(ops, lease(OWNER))).toEqual({ kind: 'not-applied' });
    expect(judgeLostWrite(ops, lease('', false))).toEqual({ kind: 'applied' });
    expect(judgeLostWrite(ops, lease(OTHER_OWNER))).toEqual({ kind: 'conflicted', failed: ['/spec/holderIdentity'], writesShown: false });
  });
});

describe('the rule agrees with the apiserver on every patch the action sends', () => {
  it('on the object a patch applies to it is not applied; on what the twin made of it, applied', () => {
    const bare = raw({ annotations: { a: 'b' }, taints: [MEMORY] });
    const claim = buildClaimPatch(served(bare), OWNER, keys);
    const claimed = apply(bare, claim);
    const capture = captureClaim(served(bare), OWNER, keys);
    const mutating = buildPhasePatch(capture, keys, 'mutating');
    const marked = apply(claimed, mutating);
    const restore = buildReleasePatch(capture, keys, {});
    for (const [ops, on] of [
      [claim, bare],
      [mutating, claimed],
      [restore, marked],
    ] as const) {
      expect(judgeLostWrite(ops, doc(on)).kind).toBe('not-applied');
      expect(judgeLostWrite(ops, doc(apply(on, ops))).kind).toBe('applied');
    }
  });
});

describe('the JSON Patch semantics the rule relies on', () => {
  it('a `test` below a missing parent fails; a missing key passes only for null', () => {
    expect(testHolds({ metadata: {} }, { path: '/metadata/annotations/x', value: null })).toBe(false);
    expect(testHolds({ metadata: { annotations: {} } }, { path: '/metadata/annotations/x', value: null })).toBe(true);
    expect(testHolds({ metadata: { annotations: {} } }, { path: '/metadata/annotations/x', value: 'v' })).toBe(false);
    expect(testHolds({ a: [{ k: 1, v: 2 }] }, { path: '/a', value: [{ v: 2, k: 1 }] })).toBe(true);
    expect(testHolds({ a: 'x/y' }, { path: '/a', value: 'x/y' })).toBe(true);
  });

  it("the net effect: an `add` of '' then a `remove` is an absent key; a write into an object added before goes into it", () => {
    const fx = netWrites([
      { op: 'add', path: '/m/p', value: '' },
      { op: 'remove', path: '/m/p' },
      { op: 'add', path: '/m/a', value: { x: '1' } },
      { op: 'add', path: '/m/a/y~1z', value: '2' },
    ]);
    expect(fx).toEqual([
      { segs: ['m', 'p'], present: false, value: undefined },
      { segs: ['m', 'a'], present: true, value: { x: '1', 'y/z': '2' } },
    ]);
  });
});

describe('transient failures: which are tried again, and how long to wait', () => {
  it('a 5xx, a dropped connection, a timeout, a 409 and a 429 pass; a refusal of the CAS, a gone object, a 403 or a usage error do not', () => {
    const kinds: FailureCause[] = ['server', 'transport', 'timeout', 'conflict', 'too-many-requests'];
    for (const k of kinds) expect(writeTransient(k), k).toBe(true);
    const definite: FailureCause[] = ['invalid', 'not-found', 'forbidden', 'usage', 'cancelled', 'unparseable', 'unknown'];
    for (const k of definite) expect(writeTransient(k), k).toBe(false);
  });

  it('doubles from 1 s to a cap of 15 s, half of each wait drawn from the random number', () => {
    expect([1, 2, 3, 4, 5, 6, 9].map((n) => writeBackoffMs(n, 1))).toEqual([1000, 2000, 4000, 8000, 15_000, 15_000, 15_000]);
    expect([1, 2, 3, 4, 5, 6].map((n) => writeBackoffMs(n, 0))).toEqual([500, 1000, 2000, 4000, 7500, 7500]);
    expect(writeBackoffMs(3, 0.5)).toBe(3000);
  });

  it("an answer's Retry-After is waited for as asked (within the cap), whatever the try", () => {
    expect(writeBackoffMs(1, 0, 3000)).toBe(3000);
    expect(writeBackoffMs(6, 1, 1000)).toBe(1000);
    expect(writeBackoffMs(1, 0, 600_000)).toBe(15_000);
  });

  it('the bound rides out an apiserver restart with a handful of tries, not one a second', () => {
    let t = 0;
    let tries = 1;
    while (t + writeBackoffMs(tries, 0.5) <= WRITE_RETRY_MS) t += writeBackoffMs(tries++, 0.5);
    expect(WRITE_RETRY_MS).toBeGreaterThanOrEqual(60_000);
    expect(tries).toBeGreaterThanOrEqual(8);
    expect(tries).toBeLessThanOrEqual(14);
  });
});
