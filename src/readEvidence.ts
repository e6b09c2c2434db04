// Gather the evidence readings for one or more nodes: sequencing of adapter calls only.
// The batch reads run concurrently (they are independent and read-only); the file contents are
// read one call per existing file, because talosctl refuses `read` with several nodes.
import type { TalosClient } from './adapters/types.js';
import { errorMessage } from './errors.js';
import type { ConfigFileReadings, EvidenceReadings, Reading } from './model.js';

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
  const [readVersions, services, pids, listings, statuses, times] = await Promise.all([
    unknown.length > 0 ? talos.version(unknown) : Promise.resolve(new Map<string, Reading<string>>()),
    talos.criService(addresses),
    talos.servicePids(addresses),
    talos.listFiles(addresses, paths),
    talos.etcFileStatus(addresses, paths),
    talos.timeStatus(addresses),
  ]);
  const versions = new Map([...(knownVersions ?? []), ...readVersions]);
  // The file contents need one `talosctl read` per node and file; they run a few at a time, since
  // each waits on the network rather than on this machine.
  const contents = new Map<string, ConfigFileReadings['content']>();
  const reads: Array<() => Promise<void>> = [];
  for (const t of targets) {
    for (const path of paths) {
      const listing = listings.get(t.address)?.get(path);
      // A file the listing shows absent has no write time and no content to judge.
      if (listing && listing.ok && !listing.value.exists) continue;
      reads.push(async () => {
        // A read that throws, rather than answering a failed Reading, still counts as a failed reading.
        const content = await talos.readAuth(t.address, path).catch((e: unknown) => ({ ok: false as const, error: errorMessage(e) }));
        contents.set(`${t.address}\n${path}`, content);
      });
    }
  }
  await runLimited(reads, READ_CONCURRENCY);
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

const READ_CONCURRENCY = 8;

/** Run the tasks with at most `limit` in flight. */
async function runLimited(tasks: Array<() => Promise<void>>, limit: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) await tasks[next++]();
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
}
