// The run Lease's acquisition (docs/recovery.md): create it if absent, take it if free, accept our own
// token after a lost answer, watch one another run holds and take it over only once nothing renewed it
// for its whole duration on this run's clock. The rules are src/rules/lease.ts's; the holding, the
// renewal and the release are src/pipeline/runLock.ts's.
import type { KubeClient, LeaseState } from '../adapters/types.js';
import type { Clock } from '../core/clock.js';
import { errorMessage, outcomeUnknown, ToolError, type FailureCause } from '../core/errors.js';
import { formatDuration } from '../core/format.js';
import {
  acquireSpec,
  judgeLease,
  leaseDurationMs,
  observedExpiry,
  takeFreeLeasePatch,
  takeOverPatch,
  type LeaseWatch,
} from '../rules/lease.js';
import { CancelledError, LeaseContendedError, LeaseHeldError, LeaseUnknownError } from './errors.js';
import { readAfterUnknown } from './apiserver.js';

/** The Lease as the run lock names it, and what acquiring it needs. */
export interface LeaseTarget {
  kube: KubeClient;
  namespace: string;
  name: string;
  /** `namespace/name`, for the messages */
  lease: string;
  owner: string;
  clock: Clock;
  serverUrl: string;
  durationSeconds: number;
  log: (message: string) => void;
  /** true once the run was cancelled */
  cancelled?: () => boolean;
}

/** The Lease as taken, when, how (one line for the log), and whose expired Lease it took over. */
export interface Acquired {
  lease: LeaseState;
  at: number;
  how: string;
  tookOver?: { from: string; unchangedForMs: number };
}

const isCause = (e: unknown, cause: FailureCause): boolean => e instanceof ToolError && e.kind === cause;

function acquired(lease: LeaseState, at: number, how: string, tookOver?: Acquired['tookOver']): Acquired {
  return { lease, at, how, ...(tookOver ? { tookOver } : {}) };
}

/**
 * Create the Lease if absent, take it if free, accept it if it already carries our token (a
 * response lost in transit), refuse it while another run holds it. A 409 on create or a 422 on take
 * means another run got there between our read and our write: re-read and judge once more; a second
 * race gives up.
 *
 * A Lease another run holds is watched (watchExpiry): taken over when nothing wrote it for its whole
 * duration and the margin on this run's clock (its holder stopped renewing it: killed, or cut off),
 * refused as soon as anything does (the holder renewed it: it is alive). Freed meanwhile: taken.
 */
