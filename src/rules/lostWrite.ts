// One answer to a write whose answer was lost, for every CAS-guarded JSON Patch the action sends (the
// claim, the phase patches, the marker, the quarantine, a node's release, the run Lease's release):
// given the patch as sent (its `test` ops and its writes) and the object as a re-read shows it, what
// did the write do? Pure: the patch and a JSON document in, a verdict out. The pipeline's one writer
// (src/pipeline/write.ts) re-reads and asks; the argument is docs/decision-rules.md#a-write-whose-answer-was-lost.
//
// - applied: every write of the patch shows (its net effect: an `add` of "" then a `remove` is an
//   absent key) and every `test` of a path the patch does not write still holds (the same uid, no
//   deletion, the taints as tested...). The apiserver applies a JSON Patch atomically or not at all
//   (docs/kubernetes-facts.md#k4-json-patch-atomic), so all of it there means it was applied, by us or by
//   a write that did the very same thing (a release someone else made is as good as ours; a claim
//   carries our unique owner token, so nobody else writes it).
// - not-applied: every `test` still holds and the writes do not (all) show: the patch, sent again now,
//   would be judged exactly as the first was, so sending it again is safe. (A first send still in
//   flight that lands later makes the resend's `test` of what it changed fail: that 422 is judged by a
//   re-read again, and then shows applied.)
// - conflicted: anything else: a `test` no longer holds (someone changed what the patch guards) and the
//   writes do not show, or they show but a guarded path moved since. The patch would be refused now;
//   the caller refuses (or, for the claim, judges whether the change was benign: src/rules/claim.ts).
// A gone object (404 on the re-read) is conflicted: no `test` holds on it.
//
// Tests: __tests__/rules/lostWrite.test.ts.
import type { FailureCause } from '../core/errors.js';
import type { JsonPatchOp } from '../core/model/patch.js';

export type LostWriteVerdict =
  | { kind: 'applied' }
  | { kind: 'not-applied' }
  /** `failed`: the paths of the `test`s that no longer hold (with the writes shown: of what the patch does not write); `writesShown`: whether every write shows all the same */
  | { kind: 'conflicted'; failed: string[]; writesShown: boolean };

/** The JSON Pointer (RFC 6901) segments of `path` (`~1` → `/`, then `~0` → `~`). */
function segments(path: string): string[] {
  if (path === '') return [];
  return path
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The value at `segs` and whether its parent exists (a `test` below a missing parent fails whatever its value). */
function lookup(doc: unknown, segs: string[]): { parent: boolean; value: unknown } {
  let cur: unknown = doc;
  for (let i = 0; i < segs.length; i++) {
    const last = i === segs.length - 1;
    if (Array.isArray(cur)) {
      const n = Number(segs[i]);
      const v: unknown = Number.isInteger(n) ? (cur as unknown[])[n] : undefined;
      if (last) return { parent: true, value: v };
      cur = v;
    } else if (isObject(cur)) {
      const v = cur[segs[i]];
      if (last) return { parent: true, value: v };
      cur = v;
    } else {
      return { parent: false, value: undefined };
    }
  }
  return { parent: doc !== undefined, value: doc };
}

/** Deep equality of decoded JSON (object members in any order). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => sameJson(a[k], b[k]));
  }
  return false;
}

/**
 * A `test` op as the apiserver's JSON Patch (evanphx/json-patch v4) judges it: below a missing parent it
 * fails; a missing or null value passes only for `null`; anything else must be equal
 * (docs/kubernetes-facts.md#k5-json-patch-semantics).
 */
export function testHolds(doc: unknown, op: { path: string; value: unknown }): boolean {
  if (doc === undefined) return false;
  const { parent, value } = lookup(doc, segments(op.path));
  if (!parent) return false;
  if (value === undefined || value === null) return op.value === null || op.value === undefined;
  return sameJson(value, op.value);
}

/** A value the apiserver does not store (`omitempty`): a written `false`, `null`, `[]` or `{}` shows as an absent key. */
const isZero = (v: unknown): boolean =>
  v === false || v === null || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);

/**
 * Whether `seen` shows a write of `wrote`: equal, an object whose every member we wrote shows (others
 * may have added their own members since: an annotation beside ours), or a zero value the apiserver
 * drops shown as absent.
 */
function shows(wrote: unknown, seen: unknown): boolean {
  if (seen === undefined || seen === null) return isZero(wrote) || wrote === null;
  if (isObject(wrote) && isObject(seen)) return Object.keys(wrote).every((k) => shows(wrote[k], seen[k]));
  return sameJson(wrote, seen);
}

interface Effect {
  segs: string[];
  present: boolean;
  value?: unknown;
}

const isPrefix = (p: string[], of: string[]): boolean => p.length <= of.length && p.every((s, i) => s === of[i]);

/**
 * The net effect of the patch's writes, path by path, in order: a later write below an earlier `add`
 * of an object goes into that object; a write at or above an earlier path replaces it. (`move` and
 * `copy` are never sent by the action; they are treated as writes of their path with an unknown value.)
 */
