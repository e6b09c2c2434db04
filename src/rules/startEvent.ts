// Which `started with PID N` event of the cri history names the running containerd.
//
// The CLI prints events newest first and the Talos API lists them oldest first, so position proves
// nothing: the running process is the one whose start event is the LATEST BY TIME. Times come from
// the event's `at` (an Instant on the node's clock) when every start event has one, else from the
// CLI's printed age `agoMs` (smaller = later; all ages of one output share the same "now"). An `at`
// and an age cannot be compared with each other, and two start events of different PIDs whose times
// cannot be told apart (ages rounded to the same second, or overlapping Instant bounds) cannot be
// ordered: both cases are `ambiguous`, which the evidence rule turns into a reboot.
import type { ServiceEvent } from '../model.js';

/** The cri service event printed when the containerd process is launched (docs/talos-facts.md#t5-cri-start-event). */
export const START_EVENT = /started with PID (\d+)/;

export type StartEventPick =
  { kind: 'none' } | { kind: 'latest'; event: ServiceEvent; pid: number } | { kind: 'ambiguous'; reason: string };

interface Timed {
  event: ServiceEvent;
  pid: number;
  /** sort key: larger = later */
  key: number;
  /** the latest instant the event could have happened (= key for ages) */
  latest: number;
  /** the earliest instant the event could have happened (= key for ages) */
  earliest: number;
}

export function latestStartEvent(events: ServiceEvent[]): StartEventPick {
  const starts = events.filter((e) => START_EVENT.test(e.message));
  if (starts.length === 0) return { kind: 'none' };
  const pidOf = (e: ServiceEvent) => Number(START_EVENT.exec(e.message)![1]);
  // A single start event needs no ordering; its time is judged by the evidence rule itself.
  if (starts.length === 1) return { kind: 'latest', event: starts[0], pid: pidOf(starts[0]) };

  let timed: Timed[];
  if (starts.every((e) => e.at !== undefined && Number.isFinite(e.at.earliestMs) && Number.isFinite(e.at.latestMs))) {
    timed = starts.map((e) => ({ event: e, pid: pidOf(e), key: e.at!.latestMs, latest: e.at!.latestMs, earliest: e.at!.earliestMs }));
  } else if (starts.every((e) => e.agoMs !== undefined && Number.isFinite(e.agoMs))) {
    timed = starts.map((e) => ({ event: e, pid: pidOf(e), key: -e.agoMs!, latest: -e.agoMs!, earliest: -e.agoMs! }));
  } else {
    return {
      kind: 'ambiguous',
      reason: `${starts.length} start events in the cri history, and not all of them carry a comparable time`,
    };
  }
  timed.sort((a, b) => b.key - a.key);
  const [first, ...rest] = timed;
  // Any other PID that could have started at or after the chosen one's earliest instant competes with it.
  const rival = rest.find((t) => t.pid !== first.pid && t.latest >= first.earliest);
  if (rival) {
    return {
      kind: 'ambiguous',
      reason: `the start events of PID ${first.pid} and PID ${rival.pid} cannot be ordered by time`,
    };
  }
  return { kind: 'latest', event: first.event, pid: first.pid };
}