export async function acquireLease(t: LeaseTarget): Promise<Acquired> {
  let races = 0;
  let holderStoredEmpty = false;
  let triedTake: LeaseState | undefined;
  let unknowns = 0;
  let watch: LeaseWatch | undefined;
  for (;;) {
    const lease = await t.kube.getLease(t.namespace, t.name);
    const now = t.clock.now();
    if (
      triedTake &&
      lease &&
      !holderStoredEmpty &&
      lease.uid === triedTake.uid &&
      lease.resourceVersion === triedTake.resourceVersion &&
      !lease.holderIdentity
    ) {
      // Our take failed yet nothing was written since the read: the only `test` that can have failed
      // is `holderIdentity == null` against a stored "" (see takeFreeLeasePatch). Not a race.
      holderStoredEmpty = true;
      races--;
    }
    const j = judgeLease(lease, t.owner, now, t.serverUrl);
    if (j.kind === 'ours') {
      return acquired(lease!, now, 'already carried our owner token');
    }
    if (j.kind === 'held') {
      // Watched once only: a Lease that changed during the watch was written by someone alive. Its
      // own times are not trusted either way (another machine's clock, and a run killed a moment ago
      // looks as fresh as a live one): the watch decides.
      if (watch) throw new LeaseHeldError(t.lease, j.holder, j.expired, j.runUrl, j.renewTime);
      watch = { uid: lease!.uid, resourceVersion: lease!.resourceVersion, holder: lease!.holderIdentity, sinceMs: now };
      const expired = await watchExpiry(t, watch);
      if (!expired) continue;
      try {
        const at = t.clock.now();
        const taken = await t.kube.patchLease(t.namespace, t.name, takeOverPatch(expired.lease, t.owner, at, t.durationSeconds));
        return acquired(
          taken,
          at,
          `took over the Lease from ${watch.holder}: not renewed for ${formatDuration(expired.unchangedForMs)} of this run's watch, more than its duration ${formatDuration(leaseDurationMs(expired.lease))}`,
          { from: watch.holder, unchangedForMs: expired.unchangedForMs },
        );
      } catch (e) {
        if (isCause(e, 'invalid') && ++races <= 1) continue;
        if (outcomeUnknown(e)) {
          const reread = await readAfterUnknown({ kube: t.kube, clock: t.clock }, async () => ({
            lease: await t.kube.getLease(t.namespace, t.name),
          }));
          const at = t.clock.now();
          if (reread && judgeLease(reread.lease, t.owner, at, t.serverUrl).kind === 'ours') {
            return acquired(
              reread.lease!,
              at,
              `took over the Lease from ${watch.holder}; its answer was lost and a re-read showed our token`,
              { from: watch.holder, unchangedForMs: expired.unchangedForMs },
            );
          }
          throw new LeaseUnknownError(t.lease, errorMessage(e));
        }
        if (isCause(e, 'invalid')) throw new LeaseContendedError(t.lease, errorMessage(e));
        throw e;
      }
    }
    try {
      if (j.kind === 'absent') {
        const created = await t.kube.createLease(t.namespace, t.name, acquireSpec(t.owner, now, t.durationSeconds));
        return acquired(created, now, 'created');
      }
      triedTake = lease;
      const taken = await t.kube.patchLease(
        t.namespace,
        t.name,
        takeFreeLeasePatch(lease!, t.owner, now, holderStoredEmpty, t.durationSeconds),
      );
      return acquired(taken, now, 'taken (it was free)');
    } catch (e) {
      const raced = j.kind === 'absent' ? isCause(e, 'conflict') : isCause(e, 'invalid');
      if (!raced && outcomeUnknown(e)) {
        // "Unknown" is not "no": the create or take may have landed. Read before deciding.
        const what = j.kind === 'absent' ? 'created' : 'taken (it was free)';
        const reread = await readAfterUnknown({ kube: t.kube, clock: t.clock }, async () => ({
          lease: await t.kube.getLease(t.namespace, t.name),
        }));
        if (!reread) throw new LeaseUnknownError(t.lease, errorMessage(e));
        const at = t.clock.now();
        if (judgeLease(reread.lease, t.owner, at, t.serverUrl).kind === 'ours') {
          return acquired(reread.lease!, at, `${what}; its answer was lost (${errorMessage(e)}) and a re-read showed our token`);
        }
        // It did not land: judge the Lease as it is now, at most once more.
        if (++unknowns > 1) throw e;
        continue;
      }
      if (!raced) throw e;
      races++;
      if (races > 1) throw new LeaseContendedError(t.lease, errorMessage(e));
      t.log(
        `Lease ${t.lease}: ${j.kind === 'absent' ? 'created by someone else' : 'changed'} between our read and our write; reading it again`,
      );
    }
  }
}

/**
 * Watch a Lease that looked expired by its holder's times: read it again until it has stayed exactly
 * as first read for its duration and the margin on this run's clock (observedExpiry), and return it
 * then; undefined as soon as it changed (the caller judges it afresh, and refuses a live holder). A
 * cancellation ends the watch with nothing written.
 */
async function watchExpiry(t: LeaseTarget, watch: LeaseWatch): Promise<{ lease: LeaseState; unchangedForMs: number } | undefined> {
  t.log(
    `Lease ${t.lease}: held by ${watch.holder}; watching it: taken over if nothing renews it for its duration and a margin, refused as soon as anything does`,
  );
  for (;;) {
    // The channel outlives a cancellation (for the releases), so these reads would still be answered,
    // and the take-over after them sent: the watch ends here instead, with nothing written.
    if (t.cancelled?.()) throw new CancelledError(`the run was cancelled while it waited for the Lease ${t.lease} to expire`);
    const lease = await t.kube.getLease(t.namespace, t.name);
    const seen = observedExpiry(watch, lease, t.clock.now());
    if (seen.kind === 'changed') {
      t.log(`Lease ${t.lease}: it changed while watched; judging it again`);
      return undefined;
    }
    if (seen.kind === 'expired') return { lease: lease!, unchangedForMs: seen.unchangedForMs };
    await t.clock.sleep(Math.min(seen.remainingMs, Math.max(250, Math.min(5000, leaseDurationMs(lease!) / 4))));
  }
}
