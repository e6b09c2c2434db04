// Gather the evidence readings for one or more nodes: sequencing of adapter calls only.
// Every read is independent and read-only, so all of them run at once: the batch reads (one
// talosctl process for all nodes on the CLI path, one call per node on the API path) and, as soon
// as the listings say which files exist, the file contents (one call per node and file, since
// talosctl refuses `read` with several nodes). At most READ_CALLS_IN_FLIGHT content reads are in
// flight, so a plan over 500 nodes neither waits on a handful at a time nor opens a thousand at once.
import type { TalosClient } from './adapters/types.js';
import { ServerIdentityError, errorMessage } from './errors.js';
import type { ConfigFileReadings, EvidenceReadings, FileListing, Reading } from './model.js';

export interface EvidenceTarget {
  name: string;
  address: string;
}

function missing<T>(what: string): Reading<T> {
  return { ok: false, error: `no ${what} reading was returned for this node` };
}

export async function readEvidence(
  talos: TalosClient,
  targets: EvidenceTarget[],
  paths: string[],
  /** Talos versions already read this run (by address): a version changes only with an upgrade, which
   * this action never does, so one answer serves every later reading of the node */
  knownVersions?: Map<string, Reading<string>>,
): Promise<Map<string, EvidenceReadings>> {
  const addresses = targets.map((t) => t.address);
  const unknown = addresses.filter((a) => !knownVersions?.get(a)?.ok);
  const listingsRead = talos.listFiles(addresses, paths);
  const [readVersions, services, pids, listings, statuses, times, contents] = await Promise.all([
    unknown.length > 0 ? talos.version(unknown) : Promise.resolve(new Map<string, Reading<string>>()),
    talos.criService(addresses),
    talos.servicePids(addresses),
    listingsRead,
    talos.etcFileStatus(addresses, paths),
    talos.timeStatus(addresses),
    listingsRead.then((l) => readContents(talos, targets, paths, l)),
  ]);
  const versions = new Map([...(knownVersions ?? []), ...readVersions]);
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

/** How many content reads may be in flight at once (they wait on the network, not on this machine). */
export const READ_CALLS_IN_FLIGHT = 32;

/** One read per node and existing file, keyed `address\npath`. */
async function readContents(
  talos: TalosClient,
  targets: EvidenceTarget[],
  paths: string[],
  listings: Map<string, Map<string, Reading<FileListing>>>,
): Promise<Map<string, ConfigFileReadings['content']>> {
  const contents = new Map<string, ConfigFileReadings['content']>();
  const reads: Array<() => Promise<void>> = [];
  for (const t of targets) {
    for (const path of paths) {
      const listing = listings.get(t.address)?.get(path);
      // A file the listing shows absent has no write time and no content to judge.
      if (listing && listing.ok && !listing.value.exists) continue;
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
  await runLimited(reads, READ_CALLS_IN_FLIGHT);
  return contents;
}

/** Run the tasks with at most `limit` in flight. */
async function runLimited(tasks: Array<() => Promise<void>>, limit: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) await tasks[next++]();
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
}
