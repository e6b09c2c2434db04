// The run Lease's release, the one the main step's RunLock (src/pipeline/runLock.ts) and the post step
// share, and how a Lease that is not ours any more is described.
import type { KubeClient } from '../adapters/types.js';
import { casLost, errorMessage } from '../core/errors.js';
import { GITHUB_SERVER_URL } from '../core/owner.js';
import type { Clock } from '../core/clock.js';
import { judgeLease, type LeaseJudgement, releaseLeasePatch } from '../rules/lease.js';
import { releaseRetrying, type ReleaseSeen } from './releaseRetry.js';

export interface LeaseReleaseOutcome {
  released: boolean;
  message: string;
  /** not released: why (who holds it now, or that it is gone) */
  why?: string;
}

/**
 * The run Lease's release, for the main step (RunLock.release) and the post step alike: the CAS patch
 * (releaseLeasePatch), tried again on a transient failure (src/pipeline/releaseRetry.ts) with a
 * re-read of the Lease between tries: free means our release landed although its answer was lost
 * (released); another holder, or no Lease at all, means it is not ours to touch (left as it is); still
 * naming us means send it again. A 422 or 404 on the first try is the CAS refusing: who holds it now is
 * read and said. Throws when the Lease may still name us (the failure outlasted the retries, or a
 * definite failure such as a 403).
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
  try {
    const r = await releaseRetrying(
      { clock: deps.clock, cancelled: deps.cancelled, note: deps.log },
      `Lease ${lease}: release`,
      () => deps.kube.patchLease(namespace, name, releaseLeasePatch(owner)),
      async (): Promise<ReleaseSeen<true>> => {
        const j = await judgeNow();
        if (j.kind === 'free') return { kind: 'released', value: true };
        if (j.kind === 'ours') return { kind: 'ours' };
        return { kind: 'not-ours', why: whoHolds(j) };
      },
    );
    if (r.kind === 'sent') return { released: true, message: `Lease ${lease}: released` };
    if (r.kind === 'seen-released') {
      return {
        released: true,
        message: `Lease ${lease}: released (the answer to the release was lost: ${errorMessage(r.after)}; a re-read shows it free)`,
      };
    }
    return { released: false, why: r.why, message: `Lease ${lease}: not released, ${r.why}; left as it is` };
  } catch (e) {
    if (!casLost(e)) throw e;
    let why: string;
    try {
      const j = await judgeNow();
      why = j.kind === 'ours' ? `the write was rejected although the Lease still names us (${errorMessage(e)})` : whoHolds(j);
    } catch (readError) {
      why = `${errorMessage(e)}; reading the Lease again also failed: ${errorMessage(readError)}`;
    }
    return { released: false, why, message: `Lease ${lease}: not released, ${why}; left as it is` };
  }
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
