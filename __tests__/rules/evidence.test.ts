// The verdict of src/rules/evidence.ts: what every condition's rows share (the margin, the Talos version),
// a reading that lacks something, and the values it carries. Each condition's rows are in evidence/.
import { describe, expect, it } from 'vitest';
import type { EvidenceReadings } from '../../src/core/model/readings.js';
import { rebootEvidence } from '../../src/rules/evidence.js';
import { apiNode, base, cliNode, CRI, expectRows, ghcr, OLD, PART, type Row, second, T0, W } from './evidence/fixtures.js';

const rows: Row[] = [
  {
    name: 'a negative margin is refused',
    build: () => apiNode(base),
    marginMs: -1,
    verdict: 'reboot',
    ordering: 'after',
    contradicts: false,
    reason: 'the evidence margin (-1 ms) is not a non-negative duration',
  },
  {
    name: 'an unreadable Talos version does not matter to the invariant',
    build: () => apiNode(base),
    mutate: (r) => (r.talosVersion = { ok: false, error: 'x' }),
    verdict: 'skip',
    ordering: 'after',
    contradicts: false,
    reason: /^containerd PID 1893 started/,
  },
];

describe('rebootEvidence: one condition per row (the verdict)', () => {
  expectRows(rows);
});

// A reading that lacks what the rule needs says so (EvidenceVerdict.incomplete),
// with the first such reason, so the proof after a reboot reads it again instead of judging it;
// a reading that has every part but disproves or cannot order is complete.
describe('rebootEvidence: a reading that lacks something is incomplete', () => {
  // as the CLI path lists it (over the API the missing EtcFileStatus is said first: the row below)
  const partNotRead = (r: EvidenceReadings) =>
    r.files.push({ path: PART, listing: { ok: true, value: { path: PART, exists: true, mtime: second(W) } } });
  it.each<[string, (r: EvidenceReadings) => void, string]>([
    ['a file listed whose content was not read', partNotRead, `${PART} exists but was not read, so its credential is unknown`],
    [
      'a file listed but not found when read (written between the two)',
      (r) => (r.files[0].content = { ok: true, value: { path: CRI, exists: false, auth: {} } }),
      `${CRI} was listed but not found when read`,
    ],
    [
      'a file whose read failed',
      (r) => (r.files[0].content = { ok: false, error: 'rpc error: code = Unavailable' }),
      `reading ${CRI} failed: rpc error: code = Unavailable`,
    ],
    [
      'API: an existing file without its EtcFileStatus reading',
      (r) => delete r.files[0].status,
      `${CRI} has no EtcFileStatus reading, and its whole-second modification time cannot order the write`,
    ],
    [
      'no EtcFileStatus yet (recorded a moment after the write)',
      (r) => (r.files[0].status = { ok: false, error: 'rpc error: code = NotFound desc = resource not found' }),
      `the etcfilestatus of ${CRI} could not be read: rpc error: code = NotFound desc = resource not found`,
    ],
    ['a listing that failed', (r) => (r.files[0].listing = { ok: false, error: 'Unavailable' }), `listing ${CRI} failed: Unavailable`],
    [
      'no config file there yet',
      (r) => {
        r.files[0].listing = { ok: true, value: { path: CRI, exists: false } };
        delete r.files[0].content;
        delete r.files[0].status;
      },
      `none of the CRI config files exists (${CRI})`,
    ],
    [
      'the cri service not read',
      (r) => (r.criService = { ok: false, error: 'the node lists no service "cri"' }),
      'the cri service status could not be read: the node lists no service "cri"',
    ],
    ['the ServicePID not read', (r) => (r.servicePid = { ok: false, error: 'NotFound' }), 'the cri ServicePID could not be read: NotFound'],
    [
      'the time status not read',
      (r) => (r.timeStatus = { ok: false, error: 'Unavailable' }),
      'the node time status could not be read: Unavailable',
    ],
  ])('%s', (_what, change, why) => {
    const r = apiNode(base);
    change(r);
    const v = rebootEvidence(r, [ghcr], { marginMs: 0 });
    expect(v.verdict).toBe('reboot');
    expect(v.incomplete).toBe(why);
    // said once in the reasons, even when another check (the clock's) says the same
    expect(v.reason.split(why).length).toBe(2);
  });
  it.each<[string, (r: EvidenceReadings) => void]>([
    ['every reading there: a skip', () => undefined],
    [
      'an old credential: complete, contradicted',
      (r) => r.files[0].content?.ok && (r.files[0].content.value.auth = { 'ghcr.io': { ...OLD } }),
    ],
    ['a clock not synced: complete, undecidable', (r) => (r.timeStatus = { ok: true, value: { synced: false, epoch: 0 } })],
    [
      'an absent file not read: nothing lacks',
      (r) => r.files.push({ path: PART, listing: { ok: true, value: { path: PART, exists: false } } }),
    ],
  ])('%s', (_what, change) => {
    const r = apiNode(base);
    change(r);
    expect(rebootEvidence(r, [ghcr], { marginMs: 0 }).incomplete).toBeUndefined();
  });
});

