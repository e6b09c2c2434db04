// A release that survives a passing failure of the apiserver: the run Lease's release (src/pipeline/lease.ts,
// and the post step's) and a node claim's (src/pipeline/stop.ts, src/pipeline/node.ts, the post step).
// The rule (which failures pass, the waits, the bound) is src/rules/releaseRetry.ts; this file does the I/O.
//
// After a transient failure the object is read again before anything else, because a failure does not
// say the release did not land: a dropped connection or a 5xx may come after the write (src/core/errors.ts
// outcomeUnknown). The re-read decides:
// - it shows the release: it landed although nobody saw the answer; that counts as released;
// - it shows the object is no longer ours (another run's Lease, a node claimed by someone else, gone):
//   stop, and leave it as it is;
// - still ours: wait (capped exponential backoff with jitter, on the clock port) and send it again.
// A re-read that fails too says nothing: wait and send again (the release is CAS-guarded, so a second
// one cannot undo anything). A resend refused with 422 after a try whose outcome was unknown may be
// refused BECAUSE the first landed (its `test` of our token fails): the re-read after it decides too.
import type { KubeClient } from '../adapters/types.js';
import type { Clock } from '../core/clock.js';
import { casLost, errorMessage, outcomeUnknown, ToolError } from '../core/errors.js';
import { formatDuration } from '../core/format.js';
import type { AnnotationKeys, ClaimCapture, NodeState } from '../core/model/node.js';
import type { JsonPatchOp } from '../core/model/patch.js';
import { releaseBackoffMs, releaseTransient, RELEASE_RETRY_MS } from '../rules/releaseRetry.js';
import { sendKeepingTheirMarks } from './autoscalerMarks.js';

/** What a re-read between two tries shows. */
export type ReleaseSeen<T> = { kind: 'released'; value: T } | { kind: 'ours' } | { kind: 'not-ours'; why: string };

export type ReleaseOutcome<S, T> =
  | { kind: 'sent'; value: S }
  /** the release landed, its answer lost: a re-read showed it */
  | { kind: 'seen-released'; value: T; after: unknown }
  /** a re-read showed the object is no longer this run's: left as it is */
  | { kind: 'not-ours'; why: string; after: unknown };

export interface ReleaseRetryDeps {
  clock: Clock;
  cancelled?: () => boolean;
  /** a line for each try that failed and each release a re-read found */
  note?: (message: string) => void;
}

/**
 * Sends `send` until it succeeds, a re-read (`reread`) settles it, a failure is definite (thrown as it
 * is), or RELEASE_RETRY_MS has passed since the first failure (the last failure thrown).
 */
export async function releaseRetrying<S, T>(
  deps: ReleaseRetryDeps,
  what: string,
  send: () => Promise<S>,
  reread: () => Promise<ReleaseSeen<T>>,
): Promise<ReleaseOutcome<S, T>> {
  const { clock } = deps;
  let deadline: number | undefined;
  let mayHaveLanded = false;
  for (let failures = 1; ; failures++) {
    let error: unknown;
    try {
      return { kind: 'sent', value: await send() };
    } catch (e) {
      error = e;
    }
    const kind = error instanceof ToolError ? error.kind : undefined;
    const refusedAfterUnknown = mayHaveLanded && casLost(error);
    if (kind === undefined || (!releaseTransient(kind) && !refusedAfterUnknown)) throw error;
    mayHaveLanded ||= outcomeUnknown(error);
    deadline ??= clock.now() + RELEASE_RETRY_MS;

    let seen: ReleaseSeen<T> | undefined;
    try {
      seen = await reread();
    } catch {
      seen = undefined;
    }
    if (seen?.kind === 'released') {
      deps.note?.(`${what}: ${errorMessage(error)}; a re-read shows it released (the answer was lost)`);
      return { kind: 'seen-released', value: seen.value, after: error };
    }
    if (seen?.kind === 'not-ours') return { kind: 'not-ours', why: seen.why, after: error };
    // still ours (or unreadable), yet our resend's CAS was refused: the refusal stands
    if (refusedAfterUnknown && seen?.kind === 'ours') throw error;

    const wait = releaseBackoffMs(failures, clock.random());
    if (deps.cancelled?.() || clock.now() + wait > deadline) throw error;
    deps.note?.(
      `${what} failed (${errorMessage(error)}); ${seen ? 'still ours' : 'could not read it again'}, trying again in ${formatDuration(wait)}`,
    );
    await clock.sleep(wait);
  }
}

/**
 * A node claim's release (`build(capture)`, a CAS-guarded release patch of `capture`), tried again on a
 * transient failure: the re-read shows it released (`landed`, src/rules/release.ts releaseShows), still
 * ours (the same uid with our owner token), or not ours any more (another owner, none without our
 * release, or the node gone), which stops the tries. An autoscaler mark someone changed during the hold
 * is left as they set it and the release sent again without it (src/pipeline/autoscalerMarks.ts).
 * Returns the node as released; throws the failure otherwise (the callers keep the node in its phase
 * and say how to release it).
 */
export async function releaseNodeRetrying(
  deps: ReleaseRetryDeps & {
    kube: Pick<KubeClient, 'patchNode' | 'getNode'>;
    log?: { info(message: string): void };
    /** each autoscaler mark left as someone else set it, one line (for the node's record: its summary row and Events) */
    keptMark?: (line: string) => void;
  },
  capture: ClaimCapture,
  keys: Pick<AnnotationKeys, 'owner' | 'autoscalerMarks'>,
  build: (capture: ClaimCapture) => JsonPatchOp[],
  landed: (n: NodeState) => boolean,
): Promise<NodeState> {
  const name = capture.node;
  const note = deps.note ?? ((m: string) => deps.log?.info(m));
  // the marks still ours, kept across the tries once a re-read dropped one
  let current = capture;
  const r = await releaseRetrying(
    { clock: deps.clock, cancelled: deps.cancelled, note },
    `the release of ${name}`,
    () =>
      sendKeepingTheirMarks(
        { kube: deps.kube, keys, note, kept: deps.keptMark },
        current,
        build,
        (ops) => deps.kube.patchNode(name, ops),
        (c) => (current = c),
      ),
    async (): Promise<ReleaseSeen<NodeState>> => {
      let n: NodeState;
      try {
        n = await deps.kube.getNode(name);
      } catch (e) {
        if (e instanceof ToolError && e.kind === 'not-found') return { kind: 'not-ours', why: `the node ${name} is gone` };
        throw e;
      }
      if (landed(n)) return { kind: 'released', value: n };
      if (n.uid === capture.uid && n.annotations[keys.owner] === capture.owner) return { kind: 'ours' };
      return { kind: 'not-ours', why: `${name} no longer carries this run's claim` };
    },
  );
  if (r.kind === 'sent' || r.kind === 'seen-released') return r.value;
  const after = r.after as ToolError; // releaseRetrying tries again only after a ToolError
  throw new ToolError({
    tool: after.tool,
    command: after.command,
    kind: after.kind,
    exitCode: after.exitCode,
    stderr: after.stderr,
    node: name,
    message: `${after.message}; then ${r.why}, so it was left as it is`,
  });
}
