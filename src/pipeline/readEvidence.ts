// Gather the evidence readings for one or more nodes: sequencing of adapter calls only.
//
// The rule (src/rules/evidence.ts) compares readings taken by separate calls, so they must describe
// one moment as far as the comparison goes. Talos writes cri.toml on its own schedule (after an
// ApplyConfiguration has returned, docs/talos-evidence-timing.md), so a write may land between two
// calls. The calls therefore run in three waves, each starting when the one before has answered:
//
//   1. the cri service (events, ServicePID) and the Talos version;
//   2. the content of every config file (one call per node and file: talosctl refuses `read` with
//      several nodes);
//   3. the listing (mtime), the EtcFileStatus and the time status.
//
// Why that order makes a skip sound: the rule skips only when containerd's launch S is after the last
// write W that wave 3 sees. Wave 3 answered after wave 2, so no write happened between W and wave 3;
// if W were after the content read, then S > W > content read > cri read ≥ S, impossible. So in a skip
// W precedes the content read, nothing was written from W on, and the content read is the content
// containerd loaded at S. A write that straddles the waves either shows in wave 3 (newer than the
// content read, and after S, which was read first: no skip) or lands after wave 3 (the content read is
// then of the older bytes, which the rule judges as read). Either way it errs toward reboot. Reading
// the listing before the content, as a single concurrent wave did, paired an old write time with new
// content: the skip of a containerd that had not loaded it. What the order leaves open is written in
// docs/talos-evidence-timing.md (the EtcFileStatus recorded a moment after its write).
//
// The cost is latency, not calls: the same batch calls, in three rounds instead of two. Contents are
// read before the listing says which files exist, so a file that is not there is read too (answering
// NotFound), unless an earlier listing of the node this run showed it absent (`absent`). That hint
// only saves a read, never makes a reading incomplete: an absence seen earlier is no fact about now
// (/etc is rebuilt at every boot and written by machined's controllers on their own schedule, after
// the node already answers), so when wave 3 lists a path whose content the hint skipped, waves 2 and
// 3 are read again for that node without the hint (the order above still holds: wave 1, then the
// contents, then the listing). A file that appears between the contents and the listing of that
// second round is a reading the rule calls incomplete (EvidenceVerdict.incomplete).
// At most READ_CALLS_IN_FLIGHT content reads are in flight, so a plan over 500 nodes neither waits on
// a handful at a time nor opens a thousand at once.
import type { TalosClient } from '../adapters/types.js';
import { pool } from '../core/async.js';
import { ServerIdentityError, errorMessage } from '../core/errors.js';
import type { ConfigFileReadings, EvidenceReadings, FileListing, Reading } from '../core/model/readings.js';

export interface EvidenceTarget {
  name: string;
  address: string;
}

/** What earlier readings of this run already say, by address (both only save calls). */
export interface EvidenceHints {
  /** Talos versions already read: a version changes only with an upgrade, which this action never does */
  versions?: Map<string, Reading<string>>;
  /** paths the node's latest listing showed absent: their content is read only once a listing shows them (see above) */
  absent?: Map<string, ReadonlySet<string>>;
}

function missing<T>(what: string): Reading<T> {
  return { ok: false, error: `no ${what} reading was returned for this node` };
}

