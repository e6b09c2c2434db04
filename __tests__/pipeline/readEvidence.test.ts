import { describe, expect, it } from 'vitest';
import type { AuthFields, DesiredCredential } from '../../src/core/model/credential.js';
import type { FileAuthReading, Reading } from '../../src/core/model/readings.js';
import { absentPaths, READ_CALLS_IN_FLIGHT, readEvidence } from '../../src/pipeline/readEvidence.js';
import { rebootEvidence } from '../../src/rules/evidence.js';
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
  it('reads the file contents of many nodes concurrently, at most READ_CALLS_IN_FLIGHT at once, one call per node and path not known absent', async () => {
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
    // the first reading reads every path: the listing that says what exists comes after the contents
    const first = await readEvidence(talos, targets, [CRI, PART]);
    expect(talos.calls.filter((c) => c.method === 'readAuth')).toHaveLength(200);
    expect(first.get('w1')!.files.map((f) => f.content?.ok && f.content.value.exists)).toEqual([true, false]);
    // a later one skips the paths the earlier listing showed absent
    const absent = new Map([...first].map(([name, r]) => [targets.find((t) => t.name === name)!.address, absentPaths(r)]));
    talos.calls.length = 0;
    talos.maxInFlight = 0;
    const out = await readEvidence(talos, targets, [CRI, PART], { absent });
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

const NEW: AuthFields = { username: 'ci-bot', password: 'new-secret', auth: '', identitytoken: '' };
const OLD: AuthFields = { username: 'ci-bot', password: 'old-secret', auth: '', identitytoken: '' };
const desired: DesiredCredential = { host: 'ghcr.io', tomlHost: 'ghcr.io', fields: NEW };

/** A FakeTalos whose every call takes a tick, logging when each starts and answers; `onCall` runs as a call starts. */
class OrderedTalos extends FakeTalos {
  readonly log: string[] = [];
  onCall?: (method: string) => void;
  private async timed<T>(method: string, fn: () => Promise<T>): Promise<T> {
    this.log.push(`start ${method}`);
    this.onCall?.(method);
    await new Promise((r) => setTimeout(r, 1));
    const v = await fn();
    this.log.push(`end ${method}`);
    return v;
  }
  override version(a: string[]) {
    return this.timed('version', () => super.version(a));
  }
  override criService(a: string[]) {
    return this.timed('criService', () => super.criService(a));
  }
  override servicePids(a: string[]) {
    return this.timed('servicePids', () => super.servicePids(a));
  }
  override listFiles(a: string[], p: string[]) {
    return this.timed('listFiles', () => super.listFiles(a, p));
  }
  override etcFileStatus(a: string[], p: string[]) {
    return this.timed('etcFileStatus', () => super.etcFileStatus(a, p));
  }
  override timeStatus(a: string[]) {
    return this.timed('timeStatus', () => super.timeStatus(a));
  }
  override readAuth(a: string, p: string) {
    return this.timed('readAuth', () => super.readAuth(a, p));
  }
}

function orderedNode(clock: TestClock): OrderedTalos {
  const talos = new OrderedTalos(clock);
  talos.add({
    name: 'w1',
    address: '10.0.0.1',
    version: 'v1.14.0',
    criPid: 1893,
    // the containerd that ran before the patch: launched 2 h after the old write
    criStartedAtMs: clock.now() - 3_600_000,
    files: { [CRI]: { mtimeMs: clock.now() - 3 * 3_600_000, auth: { 'ghcr.io': { ...OLD } } } },
    synced: true,
    epoch: 0,
  });
  return talos;
}

describe('readEvidence: the readings describe one moment', () => {
  it('reads the cri service first, the contents once it answered, the listing, EtcFileStatus and time status once every content answered', async () => {
    const talos = orderedNode(new TestClock());
    await readEvidence(talos, [{ name: 'w1', address: '10.0.0.1' }], [CRI, PART]);
    const at = (e: string) => talos.log.indexOf(e);
    const lastEnd = (m: string) => talos.log.lastIndexOf(`end ${m}`);
    const firstStart = (m: string) => talos.log.indexOf(`start ${m}`);
    for (const m of ['criService', 'servicePids', 'version']) expect(lastEnd(m)).toBeLessThan(firstStart('readAuth'));
    for (const m of ['listFiles', 'etcFileStatus', 'timeStatus']) expect(firstStart(m)).toBeGreaterThan(lastEnd('readAuth'));
    expect(at('start readAuth')).toBeGreaterThan(-1);
  });

  // The cri.toml write of a patch lands while the evidence is read. Read in this order, the reading
  // either shows the write (after the containerd start it was read with) or not the new content: never
  // the old containerd and old write time beside the new content.
  const writeNew = (talos: FakeTalos, at: number) => {
    const f = talos.nodes.get('10.0.0.1')!.files[CRI];
    f.auth = { 'ghcr.io': { ...NEW } };
    f.mtimeMs = at;
  };

  it('a write landing as the content is read shows in the listing after it: reboot, not a skip of the old containerd', async () => {
    const clock = new TestClock();
    const talos = orderedNode(clock);
    talos.onCall = (m) => {
      if (m === 'readAuth') writeNew(talos, clock.now());
    };
    const r = (await readEvidence(talos, [{ name: 'w1', address: '10.0.0.1' }], [CRI])).get('w1')!;
    const v = rebootEvidence(r, [desired], { marginMs: 10 });
    expect(v.values.files[0].credential).toBe('desired');
    expect(v.verdict).toBe('reboot');
    expect(v.ordering).toBe('before');
  });

  it('a write landing right after the contents were read leaves them old: reboot on the old credential', async () => {
    const clock = new TestClock();
    const talos = orderedNode(clock);
    talos.onCall = (m) => {
      if (m === 'listFiles') writeNew(talos, clock.now());
    };
    const r = (await readEvidence(talos, [{ name: 'w1', address: '10.0.0.1' }], [CRI])).get('w1')!;
    const v = rebootEvidence(r, [desired], { marginMs: 10 });
    expect(v.verdict).toBe('reboot');
    expect(v.reason).toMatch(/holds an old credential/);
  });
});

// An absence seen earlier (before a reboot, or earlier in a boot: Talos answers
// before machined has written the CRI files of the rebuilt /etc) is no fact about the next reading.
// The hint only saves a read: when the listing shows a path whose content it skipped, the node's
// contents and listing are read again without it, in the same order (cri first, then contents, then
// listing), so the reading is complete.
describe('readEvidence: a path skipped as absent that the listing shows is read after all', () => {
  it('the file written since the hint: its content, listing and status come from a second round, after the cri read', async () => {
    const clock = new TestClock();
    const talos = orderedNode(clock);
    // the latest listing showed the part file absent; it has been written since
    talos.nodes.get('10.0.0.1')!.files[PART] = { mtimeMs: clock.now() - 1000, auth: { 'ghcr.io': { ...NEW } } };
    const absent = new Map([['10.0.0.1', new Set([PART])]]);
    const r = (await readEvidence(talos, [{ name: 'w1', address: '10.0.0.1' }], [CRI, PART], { absent })).get('w1')!;
    const part = r.files.find((f) => f.path === PART)!;
    expect(part.listing.ok && part.listing.value.exists).toBe(true);
    expect(part.content?.ok && part.content.value.exists).toBe(true);
    expect(part.status?.ok).toBe(true);
    expect(rebootEvidence(r, [desired], { marginMs: 0 }).incomplete).toBeUndefined();
    // cri once; contents (cri.toml), listing; then both contents again, and the listing again
    const calls = talos.log.filter((e) => e.startsWith('start ')).map((e) => e.slice(6));
    expect(calls.filter((m) => m === 'criService')).toHaveLength(1);
    const lastList = calls.lastIndexOf('listFiles');
    expect(calls.filter((m) => m === 'listFiles')).toHaveLength(2);
    expect(calls.filter((m) => m === 'readAuth')).toHaveLength(3);
    expect(calls.slice(calls.indexOf('listFiles') + 1, lastList).filter((m) => m === 'readAuth')).toHaveLength(2);
    expect(calls.indexOf('criService')).toBeLessThan(calls.indexOf('readAuth'));
  });

  it('a hint the listing confirms costs no second round', async () => {
    const talos = orderedNode(new TestClock());
    const absent = new Map([['10.0.0.1', new Set([PART])]]);
    await readEvidence(talos, [{ name: 'w1', address: '10.0.0.1' }], [CRI, PART], { absent });
    const calls = talos.log.filter((e) => e.startsWith('start ')).map((e) => e.slice(6));
    expect(calls.filter((m) => m === 'readAuth')).toHaveLength(1);
    expect(calls.filter((m) => m === 'listFiles')).toHaveLength(1);
  });
});
