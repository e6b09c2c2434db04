// The one writer (src/pipeline/write.ts), on the in-memory fakes and the virtual clock: a CAS-guarded
// node patch whose answer is lost is judged by a re-read (src/rules/lostWrite.ts), a failure that passes
// is tried again with backoff (or as long as the answer's Retry-After asks), within WRITE_RETRY_MS.
import { describe, expect, it } from 'vitest';
import { ToolError, type FailureCause } from '../../src/core/errors.js';
import type { JsonPatchOp } from '../../src/core/model/patch.js';
import { patchNodeSurvivingLoss } from '../../src/pipeline/nodeWrite.js';
import { writeSurvivingLoss } from '../../src/pipeline/write.js';
import { WRITE_RETRY_MS } from '../../src/rules/lostWrite.js';
import { nodeDocument } from '../../src/rules/objectDocument.js';
import { TestClock } from '../fakes/clock.js';
import { FakeKube } from '../fakes/fakeKube.js';

const PHASE = 'registry-auth-rollout~1phase';
/** phase=mutating behind the hold's tests, as the pipeline sends it */
const OPS: JsonPatchOp[] = [
  { op: 'test', path: '/metadata/uid', value: 'uid-w1' },
  { op: 'test', path: '/metadata/annotations/registry-auth-rollout~1owner', value: 'me' },
  { op: 'add', path: `/metadata/annotations/${PHASE}`, value: 'mutating' },
  { op: 'test', path: '/spec/unschedulable', value: true },
];

const ETCD_TIMEOUT = 'etcdserver: request timed out';
const failure = (kind: FailureCause, stderr: string, retryAfterMs?: number) =>
  new ToolError({ tool: 'kube-api', command: 'PATCH /api/v1/nodes/w1', kind, exitCode: null, stderr, retryAfterMs });
const TIMEOUT_504 = () => failure('server', 'Timeout: request did not complete within requested timeout - context deadline exceeded');
const EOF = () => failure('transport', 'unexpected EOF');
const unreachable = () => failure('transport', 'dial unix /tmp/kube.sock: connect: connection refused');

/** A claimed node w1 (owner "me", phase claimed, cordoned) on the fakes, and the clock. */
function fake() {
  const kube = new FakeKube();
  kube.addNode({
    name: 'w1',
    ip: '10.0.0.1',
    unschedulable: true,
    annotations: { 'registry-auth-rollout/owner': 'me', 'registry-auth-rollout/phase': 'claimed' },
  });
  kube.mutate('w1', (o) => (o.metadata.uid = 'uid-w1'));
  const clock = new TestClock();
  const notes: string[] = [];
  return { kube, clock, notes, deps: { kube, clock, note: (m: string) => notes.push(m) } };
}

type Answer = 'ok' | { error: () => ToolError; land: boolean; then?: () => void };

/** The node patches are answered in turn by `answers` (then normally): a failure applied first (`land`) or not. */
function answers(kube: FakeKube, list: Answer[]): { sends: () => number } {
  const orig = kube.patchNode.bind(kube);
  let sends = 0;
  kube.patchNode = async (name, ops) => {
    sends++;
    const a = list.shift() ?? 'ok';
    if (a === 'ok') return orig(name, ops);
    if (a.land) await orig(name, ops);
    a.then?.();
    throw a.error();
  };
  return { sends: () => sends };
}

const phase = (k: FakeKube) => k.raw('w1').metadata.annotations['registry-auth-rollout/phase'] as string;
const count = (k: FakeKube, method: string) => k.calls.filter((c) => c.method === method).length;

