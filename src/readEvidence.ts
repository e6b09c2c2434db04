// Gather the evidence readings for one or more nodes: sequencing of adapter calls only.
// The batch reads run concurrently (they are independent and read-only); the file contents are
// read one call per existing file, because talosctl refuses `read` with several nodes.
import type { TalosClient } from './adapters/types.js';
import type { ConfigFileReadings, EvidenceReadings, Reading } from './model.js';

export interface EvidenceTarget {
  name: string;
  address: string;
}

function missing<T>(what: string): Reading<T> {
  return { ok: false, error: `no ${what} reading was returned for this node` };
}

export async function readEvidence(talos: TalosClient, targets: EvidenceTarget[], paths: string[]): Promise<Map<string, EvidenceReadings>> {
  const addresses = targets.map((t) => t.address);
  const [versions, services, pids, listings, statuses, times] = await Promise.all([
    talos.version(addresses),
    talos.criService(addresses),
    talos.servicePids(addresses),
    talos.listFiles(addresses, paths),
    talos.etcFileStatus(addresses, paths),
    talos.timeStatus(addresses),
  ]);
  const out = new Map<string, EvidenceReadings>();
  for (const t of targets) {
    const files: ConfigFileReadings[] = [];
    for (const path of paths) {
      const listing = listings.get(t.address)?.get(path) ?? missing(`ls -l ${path}`);
      const entry: ConfigFileReadings = { path, listing };
      // A file the listing shows absent has no write time and no content to judge.
      if (!listing.ok || listing.value.exists) {
        const status = statuses.get(t.address)?.get(path);
        if (status) entry.status = status;
        entry.content = await talos.readAuth(t.address, path);
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
