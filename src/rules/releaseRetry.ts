// When a release is tried again: the run Lease's release and a node claim's release, in the main step
// and in the post step (src/pipeline/releaseRetry.ts does the I/O). Pure: a failure's kind and the
// number of tries in, a decision and a wait out.
//
// The rule: a release refused for a reason that passes is tried again, with a re-read between two tries
// that decides whether another is needed (src/pipeline/releaseRetry.ts), for up to RELEASE_RETRY_MS:
// - transient: a 5xx (etcd's own timeout answered as a 500 "etcdserver: request timed out", an
//   apiserver shutting down answering 503), a dropped connection or a timeout (the request may or may
//   not have landed: the re-read says), a 409 Conflict (the apiserver's own optimistic-concurrency
//   retries ran out while another writer updated the object; our patch is a CAS of its own, so trying it
//   again is safe), a 429 (priority and fairness shed the request);
// - anything else is definite: a 422 (one of our `test`s failed: the object is no longer ours), a 404
//   (gone), a 403, a usage error; the release is not tried again, and the caller says why.
// RELEASE_RETRY_MS, 90 s, rides out a kube-apiserver restart (a static pod: the old one shuts down,
// answering 503 "apiserver is shutting down", then connections are refused until the new one serves,
// typically 20-60 s) and an etcd leader election (seconds). The waits grow from 1 s, doubled each try,
// capped at 15 s, each with "equal jitter" (half fixed, half drawn from the clock port's random) so the
// releases of several nodes and runs do not retry in step.
// Tests: __tests__/rules/releaseRetry.test.ts, __tests__/pipeline/releaseRetry.test.ts.
import type { FailureCause } from '../core/errors.js';

/** the longest the retries of one release may take, from its first failure */
export const RELEASE_RETRY_MS = 90_000;
const FIRST_WAIT_MS = 1000;
const MAX_WAIT_MS = 15_000;

const TRANSIENT: ReadonlySet<FailureCause> = new Set<FailureCause>(['server', 'transport', 'timeout', 'conflict', 'too-many-requests']);

/** Whether a release that failed with `kind` may succeed when sent again a little later. */
export function releaseTransient(kind: FailureCause): boolean {
  return TRANSIENT.has(kind);
}

/** The wait after the `failures`-th failed try (1-based): capped exponential, half of it jittered by `random` in [0, 1). */
export function releaseBackoffMs(failures: number, random: number): number {
  const full = Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** Math.max(0, failures - 1));
  return Math.round(full / 2 + (full / 2) * Math.min(1, Math.max(0, random)));
}
