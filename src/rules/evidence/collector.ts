// The one collector every evidence condition reports to (src/rules/evidence.ts turns it into the verdict).
// A condition never decides the verdict itself: it says which way a failed check counts, and the first
// reason reported is the verdict's reason.

/** How a failed check counts for the post-reboot decision (see EvidenceVerdict.contradicts). */
export interface Collector {
  /** a check that could not prove its part: reboot, but nothing is disproven */
  fail: (reason: string) => void;
  /** the readings prove the running containerd does not hold the desired credential */
  contradict: (reason: string) => void;
  /** the node clock cannot be trusted: no ordering of its instants, either way */
  doubtClock: (reason: string) => void;
  /**
   * a reading the rule needs is not there: not taken, failed, or of a file not there yet (listed but
   * not read, read but not found, no EtcFileStatus yet). The check fails too; the verdict says the
   * reading is incomplete (EvidenceVerdict.incomplete), so a reading after a reboot is read again.
   */
  missing: (reason: string) => void;
}

/** What the conditions reported, read by the verdict. */
export interface Collected {
  failures: string[];
  /** some check proved the running containerd lacks the desired credential */
  contradicts: boolean;
  /** some check doubted the node clock: no ordering of its instants, either way */
  clockDoubted: boolean;
  /** the first reading found missing (EvidenceVerdict.incomplete) */
  incomplete?: string;
}

/** A collector and what it collected: every reason in order, and how the failed checks count. */
export function newCollector(): { c: Collector; collected: Collected } {
  const collected: Collected = { failures: [], contradicts: false, clockDoubted: false };
  const failures = collected.failures;
  const c: Collector = {
    fail: (reason) => failures.push(reason),
    contradict: (reason) => {
      collected.contradicts = true;
      failures.push(reason);
    },
    doubtClock: (reason) => {
      collected.clockDoubted = true;
      failures.push(reason);
    },
    missing: (reason) => {
      collected.incomplete ??= reason;
      if (!failures.includes(reason)) failures.push(reason);
    },
  };
  return { c, collected };
}