describe('a write whose answer was lost: the re-read and the rule decide', () => {
  it('applied: the 504 came after the write; the re-read shows it, so it is not sent again', async () => {
    const f = fake();
    const a = answers(f.kube, [{ error: TIMEOUT_504, land: true }]);
    const n = await patchNodeSurvivingLoss(f.deps, 'w1', OPS, 'phase=mutating');
    expect(n.annotations['registry-auth-rollout/phase']).toBe('mutating');
    expect(a.sends()).toBe(1);
    expect(f.notes.join('\n')).toMatch(/phase=mutating of w1: .*Timeout.*; a re-read shows it applied \(the answer was lost\)/);
  });

  it('not applied: the connection dropped before the write; the tests still hold, so it is sent again after a wait', async () => {
    const f = fake();
    answers(f.kube, [{ error: EOF, land: false }]);
    const r = await writeSurvivingLoss(f.deps, {
      what: 'phase=mutating of w1',
      ops: () => OPS,
      send: (o) => f.kube.patchNode('w1', o),
      read: () => f.kube.getNode('w1'),
      document: nodeDocument,
    });
    expect(r).toMatchObject({ kind: 'written', sends: 2 });
    expect(r.lost).toHaveLength(1);
    expect(phase(f.kube)).toBe('mutating');
    expect(f.clock.t - new TestClock().t).toBeGreaterThanOrEqual(500);
  });

  it('conflicted: the answer was lost and someone uncordoned the node before the re-read: refused as the CAS would, nothing sent again', async () => {
    const f = fake();
    const a = answers(f.kube, [{ error: TIMEOUT_504, land: false, then: () => f.kube.mutate('w1', (o) => delete o.spec.unschedulable) }]);
    await expect(patchNodeSurvivingLoss(f.deps, 'w1', OPS, 'phase=mutating')).rejects.toMatchObject({
      kind: 'invalid',
      message: expect.stringMatching(/a re-read shows the patch's tests no longer hold \(\/spec\/unschedulable\)/) as unknown,
    });
    expect(a.sends()).toBe(1);
    expect(phase(f.kube)).toBe('claimed');
  });

  it('the answer lost twice: not applied the first time, applied the second: sent twice, accepted', async () => {
    const f = fake();
    const a = answers(f.kube, [
      { error: EOF, land: false },
      { error: TIMEOUT_504, land: true },
    ]);
    const n = await patchNodeSurvivingLoss(f.deps, 'w1', OPS, 'phase=mutating');
    expect(n.annotations['registry-auth-rollout/phase']).toBe('mutating');
    expect(a.sends()).toBe(2);
  });

  it('a first send still in flight lands after the re-read: the resend is refused (422) because of it, and a re-read shows it applied', async () => {
    const f = fake();
    const orig = f.kube.patchNode.bind(f.kube);
    let late: JsonPatchOp[] | undefined;
    let sends = 0;
    f.kube.patchNode = async (name, ops) => {
      if (++sends === 1) {
        late = ops; // the apiserver "may still be processing the request"
        throw TIMEOUT_504();
      }
      await orig(name, late!); // it lands now, just before the resend
      return orig(name, ops); // 422: the resend's test of the phase it replaces fails because of it
    };
    const ops: JsonPatchOp[] = [{ op: 'test', path: `/metadata/annotations/${PHASE}`, value: 'claimed' }, ...OPS];
    const n = await patchNodeSurvivingLoss(f.deps, 'w1', ops, 'phase=mutating');
    expect(n.annotations['registry-auth-rollout/phase']).toBe('mutating');
    expect(sends).toBe(2);
  });

  it('no read answers after the lost answer (the apiserver stays gone): the outcome is unknown, the failure thrown, nothing resent', async () => {
    const f = fake();
    answers(f.kube, [{ error: TIMEOUT_504, land: true }]);
    f.kube.getNode = async () => {
      throw unreachable();
    };
    f.kube.readyz = async () => {
      throw unreachable();
    };
    const r = await writeSurvivingLoss(f.deps, {
      what: 'x',
      ops: () => OPS,
      send: (o) => f.kube.patchNode('w1', o),
      read: () => f.kube.getNode('w1'),
      document: nodeDocument,
    });
    expect(r).toMatchObject({ kind: 'unknown', sends: 1 });
    expect(f.clock.t - new TestClock().t).toBeLessThanOrEqual(WRITE_RETRY_MS);
  });

  it('cancelled: no re-read, the outcome unknown', async () => {
    const f = fake();
    answers(f.kube, [{ error: TIMEOUT_504, land: true }]);
    const r = await writeSurvivingLoss(
      { ...f.deps, cancelled: () => true },
      { what: 'x', ops: () => OPS, send: (o) => f.kube.patchNode('w1', o), read: () => f.kube.getNode('w1'), document: nodeDocument },
    );
    expect(r.kind).toBe('unknown');
    expect(count(f.kube, 'getNode')).toBe(0);
  });
});

describe('transient failures: tried again with backoff, in one place', () => {
  it('a 429 with Retry-After: 3 then success: waited exactly as asked, sent again without a re-read (nothing was applied)', async () => {
    const f = fake();
    const a = answers(f.kube, [
      { error: () => failure('too-many-requests', 'Too many requests, please try again later.', 3000), land: false },
    ]);
    const t0 = f.clock.t;
    await patchNodeSurvivingLoss(f.deps, 'w1', OPS, 'phase=mutating');
    expect(f.clock.t - t0).toBe(3000);
    expect(a.sends()).toBe(2);
    expect(count(f.kube, 'getNode')).toBe(0);
    expect(f.notes.join('\n')).toMatch(/Too many requests[^)]*\); not applied, trying again in 3.0 s/);
  });

  it('a 500 "etcdserver: request timed out" (not applied) then success: re-read, still holding, sent again after the backoff', async () => {
    const f = fake();
    answers(f.kube, [{ error: () => failure('server', ETCD_TIMEOUT), land: false }]);
    const t0 = f.clock.t;
    await patchNodeSurvivingLoss(f.deps, 'w1', OPS, 'phase=mutating');
    expect(f.clock.t - t0).toBe(1000 * 0.75); // the first wait: 1 s, half of it jittered (random 0.5)
    expect(count(f.kube, 'getNode')).toBe(1);
    expect(phase(f.kube)).toBe('mutating');
  });

  it('a 500 with Retry-After: 2 (an apiserver shutting down answers 503 with Retry-After: 1) is waited as asked', async () => {
    const f = fake();
    answers(f.kube, [{ error: () => failure('server', 'apiserver is shutting down', 2000), land: false }]);
    const t0 = f.clock.t;
    await patchNodeSurvivingLoss(f.deps, 'w1', OPS, 'phase=mutating');
    expect(f.clock.t - t0).toBe(2000);
  });

  it('failing for longer than the bound: given up within WRITE_RETRY_MS, the last failure thrown, a handful of tries', async () => {
    const f = fake();
    const sent: number[] = [];
    f.kube.patchNode = async () => {
      sent.push(f.clock.t);
      throw failure('server', ETCD_TIMEOUT);
    };
    await expect(patchNodeSurvivingLoss(f.deps, 'w1', OPS, 'phase=mutating')).rejects.toThrow(ETCD_TIMEOUT);
    expect(sent.at(-1)! - sent[0]).toBeLessThanOrEqual(WRITE_RETRY_MS);
    expect(sent.at(-1)! - sent[0]).toBeGreaterThan(WRITE_RETRY_MS - 16_000);
    expect(sent.length).toBeLessThan(15);
    expect(phase(f.kube)).toBe('claimed');
  });

  it('a definite refusal (403) is thrown at once, a 422 on the first send too (the CAS refusing), neither re-read', async () => {
    for (const kind of ['forbidden', 'invalid'] as const) {
      const f = fake();
      const a = answers(f.kube, [{ error: () => failure(kind, 'no'), land: false }]);
      await expect(patchNodeSurvivingLoss(f.deps, 'w1', OPS, 'phase=mutating')).rejects.toMatchObject({ kind });
      expect(a.sends()).toBe(1);
      expect(count(f.kube, 'getNode')).toBe(0);
    }
  });
});
