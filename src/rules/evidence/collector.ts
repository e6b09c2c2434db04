import type { EvidenceRule } from '../../core/model/verdict.js';

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
  /** the condition that reported the first failure (EvidenceVerdict.failedRule) */
  firstRule?: EvidenceRule;
}

/** A collector and what it collected: every reason in order, and how the failed checks count. */
export function newCollector(): { c: Collector; collected: Collected; checking: (rule: EvidenceRule) => void } {
  const collected: Collected = { failures: [], contradicts: false, clockDoubted: false };
  let current: EvidenceRule | undefined;
  const push = (reason: string): void => {
    if (collected.failures.length === 0) collected.firstRule = current;
    collected.failures.push(reason);
  };
  const c: Collector = {
    fail: push,
    contradict: (reason) => {
      collected.contradicts = true;
      push(reason);
    },
    doubtClock: (reason) => {
      collected.clockDoubted = true;
      push(reason);
    },
    missing: (reason) => {
      collected.incomplete ??= reason;
      if (!collected.failures.includes(reason)) push(reason);
    },
  };
  // which condition reports from now on (src/rules/evidence.ts says it before running each)
  const checking = (rule: EvidenceRule): void => {
    current = rule;
  };
  return { c, collected, checking };
}
