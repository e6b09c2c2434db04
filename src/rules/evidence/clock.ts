// Evidence rule 5: the node clock, whose instants every other rule compares, gives no reason for doubt.
import type { EvidenceReadings } from '../../core/model/readings.js';
import type { EvidenceValues } from '../../core/model/verdict.js';
import { iso, type StartInstant, type WriteInstant } from './bounds.js';
import type { Collector } from './collector.js';

/**
 * How far a node instant may lie past the runner's clock after the read before the node clock is
 * called "ahead or stepped". Both clocks are NTP-disciplined to well under this; an exact API instant
 * of an event a few ms old must not fail on ordinary skew, a node clock seconds ahead must.
 */
const NODE_FUTURE_TOLERANCE_MS = 1000;

/**
 * Rule 5 — the node clock gives no reason for doubt. Every instant compared is machined's wall clock,
 * and Talos's time sync STEPS the clock when the offset exceeds 400 ms (slewing below that, which
 * never reverses the order of two instants): a backward step between a launch and a later write can
 * stamp the launch after the write. No margin covers a step (its size is unbounded up to 15 min), so:
 * - the time status must be read, synced, and at epoch 0 (the epoch counts jumps > 15 min);
 * - no instant may lie in the node's future: later than the runner's clock after the read plus a
 *   tolerance for ordinary skew. A node clock ahead of the runner is the one that will step back.
 * A doubted clock makes the ordering undecidable, in both directions: it never skips and never
 * proves "before" either.
 */
export function checkClock(
  r: EvidenceReadings,
  start: StartInstant | undefined,
  writes: WriteInstant[],
  values: EvidenceValues,
  c: Collector,
): void {
  if (!r.timeStatus.ok) {
    c.doubtClock(`the node time status could not be read: ${r.timeStatus.error}`);
    c.missing(`the node time status could not be read: ${r.timeStatus.error}`);
  } else {
    values.timeSynced = r.timeStatus.value.synced;
    values.timeEpoch = r.timeStatus.value.epoch;
    if (r.timeStatus.value.synced !== true) c.doubtClock('the node clock is not synced');
    if (r.timeStatus.value.epoch !== 0) {
      c.doubtClock(`the node clock jumped by more than 15 minutes since boot (time epoch ${r.timeStatus.value.epoch})`);
    }
  }
  if (!r.criService.ok) return; // no runner window to compare with; rule 1 already failed
  const after = r.criService.value.clientAfterMs;
  const limit = after + NODE_FUTURE_TOLERANCE_MS;
  for (const w of writes) {
    if (w.latestMs > limit) {
      c.doubtClock(
        `${w.path} was written up to ${iso(w.latestMs)}, after the runner's now (${iso(after)}): the node clock is ahead or stepped`,
      );
    }
  }
  if (start && start.latestMs > limit) {
    c.doubtClock(
      `containerd (PID ${start.pid}) started up to ${iso(start.latestMs)}, after the runner's now (${iso(after)}): the node clock is ahead or stepped`,
    );
  }
}
