// Lease rules: the JSON Patches and the judgement behind "one run at a time".
// Pure: the RunLock (src/pipeline/lease.ts) does the I/O.
//
// Server facts these rules lean on (docs/kubernetes-facts.md#k4-json-patch-atomic, docs/kubernetes-facts.md#k6-omitempty,
// docs/kubernetes-facts.md#k7-lease):
// - a JSON Patch is applied atomically to the latest stored object, and a failed `test` fails it as a
//   whole with 422: a `test` op is our compare-and-swap;
// - the server drops empty strings, `false`, `0` and empty maps (omitempty), so a freed Lease has NO
//   `holderIdentity` key, and `test … ""` would fail on it: "free" is tested with `null` (a missing key,
//   parent present, passes only a `null` test);
// - `remove` of a missing key fails the whole patch;
// - Lease times are MicroTime: RFC 3339 with exactly 6 fractional digits.
import type { LeaseState } from '../core/model/cluster.js';
import { rfc3339Ms } from '../core/instants.js';
import type { JsonPatchOp } from '../core/model/patch.js';
import { GITHUB_SERVER_URL, parseOwnerToken, runUrl } from '../core/owner.js';

export const LEASE_DURATION_SECONDS = 120;

/** Kubernetes MicroTime, e.g. `2026-11-30T10:00:00.123000Z` (JS clocks have millisecond precision). */
export function microTime(ms: number): string {
  const iso = new Date(Math.floor(ms)).toISOString();
  return `${iso.slice(0, 23)}000Z`;
}

/** Epoch ms of a MicroTime/RFC 3339 string (sub-millisecond digits truncated); undefined when absent or malformed. */
export function parseMicroTime(s: string | undefined): number | undefined {
  return s ? rfc3339Ms(s.trim()) : undefined;
}

/** `spec` of a Lease this run creates. */
export function acquireSpec(owner: string, nowMs: number, durationSeconds = LEASE_DURATION_SECONDS): Record<string, unknown> {
  const t = microTime(nowMs);
  return {
    holderIdentity: owner,
    leaseDurationSeconds: durationSeconds,
    acquireTime: t,
    renewTime: t,
    leaseTransitions: 0,
  };
}

const HOLDER = '/spec/holderIdentity';

/**
 * Take a Lease that exists but has no holder. The `test`s make it a CAS: the holder is still absent
 * (`null`, see above) and it is still the same Lease object (uid), so two runs racing for it cannot
 * both win — the loser gets 422 and re-reads.
 *
 * `holderStoredEmpty`: `holderIdentity` is a pointer in the Go type, so a Lease freed by another tool
 * (client-go's leader election, a hand edit) may keep the key as `""`, which `test … null` does not
 * match. LeaseState cannot tell the two apart, so the RunLock retries with `""` when a take failed
 * although the Lease did not change (same resourceVersion).
 *
 * `add` rather than `replace` for every field: `add` on an existing key replaces it and on a missing
 * one creates it, under every JSON Patch library version; `replace` of a missing key only works by a
 * quirk of evanphx/json-patch v4 (docs/kubernetes-facts.md#k5-json-patch-semantics), and a freed Lease may lack renewTime/acquireTime.
 */
export function takeFreeLeasePatch(
  lease: LeaseState,
  owner: string,
  nowMs: number,
  holderStoredEmpty = false,
  durationSeconds = LEASE_DURATION_SECONDS,
): JsonPatchOp[] {
  const t = microTime(nowMs);
  return [
    { op: 'test', path: '/metadata/uid', value: lease.uid },
    { op: 'test', path: HOLDER, value: holderStoredEmpty ? '' : null },
    { op: 'add', path: HOLDER, value: owner },
    { op: 'add', path: '/spec/leaseDurationSeconds', value: durationSeconds },
    { op: 'add', path: '/spec/acquireTime', value: t },
    { op: 'add', path: '/spec/renewTime', value: t },
    { op: 'add', path: '/spec/leaseTransitions', value: (lease.leaseTransitions ?? 0) + 1 },
  ];
}

/**
 * Take over a Lease whose holder let it expire (observedExpiry said `expired`). The `test`s make it a
 * CAS on the very object that was watched: the same uid, the same resourceVersion (nothing, the
 * holder's renewal above all, was written since the first read of the watch) and the same holder. A
 * renewal or another run's take-over in between fails it with 422, and the RunLock judges afresh.
 */
export function takeOverPatch(lease: LeaseState, owner: string, nowMs: number, durationSeconds = LEASE_DURATION_SECONDS): JsonPatchOp[] {
  const t = microTime(nowMs);
  return [
    { op: 'test', path: '/metadata/uid', value: lease.uid },
    { op: 'test', path: '/metadata/resourceVersion', value: lease.resourceVersion },
    { op: 'test', path: HOLDER, value: lease.holderIdentity ?? null },
    { op: 'add', path: HOLDER, value: owner },
    { op: 'add', path: '/spec/leaseDurationSeconds', value: durationSeconds },
    { op: 'add', path: '/spec/acquireTime', value: t },
    { op: 'add', path: '/spec/renewTime', value: t },
    { op: 'add', path: '/spec/leaseTransitions', value: (lease.leaseTransitions ?? 0) + 1 },
  ];
}

