import { describe, expect, it } from 'vitest';
import type { LeaseState } from '../../src/adapters/types.js';
import {
  acquireSpec,
  judgeLease,
  LEASE_DURATION_SECONDS,
  microTime,
  parseMicroTime,
  releaseLeasePatch,
  renewPatch,
  takeFreeLeasePatch,
} from '../../src/rules/lease.js';
import { applyJsonPatch, normalize, PatchRejected } from '../fakes/jsonPatch.js';

const OWNER = 'acme/infra/runs/42/attempts/1/abcdef';
const OTHER = 'acme/infra/runs/40/attempts/2/123456';
const NOW = Date.parse('2026-11-30T10:00:00.123Z');

function lease(over: Partial<LeaseState> = {}): LeaseState {
  return { namespace: 'kube-system', name: 'registry-auth-rollout', uid: 'lease-uid-1', resourceVersion: '7', holderIdentity: '', ...over };
}

/** The Lease object the server stores, normalized like the apiserver (omitempty). */
function stored(spec: Record<string, unknown>): Record<string, any> {
  return normalize({
    metadata: { name: 'registry-auth-rollout', namespace: 'kube-system', uid: 'lease-uid-1', resourceVersion: '7' },
    spec,
  });
}

describe('microTime', () => {
  it('is RFC 3339 UTC with exactly six fractional digits', () => {
    expect(microTime(NOW)).toBe('2026-11-30T10:00:00.123000Z');
    expect(microTime(0)).toBe('1970-01-01T00:00:00.000000Z');
    expect(microTime(NOW + 0.9)).toBe('2026-11-30T10:00:00.123000Z');
    for (const t of [0, NOW, NOW + 999, Date.parse('2030-02-28T23:59:59.999Z')]) {
      expect(microTime(t)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    }
  });

  it('parses back, with or without fraction or offset; garbage is undefined', () => {
    expect(parseMicroTime(microTime(NOW))).toBe(NOW);
    expect(parseMicroTime('2026-11-30T10:00:00Z')).toBe(NOW - 123);
    expect(parseMicroTime('2026-11-30T11:00:00.123456+01:00')).toBe(NOW);
    expect(parseMicroTime('yesterday')).toBeUndefined();
    expect(parseMicroTime(undefined)).toBeUndefined();
  });
});

describe('patch shapes', () => {
  it('acquireSpec: holder, 120 s, both times now, zero transitions', () => {
    expect(acquireSpec(OWNER, NOW)).toEqual({
      holderIdentity: OWNER,
      leaseDurationSeconds: 120,
      acquireTime: '2026-11-30T10:00:00.123000Z',
      renewTime: '2026-11-30T10:00:00.123000Z',
      leaseTransitions: 0,
    });
    expect(LEASE_DURATION_SECONDS).toBe(120);
  });

  it('takeFreeLeasePatch tests holder null and uid, sets the fields, bumps transitions', () => {
    expect(takeFreeLeasePatch(lease({ leaseTransitions: 4 }), OWNER, NOW)).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'lease-uid-1' },
      { op: 'test', path: '/spec/holderIdentity', value: null },
      { op: 'add', path: '/spec/holderIdentity', value: OWNER },
      { op: 'add', path: '/spec/leaseDurationSeconds', value: 120 },
      { op: 'add', path: '/spec/acquireTime', value: '2026-11-30T10:00:00.123000Z' },
      { op: 'add', path: '/spec/renewTime', value: '2026-11-30T10:00:00.123000Z' },
      { op: 'add', path: '/spec/leaseTransitions', value: 5 },
    ]);
    expect(takeFreeLeasePatch(lease(), OWNER, NOW)[6]).toEqual({ op: 'add', path: '/spec/leaseTransitions', value: 1 });
    expect(takeFreeLeasePatch(lease(), OWNER, NOW, true)[1]).toEqual({ op: 'test', path: '/spec/holderIdentity', value: '' });
  });

  it('takeFreeLeasePatch applies to a freed Lease (no holder key) and not to a held or replaced one', () => {
    const freed = stored({ leaseDurationSeconds: 120, leaseTransitions: 2 });
    expect(freed.spec.holderIdentity).toBeUndefined();
    const taken = applyJsonPatch(freed, takeFreeLeasePatch(lease({ leaseTransitions: 2 }), OWNER, NOW)) as any;
    expect(taken.spec).toEqual({
      holderIdentity: OWNER,
      leaseDurationSeconds: 120,
      acquireTime: '2026-11-30T10:00:00.123000Z',
      renewTime: '2026-11-30T10:00:00.123000Z',
      leaseTransitions: 3,
    });
    expect(() => applyJsonPatch(stored({ holderIdentity: OTHER }), takeFreeLeasePatch(lease(), OWNER, NOW))).toThrow(PatchRejected);
    expect(() => applyJsonPatch(freed, takeFreeLeasePatch(lease({ uid: 'other-uid' }), OWNER, NOW))).toThrow(PatchRejected);
  });

  it('renewPatch tests the holder is us and sets renewTime', () => {
    const ops = renewPatch(OWNER, NOW + 30_000);
    expect(ops).toEqual([
      { op: 'test', path: '/spec/holderIdentity', value: OWNER },
      { op: 'add', path: '/spec/renewTime', value: '2026-11-30T10:00:30.123000Z' },
    ]);
    const ours = stored(acquireSpec(OWNER, NOW));
    expect((applyJsonPatch(ours, ops) as any).spec.renewTime).toBe('2026-11-30T10:00:30.123000Z');
    expect(() => applyJsonPatch(stored(acquireSpec(OTHER, NOW)), ops)).toThrow(PatchRejected);
    expect(() => applyJsonPatch(stored({ leaseDurationSeconds: 120 }), ops)).toThrow(PatchRejected);
  });

  it('releaseLeasePatch frees only our Lease and leaves no holder key or times', () => {
    const ops = releaseLeasePatch(OWNER);
    expect(ops[0]).toEqual({ op: 'test', path: '/spec/holderIdentity', value: OWNER });
    const freed = applyJsonPatch(stored(acquireSpec(OWNER, NOW)), ops) as any;
    expect(freed.spec).toEqual({ leaseDurationSeconds: 120, leaseTransitions: 0 });
    expect('holderIdentity' in freed.spec).toBe(false);
    // a hand-edited Lease without times still releases
    expect((applyJsonPatch(stored({ holderIdentity: OWNER }), ops) as any).spec.holderIdentity).toBeUndefined();
    expect(() => applyJsonPatch(stored(acquireSpec(OTHER, NOW)), ops)).toThrow(PatchRejected);
    expect(() => applyJsonPatch(freed, ops)).toThrow(PatchRejected);
  });
});

