// Evidence readings: what the Talos adapters read from one node, parsed but not judged (the evidence
// rule's verdict on them is verdict.ts). All instants are epoch milliseconds. Instants taken from the
// node are on the node's clock. Plain data, no I/O.

import type { AuthFields } from './credential.js';

/** A reading that either worked or failed with a reason a user can act on. */
export type Reading<T> = { ok: true; value: T } | { ok: false; error: string };

/** Which path read a node: the Talos API over gRPC (nanosecond instants) or talosctl's printed text. */
export type ReadPath = 'api' | 'cli';

/**
 * An instant on the node's clock, known only within the bounds of the reading that produced it.
 * Epoch milliseconds, fractional (a nanosecond API timestamp keeps sub-millisecond digits; a double
 * holds about 0.25 µs at today's epoch). An exact reading has `earliestMs === latestMs`.
 * Each adapter turns what it read into these bounds (docs/talos-evidence-timing.md says how); the
 * evidence rule reasons on the bounds only, so both read paths are judged by one rule.
 */
export interface Instant {
  earliestMs: number;
  latestMs: number;
  via: ReadPath;
  /** what was read: an RFC 3339 timestamp with its digits (API) or the text talosctl printed (CLI) */
  text: string;
}

export interface ServiceEvent {
  state: string;
  message: string;
  /** when the event was logged, on the node's clock (CLI: placed from its "(D ago)" age and the runner window) */
  at: Instant;
}

/** The cri service's state and event history, with the runner's clock read just before and just after the call. */
export interface CriServiceReading {
  via?: ReadPath;
  state: string;
  health: string;
  lastHealthMessage?: string;
  /** in the order read (CLI: newest first; API: oldest first). Never rely on it: order by `at`. */
  events: ServiceEvent[];
  clientBeforeMs: number;
  clientAfterMs: number;
}

/** ServicePIDs.runtime.talos.dev `cri` (Talos >= 1.13), recorded right after the launch. */
export interface ServicePidReading {
  pid: number;
  /** metadata.created: recorded right after the launch, so an upper bound of it */
  created: Instant;
}

/** A config file's presence and modification time (`ls -l` on the CLI path, `MachineService.List` on the API path). */
export interface FileListing {
  path: string;
  exists: boolean;
  /** the LASTMOD cell exactly as printed (CLI) */
  lastModText?: string;
  /**
   * the modification time with its truncation as bounds, present when the file exists (whole seconds
   * on both paths, a minute for an old `ls -l` row: never the ordering instant on the API path)
   */
  mtime?: Instant;
}

/** EtcFileStatuses.files.talos.dev: updated after the controller wrote the file, so an upper bound of the write. */
export interface EtcFileStatusReading {
  id: string;
  /** max(metadata.created, metadata.updated): the status is recorded after the write it describes */
  updated: Instant;
  specVersion?: string;
}

/** `talosctl read PATH` parsed as TOML: the auth entries for each registry host. Never logged. */
export interface FileAuthReading {
  path: string;
  exists: boolean;
  /** host key as in the TOML (`registry-1.docker.io`, `ghcr.io`) → auth fields */
  auth: Record<string, AuthFields>;
}

export interface TimeStatusReading {
  synced: boolean;
  epoch: number;
}

export interface ConfigFileReadings {
  path: string;
  listing: Reading<FileListing>;
  /** absent when the adapter has no etcfilestatus for this path */
  status?: Reading<EtcFileStatusReading>;
  /** absent when the listing said the file does not exist (nothing to read) */
  content?: Reading<FileAuthReading>;
}

export interface EvidenceReadings {
  node: string;
  /** server Tag from `talosctl version`, e.g. `v1.13.8` */
  talosVersion: Reading<string>;
  criService: Reading<CriServiceReading>;
  /** undefined when the node does not offer the resource (Talos < 1.13) */
  servicePid?: Reading<ServicePidReading>;
  files: ConfigFileReadings[];
  timeStatus: Reading<TimeStatusReading>;
}
