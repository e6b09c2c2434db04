import { describe, expect, it } from 'vitest';
import type { FileAuthReading, Reading } from '../../src/model.js';
import { READ_CALLS_IN_FLIGHT, readEvidence } from '../../src/readEvidence.js';
import { TestClock } from '../fakes/clock.js';
import { FakeTalos } from '../fakes/fakeTalos.js';

const CRI = '/etc/cri/conf.d/cri.toml';
const PART = '/etc/cri/conf.d/01-registries.part';

/** A FakeTalos whose content reads take real time, counting how many overlap. */
class SlowReads extends FakeTalos {
  inFlight = 0;
  maxInFlight = 0;
  override async readAuth(address: string, path: string): Promise<Reading<FileAuthReading>> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    await new Promise((r) => setTimeout(r, 2));
    this.inFlight--;
    return super.readAuth(address, path);
  }
}

describe('readEvidence', () => {
  it('reads the file contents of many nodes concurrently, at most READ_CALLS_IN_FLIGHT at once, one call per node and existing file', async () => {
    const clock = new TestClock();
    const talos = new SlowReads(clock);
    const targets = Array.from({ length: 100 }, (_, i) => ({ name: `w${i}`, address: `10.0.${i >> 8}.${i & 255}` }));
    for (const t of targets) {
      talos.add({
        name: t.name,
        address: t.address,
        version: 'v1.13.9',
        criPid: 1000,
        criStartedAtMs: clock.now() - 60_000,
        // half the nodes have no part file (Talos 1.14): nothing to read there
        files:
          Number(t.name.slice(1)) % 2
            ? { [CRI]: { mtimeMs: clock.now() - 90_000, auth: {} } }
            : {
                [CRI]: { mtimeMs: clock.now() - 90_000, auth: {} },
                [PART]: { mtimeMs: clock.now() - 90_000, auth: {} },
              },
        synced: true,
        epoch: 0,
      });
    }
    const out = await readEvidence(talos, targets, [CRI, PART]);
    expect(out.size).toBe(100);
    expect(talos.maxInFlight).toBe(READ_CALLS_IN_FLIGHT);
    const reads = talos.calls.filter((c) => c.method === 'readAuth');
    expect(reads).toHaveLength(150);
    // every batch read is one call for all nodes (the CLI adapter batches; the API adapter fans out per node itself)
    for (const m of ['criService', 'servicePids', 'listFiles', 'etcFileStatus', 'timeStatus', 'version']) {
      expect(talos.calls.filter((c) => c.method === m)).toHaveLength(1);
    }
    expect(out.get('w1')!.files.map((f) => f.content?.ok)).toEqual([true, undefined]);
  });
});