export function netWrites(ops: readonly JsonPatchOp[]): Effect[] {
  let effects: Effect[] = [];
  for (const op of ops) {
    if (op.op === 'test') continue;
    const segs = segments(op.path);
    const present = op.op !== 'remove';
    const value = op.op === 'remove' ? undefined : op.value;
    const into = effects.find((e) => e.present && e.segs.length < segs.length && isPrefix(e.segs, segs) && isObject(e.value));
    if (into) {
      const inner = segs.slice(into.segs.length);
      let cur = into.value as Record<string, unknown>;
      for (const s of inner.slice(0, -1)) {
        if (!isObject(cur[s])) cur[s] = {};
        cur = cur[s] as Record<string, unknown>;
      }
      if (present) cur[inner.at(-1)!] = structuredClone(value);
      else delete cur[inner.at(-1)!];
      continue;
    }
    effects = effects.filter((e) => !isPrefix(segs, e.segs));
    effects.push({ segs, present, value: present ? structuredClone(value) : undefined });
  }
  return effects;
}

/** Whether a `test` of `path` guards something the patch writes itself (then it is expected to change when the patch applies). */
function written(effects: readonly Effect[], path: string): boolean {
  const segs = segments(path);
  return effects.some((e) => isPrefix(e.segs, segs) || isPrefix(segs, e.segs));
}

/**
 * What a JSON Patch whose answer was lost did, judged on `seen`: the object re-read after it, as the
 * apiserver serves it (undefined: gone). See the head of this file.
 */
export function judgeLostWrite(ops: readonly JsonPatchOp[], seen: unknown): LostWriteVerdict {
  const effects = netWrites(ops);
  const tests = ops.filter((o): o is Extract<JsonPatchOp, { op: 'test' }> => o.op === 'test');
  const failed = tests.filter((t) => !testHolds(seen, t)).map((t) => t.path);
  const writesShown =
    seen !== undefined &&
    effects.every((e) => {
      const { value } = lookup(seen, e.segs);
      return e.present ? shows(e.value, value) : value === undefined;
    });
  const guardsMoved = failed.filter((p) => !written(effects, p));
  if (writesShown && guardsMoved.length === 0) return { kind: 'applied' };
  if (failed.length === 0) return { kind: 'not-applied' };
  // with the writes shown, a failing test of what the patch itself writes is our own write: only the guards that moved count
  return { kind: 'conflicted', failed: writesShown ? guardsMoved : failed, writesShown };
}

// ---- transient failures: which are tried again, and how long to wait ----------------------------------
//
// A write refused for a reason that passes is tried again, for up to WRITE_RETRY_MS from its first
// failure: a 5xx (etcd's own timeout answered as a 500 "etcdserver: request timed out", an apiserver
// shutting down answering 503), a dropped connection or a timeout (these may have applied: the re-read
// says, src/core/errors.ts outcomeUnknown), a 409 Conflict (the apiserver's own optimistic-concurrency
// retries ran out while another writer updated the object; our patch is a CAS of its own, so trying it
// again is safe), a 429 (priority and fairness shed the request). Anything else is definite: a 422 (a
// `test` failed), a 404 (gone), a 403, a usage error, a cancellation.
// WRITE_RETRY_MS, 90 s, rides out a kube-apiserver restart (a static pod: the old one shuts down,
// answering 503 "apiserver is shutting down" with Retry-After: 1, then connections are refused until
// the new one serves, typically 20-60 s) and an etcd leader election (seconds). The waits grow from 1 s,
// doubled each try, capped at 15 s, each with "equal jitter" (half fixed, half drawn from the clock
// port's random) so the writes of several nodes and runs do not retry in step; an answer that says when
// to come back (Retry-After, as client-go honours it: k8s.io/client-go rest/request.go checkWait) is
// waited for that long instead, within the same cap.

/** the longest the retries of one write may take, from its first failure */
export const WRITE_RETRY_MS = 90_000;
const FIRST_WAIT_MS = 1000;
const MAX_WAIT_MS = 15_000;

const TRANSIENT: ReadonlySet<FailureCause> = new Set<FailureCause>(['server', 'transport', 'timeout', 'conflict', 'too-many-requests']);

/** Whether a write that failed with `kind` may succeed when sent again a little later. */
export function writeTransient(kind: FailureCause): boolean {
  return TRANSIENT.has(kind);
}

/**
 * The wait after the `failures`-th failed try (1-based): the answer's Retry-After when it gave one
 * (capped), else capped exponential, half of it jittered by `random` in [0, 1).
 */
export function writeBackoffMs(failures: number, random: number, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs)) return Math.min(MAX_WAIT_MS, Math.max(0, Math.round(retryAfterMs)));
  const full = Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** Math.max(0, failures - 1));
  return Math.round(full / 2 + (full / 2) * Math.min(1, Math.max(0, random)));
}
