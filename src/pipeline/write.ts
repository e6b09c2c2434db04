// THE writer of every CAS-guarded JSON Patch the action sends to the cluster (the claim, the phase
// patches, the marker, the quarantine, a node's release, the run Lease's release): it sends the patch,
// and when the answer is lost it re-reads the object and lets the rule (src/rules/lostWrite.ts) say what
// the write did; failures that pass are tried again here, with backoff on the run's clock, and nowhere
// else. The argument: docs/decision-rules.md#a-write-whose-answer-was-lost.
//
// - an answer: `written`.
// - a refusal of the CAS (422: a `test` failed; 404: gone) on the first send: `refused`, as it is.
// - a failure after which the write may have applied (a dropped connection, a 5xx, the apiserver's
//   504, our own deadline: src/core/errors.ts outcomeUnknown): the object is read again, waiting for
//   `/readyz` between reads, and judged: `applied` (its answer was lost), `refused` (conflicted: what the
//   tests guard moved), or sent again (not applied: the tests still hold). No read answering before the
//   bound, or the run cancelled: `unknown` (the caller says the write may be on the object).
// - a refusal of a resend after an unknown outcome may be refused BECAUSE the first send applied (its
//   `test` of what that one changed fails): judged by a re-read in the same way.
// - a 409 or 429: sent again (nothing was applied).
// Every retry waits (src/rules/lostWrite.ts writeBackoffMs: the answer's Retry-After, else capped
// exponential with jitter), for at most WRITE_RETRY_MS from the first failure; past it, or cancelled,
// the last failure is thrown. Any other failure (403, a usage error) is thrown as it is.
import type { KubeClient } from '../adapters/types.js';
import type { Clock } from '../core/clock.js';
import { casLost, errorMessage, outcomeUnknown, ToolError } from '../core/errors.js';
import { formatDuration } from '../core/format.js';
import type { JsonPatchOp } from '../core/model/patch.js';
import { judgeLostWrite, WRITE_RETRY_MS, writeBackoffMs, writeTransient, type LostWriteVerdict } from '../rules/lostWrite.js';
import { readAfterUnknown } from './apiserver.js';

export interface WriteDeps {
  kube: Pick<KubeClient, 'readyz'>;
  clock: Clock;
  cancelled?: () => boolean;
  /** a line for each try that failed and each write a re-read found applied */
  note?: (message: string) => void;
}

export interface Write<T, R> {
  /** what is written, for the notes (`the release of w1`) */
  what: string;
  /** the patch as it is to be sent now, and after a failed send the patch as last sent (a release may drop marks inside a send: src/pipeline/autoscalerMarks.ts) */
  ops: () => JsonPatchOp[];
  send: (ops: JsonPatchOp[]) => Promise<T>;
  /** the object as it is now; undefined when it is gone */
  read: () => Promise<R | undefined>;
  /** the object as the apiserver serves it, for the rule (src/rules/objectDocument.ts) */
  document: (seen: R) => unknown;
  /** before each send (the fence: the Lease proven ours, the claim published) */
  beforeSend?: () => Promise<void>;
  /** how a not-applied re-read is said in the notes (default: "its tests still hold") */
  stillHolds?: string;
}

/** What a write did, as far as anyone can know. `sends`: how many times it was sent. */
export type WriteOutcome<T, R> =
  | { kind: 'written'; value: T; sends: number; lost: unknown[] }
  /** its answer was lost (`after`), a re-read showed it applied */
  | { kind: 'applied'; seen: R; after: unknown; sends: number; lost: unknown[] }
  /** the CAS refused it (a 422 or 404), or a re-read after a lost answer showed its tests no longer hold (`verdict`); `seen`, when read */
  | { kind: 'refused'; error: unknown; seen?: R; read: boolean; verdict?: LostWriteVerdict; sends: number; lost: unknown[] }
  /** it may have applied and no read could tell (the bound passed, or the run was cancelled) */
  | { kind: 'unknown'; error: unknown; sends: number; lost: unknown[] };

const NO_READ = Symbol('no read');

/** The wait the answer asked for (Retry-After), if any. */
const retryAfterOf = (e: unknown): number | undefined => (e instanceof ToolError ? e.retryAfterMs : undefined);

/**
 * Sends `w` until it is written or a re-read settles it (see the head of this file). `lost`: the failure
 * of each send whose answer was lost and whose re-read showed it had not applied (the claim records them).
 */
export async function writeSurvivingLoss<T, R>(deps: WriteDeps, w: Write<T, R>): Promise<WriteOutcome<T, R>> {
  const { clock } = deps;
  let deadline: number | undefined;
  let mayHaveApplied = false;
  const lost: unknown[] = [];
  let sends = 0;
  for (let failures = 1; ; failures++) {
    await w.beforeSend?.();
    const ops = w.ops();
    sends++;
    let error: unknown;
    try {
      return { kind: 'written', value: await w.send(ops), sends, lost };
    } catch (e) {
      error = e;
    }
    deadline ??= clock.now() + WRITE_RETRY_MS;
    const refused = casLost(error);
    if (refused && !mayHaveApplied) return { kind: 'refused', error, read: false, sends, lost };
    const unknown = outcomeUnknown(error);
    if (!refused && !unknown) {
      const kind = error instanceof ToolError ? error.kind : undefined;
      if (kind === undefined || !writeTransient(kind)) throw error;
    }
    let stillHolds = false;
    if (refused || unknown) {
      mayHaveApplied = true;
      const seen = await readAfterUnknown(
        deps,
        async () => {
          const r = await w.read();
          return { r, verdict: judgeLostWrite(w.ops(), r === undefined ? undefined : w.document(r)) };
        },
        deadline,
      ).then((x) => x ?? NO_READ);
      if (seen === NO_READ) return { kind: 'unknown', error, sends, lost };
      if (seen.verdict.kind === 'applied' && seen.r !== undefined) {
        deps.note?.(`${w.what}: ${errorMessage(error)}; a re-read shows it applied (the answer was lost)`);
        return { kind: 'applied', seen: seen.r, after: error, sends, lost };
      }
      // refused although the tests hold now: the refusal was of another kind (validation); it stands
      if (refused || seen.verdict.kind === 'conflicted') {
        return { kind: 'refused', error, seen: seen.r, read: true, verdict: seen.verdict, sends, lost };
      }
      stillHolds = true;
      lost.push(error);
    }
    const wait = writeBackoffMs(failures, clock.random(), retryAfterOf(error));
    if (deps.cancelled?.() || clock.now() + wait > deadline) throw error;
    deps.note?.(
      `${w.what} failed (${errorMessage(error)}); ${stillHolds ? (w.stillHolds ?? 'its tests still hold') : 'not applied'}, trying again in ${formatDuration(wait)}`,
    );
    await clock.sleep(wait);
  }
}