export async function readEvidence(
  talos: TalosClient,
  targets: EvidenceTarget[],
  paths: string[],
  hints: EvidenceHints = {},
): Promise<Map<string, EvidenceReadings>> {
  const addresses = targets.map((t) => t.address);
  const unknown = addresses.filter((a) => !hints.versions?.get(a)?.ok);
  // wave 1: the containerd that runs
  const [readVersions, services, pids] = await Promise.all([
    unknown.length > 0 ? talos.version(unknown) : Promise.resolve(new Map<string, Reading<string>>()),
    talos.criService(addresses),
    talos.servicePids(addresses),
  ]);
  // wave 2: what the files hold; wave 3: when they were last written, and whether the clock can be trusted
  const contents = await readContents(talos, targets, paths, hints.absent);
  const [listings, statuses, times] = await readWrites(talos, addresses, paths);
  // a path skipped as absent that the listing shows: read the node's waves 2 and 3 again, without the hint
  const stale = targets.filter((t) => paths.some((p) => hints.absent?.get(t.address)?.has(p) && listed(listings, t.address, p)));
  if (stale.length > 0) {
    const again = await readContents(talos, stale, paths, undefined);
    const [l, s, t] = await readWrites(
      talos,
      stale.map((x) => x.address),
      paths,
    );
    for (const x of stale) for (const p of paths) contents.delete(`${x.address}\n${p}`);
    for (const [k, v] of again) contents.set(k, v);
    for (const [a, v] of l) listings.set(a, v);
    for (const [a, v] of s) statuses.set(a, v);
    for (const [a, v] of t) times.set(a, v);
  }
  const versions = new Map([...(hints.versions ?? []), ...readVersions]);
  const out = new Map<string, EvidenceReadings>();
  for (const t of targets) {
    const files: ConfigFileReadings[] = [];
    for (const path of paths) {
      const listing = listings.get(t.address)?.get(path) ?? missing(`ls -l ${path}`);
      const entry: ConfigFileReadings = { path, listing };
      const content = contents.get(`${t.address}\n${path}`);
      if (content) {
        const status = statuses.get(t.address)?.get(path);
        if (status) entry.status = status;
        entry.content = content;
      }
      files.push(entry);
    }
    const readings: EvidenceReadings = {
      node: t.name,
      talosVersion: versions.get(t.address) ?? missing('talosctl version'),
      criService: services.get(t.address) ?? missing('talosctl service cri'),
      files,
      timeStatus: times.get(t.address) ?? missing('timestatus'),
    };
    // A key mapped to undefined means the node does not offer ServicePIDs (Talos < 1.13): no cross-check.
    if (!pids.has(t.address)) readings.servicePid = missing('servicepids');
    else if (pids.get(t.address)) readings.servicePid = pids.get(t.address);
    out.set(t.name, readings);
  }
  return out;
}

/** Wave 3: the listing (mtime), the EtcFileStatus and the time status. */
function readWrites(talos: TalosClient, addresses: string[], paths: string[]) {
  return Promise.all([talos.listFiles(addresses, paths), talos.etcFileStatus(addresses, paths), talos.timeStatus(addresses)]);
}

function listed(listings: Map<string, Map<string, Reading<FileListing>>>, address: string, path: string): boolean {
  const l = listings.get(address)?.get(path);
  return l?.ok === true && l.value.exists;
}

/** The paths a reading's listing showed absent (for EvidenceHints.absent of the node's next reading). */
export function absentPaths(r: EvidenceReadings): Set<string> {
  return new Set(r.files.filter((f) => f.listing.ok && !f.listing.value.exists).map((f) => f.path));
}

/** How many content reads may be in flight at once (they wait on the network, not on this machine). */
export const READ_CALLS_IN_FLIGHT = 32;

/** One read per node and path not known absent, keyed `address\npath`. */
async function readContents(
  talos: TalosClient,
  targets: EvidenceTarget[],
  paths: string[],
  absent: EvidenceHints['absent'],
): Promise<Map<string, ConfigFileReadings['content']>> {
  const contents = new Map<string, ConfigFileReadings['content']>();
  const reads: Array<() => Promise<void>> = [];
  for (const t of targets) {
    for (const path of paths) {
      if (absent?.get(t.address)?.has(path)) continue;
      reads.push(async () => {
        // A read that throws, rather than answering a failed Reading, still counts as a failed reading;
        // a server whose certificate was refused is no reading at all: it stops the run.
        const content = await talos.readAuth(t.address, path).catch((e: unknown) => {
          if (e instanceof ServerIdentityError) throw e;
          return { ok: false as const, error: errorMessage(e) };
        });
        contents.set(`${t.address}\n${path}`, content);
      });
    }
  }
  await pool(reads, READ_CALLS_IN_FLIGHT, (read) => read());
  return contents;
}