/** The Lease's own duration in ms (its `leaseDurationSeconds`, else ours). */
export function leaseDurationMs(lease: Pick<LeaseState, 'leaseDurationSeconds'>): number {
  return (lease.leaseDurationSeconds ?? LEASE_DURATION_SECONDS) * 1000;
}

/**
 * The margin a take-over waits past the Lease's duration: a tenth of it, at least one second. It covers
 * what the duration alone does not: a request the holder sent just before its own proof ran out, still
 * on its way, and the two machines' clocks running at slightly different rates.
 */
export function takeOverMarginMs(durationMs: number): number {
  return Math.max(1000, Math.ceil(durationMs / 10));
}

/** The first read of a Lease that looked expired, on the reader's own clock. */
export interface LeaseWatch {
  uid: string;
  resourceVersion: string;
  holder: string;
  /** when the reader first read this version (its own clock) */
  sinceMs: number;
}

export type ObservedExpiry = { kind: 'changed' } | { kind: 'waiting'; remainingMs: number } | { kind: 'expired'; unchangedForMs: number };

/**
 * Whether a held Lease is proven abandoned: it has not changed at all (same uid, resourceVersion and
 * holder) for its whole duration plus the margin, measured from this run's first read of it on this
 * run's own clock. The holder's `renewTime` is never compared with this run's clock (it was written by
 * another machine's clock); only a time this run measured itself between two of its own reads is
 * (client-go's leader election judges a Lease the same way: k8s.io/client-go/tools/leaderelection,
 * `observedTime`). Why the holder has stopped acting by then: its own proof before every mutation is
 * a renewal, or a read of its own renewal younger than the duration (RunLock.confirm); docs/recovery.md.
 */
export function observedExpiry(watch: LeaseWatch, lease: LeaseState | undefined, nowMs: number): ObservedExpiry {
  if (!lease || lease.uid !== watch.uid || lease.resourceVersion !== watch.resourceVersion || lease.holderIdentity !== watch.holder) {
    return { kind: 'changed' };
  }
  const durationMs = leaseDurationMs(lease);
  const needed = durationMs + takeOverMarginMs(durationMs);
  const unchangedForMs = nowMs - watch.sinceMs;
  return unchangedForMs >= needed ? { kind: 'expired', unchangedForMs } : { kind: 'waiting', remainingMs: needed - unchangedForMs };
}

/** Renew only while the holder is still us: a Lease someone else took fails with 422 and the run stops. */
export function renewPatch(owner: string, nowMs: number): JsonPatchOp[] {
  return [
    { op: 'test', path: HOLDER, value: owner },
    { op: 'add', path: '/spec/renewTime', value: microTime(nowMs) },
  ];
}

/**
 * Free the Lease only if we still hold it: a Lease another run holds now is not ours to clear.
 * The times go with the holder so a freed Lease shows no renewal a reader could mistake for a live
 * holder. They are `add`ed before the `remove` because removing a missing key fails the patch
 * (docs/kubernetes-facts.md#k5-json-patch-semantics)
 * and someone may have edited the Lease by hand; the holder needs no such step, the `test` proves it
 * exists.
 */
export function releaseLeasePatch(owner: string): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [
    { op: 'test', path: HOLDER, value: owner },
    { op: 'remove', path: HOLDER },
  ];
  for (const path of ['/spec/acquireTime', '/spec/renewTime']) {
    ops.push({ op: 'add', path, value: '' });
    ops.push({ op: 'remove', path });
  }
  return ops;
}

export type LeaseJudgement =
  | { kind: 'absent' }
  | { kind: 'free' }
  | { kind: 'ours' }
  | {
      kind: 'held';
      holder: string;
      /** renewTime (or acquireTime) + leaseDurationSeconds is in the past; informational only */
      expired: boolean;
      /** the holder's workflow run attempt, when its token parses */
      runUrl?: string;
      renewTime?: string;
    };

/**
 * Who holds the Lease, from this run's point of view.
 *
 * `held` is never taken at once, and never refused on its times alone: they were written by the
 * holder's clock, and a run killed a moment ago looks as fresh as a live one. The RunLock watches it
 * for its whole duration on its own clock (observedExpiry) and takes it over only if nothing wrote it
 * meanwhile; a renewal seen during the watch refuses the run (docs/recovery.md). `expired` (by the
 * holder's own times) is said in that refusal and in the fences report.
 */
export function judgeLease(lease: LeaseState | undefined, owner: string, nowMs: number, serverUrl = GITHUB_SERVER_URL): LeaseJudgement {
  if (!lease) return { kind: 'absent' };
  if (!lease.holderIdentity) return { kind: 'free' };
  if (lease.holderIdentity === owner) return { kind: 'ours' };
  const renewed = parseMicroTime(lease.renewTime) ?? parseMicroTime(lease.acquireTime);
  const durationMs = (lease.leaseDurationSeconds ?? LEASE_DURATION_SECONDS) * 1000;
  // No readable time at all: nothing shows it is alive, so it is reported as expired (still refused).
  const expired = renewed === undefined ? true : nowMs > renewed + durationMs;
  const token = parseOwnerToken(lease.holderIdentity);
  const held: LeaseJudgement = { kind: 'held', holder: lease.holderIdentity, expired };
  if (token) held.runUrl = runUrl(token, serverUrl);
  if (lease.renewTime) held.renewTime = lease.renewTime;
  return held;
}
