// The bounds the evidence conditions hand each other (the launch of the running containerd, the last
// write of its config), and how an instant prints in the verdict's values and reasons.
import type { ReadPath } from '../../core/model/readings.js';

export function iso(ms: number | undefined): string | undefined {
  if (ms === undefined || !Number.isFinite(ms)) return undefined;
  const d = new Date(Math.floor(ms));
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

export interface StartInstant {
  pid: number;
  /** strict lower bound of the launch: the earliest the newest pre-launch event of the run can be */
  earliestMs: number;
  /** upper bound of the launch: ServicePID `created` and the start event are both logged after it */
  latestMs: number;
  source: string;
  via: ReadPath[];
}

export interface WriteInstant {
  /** the last write happened no earlier than this (the newest file's mtime) */
  earliestMs: number;
  /** the last write happened no later than this (EtcFileStatus updated; on the CLI path also the mtime) */
  latestMs: number;
  path: string;
  via: ReadPath[];
}
