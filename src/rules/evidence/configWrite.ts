// Evidence rule 3: when the CRI config containerd reads was last written, as bounds, from each file's
// listing (mtime) and its EtcFileStatus.
import { isValidInstant } from '../../core/instants.js';
import type { ConfigFileReadings, EvidenceReadings, Instant, ReadPath } from '../../core/model/readings.js';
import type { EvidenceValues } from '../../core/model/verdict.js';
import { iso, type WriteInstant } from './bounds.js';
import type { Collector } from './collector.js';

/**
 * Rule 3 — when the CRI config was last written, as bounds.
 *
 * For every configured path the listing must be ok (a failed `ls` is not "missing"). A missing file is
 * reported, not an error (01-registries.part is gone on Talos 1.14); its status and content are not
 * consulted. For an existing file:
 * - EtcFileStatus `updated` is recorded after the controller wrote the file: the write's LATEST.
 *   A status reading that was taken must be ok.
 * - The mtime is the write itself, truncated: the write's EARLIEST, and on the CLI path (whole-second
 *   readings everywhere) also a latest (mtime + precision − 1), the later of the two counting.
 * - On the API path the whole-second mtime never orders anything; it only contradicts: an mtime
 *   provably later than the status means something other than the controller wrote the file after
 *   the status → reboot. With no status there, nothing bounds the write finely → reboot.
 * The config's last write is the newest over existing files; at least one must exist.
 */
export function configLastWrite(
  r: EvidenceReadings,
  values: EvidenceValues,
  c: Collector,
  fileValues: Map<ConfigFileReadings, EvidenceValues['files'][number]>,
): { latest?: WriteInstant; perFile: WriteInstant[] } {
  const perFile: WriteInstant[] = [];
  let existing = 0;
  let complete = true;
  if (r.files.length === 0) c.fail('no CRI config paths were given, so nothing says what containerd read');

  for (const f of r.files) {
    const entry: EvidenceValues['files'][number] = { path: f.path };
    values.files.push(entry);
    fileValues.set(f, entry);
    if (!f.listing.ok) {
      c.missing(`listing ${f.path} failed: ${f.listing.error}`);
      complete = false;
      continue;
    }
    const l = f.listing.value;
    entry.exists = l.exists;
    if (l.lastModText !== undefined) entry.lastMod = l.lastModText;
    else if (l.mtime) entry.lastMod = l.mtime.text;
    if (!l.exists) continue;
    existing++;
    const printed = l.lastModText ?? l.mtime?.text ?? 'missing';
    if (!isValidInstant(l.mtime)) {
      c.fail(`the modification time of ${f.path} could not be parsed (${printed})`);
      complete = false;
      continue;
    }
    const mtime = l.mtime;
    let status: Instant | undefined;
    if (f.status !== undefined) {
      if (!f.status.ok) c.missing(`the etcfilestatus of ${f.path} could not be read: ${f.status.error}`);
      else if (!isValidInstant(f.status.value.updated)) c.fail(`the etcfilestatus of ${f.path} could not be parsed`);
      else {
        status = f.status.value.updated;
        entry.updated = status.text;
      }
      if (!status) {
        complete = false;
        continue;
      }
    }
    let latestMs: number;
    const via: ReadPath[] = [mtime.via];
    if (status?.via === 'api') {
      via.splice(0, 1, 'api');
      if (mtime.earliestMs > status.latestMs) {
        c.fail(
          `${f.path} was modified at ${mtime.text}, after its EtcFileStatus was recorded (${status.text}): ` +
            'something other than the Talos controller wrote it, so its last write is not bounded',
        );
        complete = false;
        continue;
      }
      latestMs = status.latestMs;
    } else if (mtime.via === 'api' && !status) {
      c.missing(`${f.path} has no EtcFileStatus reading, and its whole-second modification time cannot order the write`);
      complete = false;
      continue;
    } else {
      latestMs = status ? Math.max(mtime.latestMs, status.latestMs) : mtime.latestMs;
      if (status) via.push(status.via);
    }
    const w: WriteInstant = { earliestMs: Math.min(mtime.earliestMs, latestMs), latestMs, path: f.path, via };
    entry.latestWrite = iso(w.latestMs);
    perFile.push(w);
  }

  if (r.files.length > 0 && existing === 0 && r.files.every((f) => f.listing.ok)) {
    c.missing(`none of the CRI config files exists (${r.files.map((f) => f.path).join(', ')})`);
  }
  if (!complete || perFile.length === 0) return { perFile };
  // the newest write over all files: its latest is the max of the latests, its earliest the max of the earliests
  const newest = perFile.reduce((a, b) => (b.latestMs > a.latestMs ? b : a));
  const latest: WriteInstant = {
    earliestMs: Math.max(...perFile.map((w) => w.earliestMs)),
    latestMs: newest.latestMs,
    path: newest.path,
    via: perFile.flatMap((w) => w.via),
  };
  values.configWrittenLatest = iso(latest.latestMs);
  values.configWrittenEarliest = iso(latest.earliestMs);
  values.configWrittenPath = latest.path;
  values.configWrite = { earliestMs: latest.earliestMs, latestMs: latest.latestMs };
  return { latest, perFile };
}