describe('rebootEvidence: values', () => {
  it('records the gap as bounds, the read path and the instants compared', () => {
    const v = rebootEvidence(apiNode(base), [ghcr], { marginMs: 50 });
    expect(v.values.readPath).toBe('api');
    // a double holds about 0.25 µs at today's epoch
    expect(v.values.gap!.lowMs).toBeCloseTo(98.2, 3);
    expect(v.values.gap!.highMs).toBeCloseTo(100.2, 3);
    expect(v.values.gapMs).toBe(v.values.gap!.lowMs);
    expect(v.values.criStart).toEqual({ earliestMs: W + 98.5, latestMs: W + 100.2 });
    expect(v.values.configWrite).toEqual({ earliestMs: W, latestMs: W + 0.3 });
    expect(v.values).toMatchObject({
      criPid: 1893,
      criState: 'Running',
      criHealth: 'OK',
      criStartSource: '"Creating service runner" … ServicePID',
      configWrittenPath: CRI,
      marginMs: 50,
      timeSynced: true,
      timeEpoch: 0,
      talosVersion: 'v1.14.0',
      files: [{ path: CRI, exists: true, credential: 'desired' }],
    });
  });

  it('CLI bounds hold the true gap, and are wider than the API ones for the same timeline', () => {
    for (const gap of [300, 1200, 2500, 5000, 8700]) {
      const tl = { ...base, L: W + gap, after: T0 + 900 };
      const cli = rebootEvidence(cliNode(tl), [ghcr], { marginMs: 10 }).values.gap!;
      const api = rebootEvidence(apiNode(tl), [ghcr], { marginMs: 10 }).values.gap!;
      expect(cli.lowMs).toBeLessThanOrEqual(gap);
      expect(cli.highMs).toBeGreaterThanOrEqual(gap);
      expect(cli.highMs - cli.lowMs).toBeGreaterThan(api.highMs - api.lowMs);
      expect(rebootEvidence(cliNode(tl), [ghcr], { marginMs: 10 }).values.readPath).toBe('cli');
    }
  });

  it('a slow call widens the CLI bounds instead of shrinking the gap (5 s read during a 3.2 s call)', () => {
    // The old rule anchored "(D ago)" at the runner clock before the call: under load a 5 s gap read as 1.8 s.
    const v = rebootEvidence(cliNode({ ...base, L: W + 5000, after: T0 + 3200 }), [ghcr], { marginMs: 10 });
    const gap = v.values.gap!;
    expect(gap.lowMs).toBeLessThanOrEqual(5000);
    expect(gap.highMs).toBeGreaterThanOrEqual(5000);
    expect(gap.highMs - gap.lowMs).toBeGreaterThan(3200);
    expect(v.reason).toMatch(/started \+\d(\.\d)? s ± \d(\.\d)? s after/);
  });

  it('still records everything on a reboot', () => {
    const r = apiNode(base);
    r.timeStatus = { ok: true, value: { synced: false, epoch: 0 } };
    const v = rebootEvidence(r, [{ ...ghcr, fields: OLD }], { marginMs: 50 });
    expect(v.verdict).toBe('reboot');
    expect(v.contradicts).toBe(true);
    expect(v.values.files[0].credential).toBe('old');
    expect(v.values.timeSynced).toBe(false);
    expect(v.values.gap).toBeDefined();
  });
});
