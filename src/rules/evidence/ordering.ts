// Evidence rule 6: the order itself, the launch of the running containerd against the last write of its
// config, judged on the bounds rules 2 and 3 placed and only when rule 5 trusts the node clock.
import { formatDuration } from '../../core/format.js';
import { formatGap } from '../../core/instants.js';
import type { ReadPath } from '../../core/model/readings.js';
import type { EvidenceOrdering, EvidenceValues } from '../../core/model/verdict.js';
import type { StartInstant, WriteInstant } from './bounds.js';
import type { Collector } from './collector.js';

function readPathOf(paths: ReadPath[]): ReadPath | 'mixed' | undefined {
  const set = new Set(paths);
  if (set.size === 0) return undefined;
  return set.size === 1 ? paths[0] : 'mixed';
}

/**
 * Rule 6 — the order itself. `after` only when start.earliest − write.latest > margin (strictly): a
 * pair within the margin, a tie, or overlapping bounds cannot be ordered (a failed check, `undecidable`);
 * a start provably before the write contradicts (`before`: containerd runs with an older config). A
 * doubted clock orders nothing, in either direction. The gap is recorded in `values` as the whole
 * range the bounds allow, [start.earliest − write.latest, start.latest − write.earliest], with the path
 * that read it; with no start or no write placed the ordering is `unknown`.
 */
export function orderStartAfterWrite(
  start: StartInstant | undefined,
  write: WriteInstant | undefined,
  opts: { marginMs: number; clockDoubted: boolean },
  values: EvidenceValues,
  c: Collector,
): EvidenceOrdering {
  if (!start || !write) return 'unknown';
  const marginMs = opts.marginMs;
  const lowMs = start.earliestMs - write.latestMs;
  const highMs = start.latestMs - write.earliestMs;
  values.gapMs = lowMs;
  values.gap = { lowMs, highMs };
  values.readPath = readPathOf([...start.via, ...write.via]);
  const gap = `${formatGap(lowMs, highMs)} (read via ${values.readPath})`;
  if (opts.clockDoubted) return 'undecidable';
  if (lowMs > marginMs) return 'after';
  if (highMs < 0) {
    c.contradict(
      `containerd (PID ${start.pid}) started before the last write of ${write.path} (start − write ${gap}), so it runs with an older config`,
    );
    return 'before';
  }
  c.fail(
    `containerd (PID ${start.pid}) started ${gap} after the last write of ${write.path}: not provably more than the ` +
      `${formatDuration(marginMs)} margin, so the order cannot be proven`,
  );
  return 'undecidable';
}