describe('judgeLease', () => {
  const renewed = (agoMs: number) => microTime(NOW - agoMs);

  it('absent, free, ours', () => {
    expect(judgeLease(undefined, OWNER, NOW)).toEqual({ kind: 'absent' });
    expect(judgeLease(lease(), OWNER, NOW)).toEqual({ kind: 'free' });
    expect(judgeLease(lease({ holderIdentity: OWNER, renewTime: renewed(500_000) }), OWNER, NOW)).toEqual({ kind: 'ours' });
  });

  it('held and fresh: refused, names the run URL', () => {
    const j = judgeLease(
      lease({ holderIdentity: OTHER, leaseDurationSeconds: 120, renewTime: renewed(10_000) }),
      OWNER,
      NOW,
      'https://ghe.example',
    );
    expect(j).toEqual({
      kind: 'held',
      holder: OTHER,
      expired: false,
      runUrl: 'https://ghe.example/acme/infra/actions/runs/40/attempts/2',
      renewTime: renewed(10_000),
    });
  });

  it('held and expired is still held (never taken over by time)', () => {
    const j = judgeLease(lease({ holderIdentity: OTHER, leaseDurationSeconds: 120, renewTime: renewed(121_000) }), OWNER, NOW);
    expect(j.kind).toBe('held');
    expect(j.kind === 'held' && j.expired).toBe(true);
    expect(j.kind === 'held' && j.runUrl).toBe('https://github.com/acme/infra/actions/runs/40/attempts/2');
  });

  it('expiry follows the Lease duration, falls back to acquireTime, and is assumed without any time', () => {
    const at = (over: Partial<LeaseState>) => judgeLease(lease({ holderIdentity: OTHER, ...over }), OWNER, NOW);
    expect(at({ leaseDurationSeconds: 600, renewTime: renewed(300_000) })).toMatchObject({ kind: 'held', expired: false });
    expect(at({ leaseDurationSeconds: 10, renewTime: renewed(11_000) })).toMatchObject({ kind: 'held', expired: true });
    expect(at({ renewTime: renewed(60_000) })).toMatchObject({ kind: 'held', expired: false });
    expect(at({ acquireTime: renewed(60_000) })).toMatchObject({ kind: 'held', expired: false });
    expect(at({})).toMatchObject({ kind: 'held', expired: true });
  });

  it('a holder that is not an owner token is held without a run URL', () => {
    const j = judgeLease(lease({ holderIdentity: 'someone-by-hand', renewTime: renewed(1_000) }), OWNER, NOW);
    expect(j).toEqual({ kind: 'held', holder: 'someone-by-hand', expired: false, renewTime: renewed(1_000) });
  });
});
