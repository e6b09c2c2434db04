// The run Lease's release, the one the main step's RunLock (src/pipeline/runLock.ts) and the post step
// share, and how a Lease that is not ours any more is described.
import type { KubeClient } from '../adapters/types.js';
import { errorMessage } from '../core/errors.js';
import { GITHUB_SERVER_URL } from '../core/owner.js';
import type { Clock } from '../core/clock.js';
import { judgeLease, type LeaseJudgement, releaseLeasePatch } from '../rules/lease.js';
import { leaseDocument } from '../rules/objectDocument.js';
import { writeSurvivingLoss } from './write.js';

export interface LeaseReleaseOutcome {
  released: boolean;
  message: string;
  /** not released: why (who holds it now, or that it is gone) */
  why?: string;
}

/**
 * The run Lease's release, for the main step (RunLock.release) and the post step alike: the CAS patch
 * (releaseLeasePatch) through the one writer (src/pipeline/write.ts): a failure that passes is tried
 * again with backoff, and after one whose answer was lost the Lease is re-read and the rule judges it
 * (src/rules/lostWrite.ts): free (the release shows) means it landed although its answer was lost
 * (released); another holder, or no Lease at all, means it is not ours to touch (left as it is); still
 * naming us means send it again. A 422 or 404 on the first try is the CAS refusing: who holds it now is
 * read and said. Throws when the Lease may still name us (the failure outlasted the retries, the
 * outcome stayed unknown, or a definite failure such as a 403).
 */
export async function releaseLease(
  deps: { kube: KubeClient; clock: Clock; log?: (message: string) => void; serverUrl?: string; cancelled?: () => boolean },
  namespace: string,
  name: string,
  owner: string,
): Promise<LeaseReleaseOutcome> {
  const lease = `${namespace}/${name}`;
  const serverUrl = deps.serverUrl ?? GITHUB_SERVER_URL;
  const judgeNow = async (): Promise<LeaseJudgement> =>
    judgeLease(await deps.kube.getLease(namespace, name), owner, deps.clock.now(), serverUrl);
  const ops = releaseLeasePatch(owner);
  const r = await writeSurvivingLoss(
    { kube: deps.kube, clock: deps.clock, cancelled: deps.cancelled, note: deps.log },
    {
      what: `Lease ${lease}: release`,
      ops: () => ops,
      send: (o) => deps.kube.patchLease(namespace, name, o),
      read: () => deps.kube.getLease(namespace, name),
      document: leaseDocument,
      stillHolds: 'still ours',
    },
  );
  if (r.kind === 'written') return { released: true, message: `Lease ${lease}: released` };
  if (r.kind === 'applied') {
    return {
      released: true,
      message: `Lease ${lease}: released (the answer to the release was lost: ${errorMessage(r.after)}; a re-read shows it free)`,
    };
  }
  if (r.kind === 'unknown') throw r.error;
  // refused: by the CAS (a 422 or 404), or a re-read after a lost answer showed it no longer ours
  if (r.read && r.verdict?.kind !== 'conflicted') throw r.error;
  let why: string;
  try {
    const j = r.read ? judgeLease(r.seen, owner, deps.clock.now(), serverUrl) : await judgeNow();
    if (j.kind === 'free' && r.read) {
      return {
        released: true,
        message: `Lease ${lease}: released (the answer to the release was lost: ${errorMessage(r.error)}; a re-read shows it free)`,
      };
    }
    why = j.kind === 'ours' ? `the write was rejected although the Lease still names us (${errorMessage(r.error)})` : whoHolds(j);
  } catch (readError) {
    why = `${errorMessage(r.error)}; reading the Lease again also failed: ${errorMessage(readError)}`;
  }
  return { released: false, why, message: `Lease ${lease}: not released, ${why}; left as it is` };
}

/** Who has the Lease now, when it is not ours. */
export function whoHolds(j: Exclude<LeaseJudgement, { kind: 'ours' }>): string {
  switch (j.kind) {
    case 'absent':
      return 'the Lease was deleted';
    case 'free':
      return 'the Lease was released by someone else';
    case 'held':
      return `the Lease is now held by ${j.holder}${j.runUrl ? ` (workflow run ${j.runUrl})` : ''}`;
  }
}
