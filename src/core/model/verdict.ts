// What the evidence rule (src/rules/evidence.ts) concluded from a node's readings: skip or reboot,
// every value it compared, how containerd's start orders against the last config write. A decision
// record carries it (record.ts), before the reboot and as the proof after it. Plain data, no I/O.

import type { ReadPath } from './readings.js';

/** Every value the evidence rule compared, for the summary and the decision output. */
export interface EvidenceValues {
  criState?: string;
  criHealth?: string;
  criPid?: number;
  /** earliest instant containerd could have started (ISO): the newest pre-launch event of its run */
  criStartEarliest?: string;
  /** optional: latest instant it could have started (ISO): ServicePID created / the start event */
  criStartLatest?: string;
  criStartSource?: string;
  /** latest instant any config file could have been written (ISO) */
  configWrittenLatest?: string;
  /** optional: the launch's bounds in epoch ms (node clock), for a compact rendering */
  criStart?: { earliestMs: number; latestMs: number };
  /** optional: the last write's bounds in epoch ms (node clock) */
  configWrite?: { earliestMs: number; latestMs: number };
  /** optional: earliest instant the last write could have been (ISO): the newest file's mtime */
  configWrittenEarliest?: string;
  configWrittenPath?: string;
  marginMs: number;
  /** start − write, in ms, when both are known: the lower end of `gap` (what the margin is compared with) */
  gapMs?: number;
  /** optional: every value start − write can take given the bounds of both instants, in ms */
  gap?: { lowMs: number; highMs: number };
  /** optional: which path read the instants that decided ('mixed' when the two paths were combined) */
  readPath?: ReadPath | 'mixed';
  timeSynced?: boolean;
  timeEpoch?: number;
  /** per path: exists, lastMod as printed, whether it carries the desired credential */
  files: Array<{
    path: string;
    exists?: boolean;
    lastMod?: string;
    updated?: string;
    credential?: 'desired' | 'old' | 'absent' | 'unknown';
    /** optional, when the roll is for several hosts: each host's state in this file (`credential` is the worst of them) */
    byHost?: Record<string, 'desired' | 'old' | 'absent'>;
    /** optional: latest instant this file could have been written (ISO) */
    latestWrite?: string;
  }>;
  talosVersion?: string;
  /** optional: the current run's "started with PID" event and its instant as read (ISO of the bounds) */
  criEvent?: { pid: number; at: string; text?: string };
  /** optional: `get servicepids cri`, as read (created ISO, node clock) */
  servicePid?: { pid: number; created: string };
  /** optional: the runner clock just before and after `talosctl service cri` (ISO) */
  runnerWindow?: { before: string; after: string };
  /** optional, on a reading after the credential patch: the launch the reading before it placed (PID, latest ISO) */
  launchBeforePatch?: { pid: number; latest: string };
}

/** A containerd launch a reading placed: its PID and the launch's bounds (node clock, epoch ms). */
export interface CriLaunch {
  pid: number;
  earliestMs: number;
  latestMs: number;
}

/**
 * What the instants say about containerd's start against the last config write:
 * - `after`: provably after by more than the margin (the only ordering that may skip);
 * - `undecidable`: the bounds overlap, the gap is within the margin, or the clock cannot be trusted;
 * - `before`: provably before (start.latest < write.earliest), on a clock the checks trust;
 * - `unknown`: an instant could not be read at all.
 */
export type EvidenceOrdering = 'after' | 'undecidable' | 'before' | 'unknown';

/**
 * The evidence rule's conditions, in the order it checks them (src/rules/evidence.ts): which one gave a
 * `reboot` verdict its reason, for a reader who wants the why in a few words (the summary's table).
 */
export const EVIDENCE_RULES = [
  'margin',
  'cri-service',
  'containerd-start',
  'launch-after-patch',
  'config-write',
  'credential',
  'clock',
  'ordering',
] as const;
export type EvidenceRule = (typeof EVIDENCE_RULES)[number];

export interface EvidenceVerdict {
  verdict: 'skip' | 'reboot';
  /** one line a user reads in the summary table */
  reason: string;
  values: EvidenceValues;
  /** optional: the ordering of start and write (see EvidenceOrdering) */
  ordering?: EvidenceOrdering;
  /** optional, on a `reboot`: the condition that reported `reason` (the first that failed); absent: none failed outright */
  failedRule?: EvidenceRule;
  /**
   * optional: true when the readings prove the running containerd does NOT hold the desired
   * credential (cri not Running, an old or absent credential in an existing config file, or a start
   * provably before the write), as opposed to merely failing to prove that it does. After a reboot,
   * only a contradicting proof is a failed roll; an undecidable one is a residual risk to report.
   */
  contradicts?: boolean;
  /**
   * optional: set when a reading the rule needs was not there — not taken, failed, or of a file not
   * there yet (listed but not read, read but not found, no EtcFileStatus yet) — with the first such
   * reason. Absent: every reading the rule needs was taken. A `skip` is never incomplete. After a
   * reboot an incomplete reading is read again, never judged (src/rules/proof.ts).
   */
  incomplete?: string;
}
