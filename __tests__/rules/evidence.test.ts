import { describe, expect, it } from 'vitest';
import type { AuthFields, DesiredCredential, EvidenceReadings } from '../../src/model.js';
import { isTalosAtLeast, rebootEvidence } from '../../src/rules/evidence.js';

// Base scenario (passes): Talos 1.13 node, config written 3 h ago at W, containerd started 10 s later.
const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;
const T0 = Date.UTC(2026, 7, 20, 12, 0, 0); // runner clock just before `talosctl service cri`
const W = T0 - 3 * H; // both config files written (mtime, truncated to the second)
const START = W + 10 * S; // containerd launched
const CRI = '/etc/cri/conf.d/cri.toml';
const PART = '/etc/cri/conf.d/01-registries.part';

const NEW: AuthFields = { username: 'ci-bot', password: 'new-secret-token', auth: '', identitytoken: '' };
const OLD: AuthFields = { username: 'ci-bot', password: 'old-secret-token', auth: '', identitytoken: '' };
const ghcr: DesiredCredential = { host: 'ghcr.io', tomlHost: 'ghcr.io', fields: NEW };

function base(): EvidenceReadings {
  const ago = T0 - START; // 2h59m50s, whole seconds like talosctl prints
  return {
    node: 'w1',
    talosVersion: { ok: true, value: 'v1.13.8' },
    criService: {
      ok: true,
      value: {
        state: 'Running',
        health: 'OK',
        events: [
          { state: 'Running', message: 'Health check successful', agoMs: ago - S },
          {
            state: 'Running',
            message:
              'Process Process(["/bin/containerd" "--address" "/run/containerd/containerd.sock" "--config" "/etc/cri/containerd.toml"]) started with PID 1893',
            agoMs: ago,
          },
          { state: 'Preparing', message: 'Creating service runner', agoMs: ago },
          { state: 'Preparing', message: 'Running pre state', agoMs: ago },
          { state: 'Starting', message: 'Starting service', agoMs: ago + 3 * S },
        ],
        clientBeforeMs: T0,
        clientAfterMs: T0 + 300,
      },
    },
    servicePid: { ok: true, value: { pid: 1893, createdMs: START } },
    files: [
      {
        path: CRI,
        listing: { ok: true, value: { path: CRI, exists: true, lastModText: 'Aug 20 09:00:00', mtimeMs: W, precisionMs: S } },
        status: { ok: true, value: { id: 'cri/conf.d/cri.toml', updatedMs: W, specVersion: '3' } },
        content: { ok: true, value: { path: CRI, exists: true, auth: { 'ghcr.io': { ...NEW }, 'quay.io': { ...OLD } } } },
      },
      {
        path: PART,
        listing: { ok: true, value: { path: PART, exists: true, lastModText: 'Aug 20 09:00:00', mtimeMs: W, precisionMs: S } },
        content: { ok: true, value: { path: PART, exists: true, auth: { 'ghcr.io': { ...NEW } } } },
      },
    ],
    timeStatus: { ok: true, value: { synced: true, epoch: 0 } },
  };
}

type Row = {
  name: string;
  mutate: (r: EvidenceReadings) => void;
  desired?: DesiredCredential;
  marginMs?: number;
  verdict: 'skip' | 'reboot';
  reason: string | RegExp;
};

const cri = (r: EvidenceReadings) => {
  if (!r.criService.ok) throw new Error('fixture');
  return r.criService.value;
};
const startEvent = (r: EvidenceReadings) => cri(r).events[1];
const listing = (r: EvidenceReadings, i: number) => {
  const l = r.files[i].listing;
  if (!l.ok) throw new Error('fixture');
  return l.value;
};
const dropStartEvent = (r: EvidenceReadings) => {
  cri(r).events.splice(1, 1);
};

const rows: Row[] = [
  {
    name: 'base: containerd started after the last write and the config carries the desired credential',
    mutate: () => {},
    verdict: 'skip',
    // earliest start = ServicePID created − 1 s = W + 9 s; latest write = W + 999 ms → gap 8001 ms
    reason: `containerd PID 1893 started 8.0 s after the last config write (${CRI}) and the config carries the desired credential for ghcr.io`,
  },
  // --- rule 1: the cri service
  {
    name: 'cri reading failed',
    mutate: (r) => (r.criService = { ok: false, error: 'rpc error: code = Unavailable' }),
    verdict: 'reboot',
    reason: 'the cri service status could not be read: rpc error: code = Unavailable',
  },
  {
    name: 'cri not Running',
    mutate: (r) => (cri(r).state = 'Waiting'),
    verdict: 'reboot',
    reason: 'the cri service is Waiting, not Running',
  },
  {
    name: 'cri health not OK',
    mutate: (r) => (cri(r).health = 'Fail'),
    verdict: 'reboot',
    reason: 'the cri service is Running but its health is Fail, not OK',
  },
  {
    name: 'cri health unknown (?)',
    mutate: (r) => (cri(r).health = '?'),
    verdict: 'reboot',
    reason: 'the cri service is Running but its health is ?, not OK',
  },
  // --- rule 2: the start
  {
    name: 'negative ago: the start lies in the future',
    mutate: (r) => (startEvent(r).agoMs = -4 * S),
    verdict: 'reboot',
    reason:
      "the containerd start event (PID 1893) lies 4.0 s in the runner's future: the node clock is ahead or stepped, so its timestamps cannot be ordered",
  },
  {
    name: 'unparseable ago',
    mutate: (r) => (startEvent(r).agoMs = Number.NaN),
    verdict: 'reboot',
    reason: 'the age of the containerd start event (PID 1893) could not be parsed',
  },
  {
    name: 'no start event in the history and no ServicePID (Talos < 1.13)',
    mutate: (r) => {
      dropStartEvent(r);
      r.servicePid = undefined;
    },
    verdict: 'reboot',
    reason: "no 'started with PID' event in the cri history (64 events kept) and the node offers no ServicePID",
  },
  {
    name: 'no start event in the history, ServicePID alone proves the start',
    mutate: dropStartEvent,
    verdict: 'skip',
    reason: `containerd PID 1893 started 8.0 s after the last config write (${CRI}) and the config carries the desired credential for ghcr.io`,
  },
  {
    name: 'no start event in the history, ServicePID failed',
    mutate: (r) => {
      dropStartEvent(r);
      r.servicePid = { ok: false, error: 'resource "servicepids" is not registered' };
    },
    verdict: 'reboot',
    reason: 'the cri ServicePID could not be read: resource "servicepids" is not registered',
  },
  {
    name: 'start event alone (Talos < 1.13) proves the start',
    mutate: (r) => (r.servicePid = undefined),
    verdict: 'skip',
    // earliest = T0 − ago − 500 ms = START − 500 ms; latest write W + 999 ms → gap 8501 ms
    reason: `containerd PID 1893 started 8.5 s after the last config write (${CRI}) and the config carries the desired credential for ghcr.io`,
  },
  {
    name: 'ServicePID reading failed while the event exists',
    mutate: (r) => (r.servicePid = { ok: false, error: 'permission denied' }),
    verdict: 'reboot',
    reason: 'the cri ServicePID could not be read: permission denied',
  },
  {
    name: 'PID mismatch between event and ServicePID',
    mutate: (r) => (r.servicePid = { ok: true, value: { pid: 2001, createdMs: START } }),
    verdict: 'reboot',
    reason: 'ambiguous containerd start: the newest start event names PID 1893 but ServicePID names PID 2001',
  },
  {
    name: 'event and ServicePID instants disagree by more than 2 s + call duration',
    mutate: (r) => (r.servicePid = { ok: true, value: { pid: 1893, createdMs: START + 3 * S } }),
    verdict: 'reboot',
    reason: 'ambiguous containerd start: the start event and ServicePID for PID 1893 disagree by 3.0 s (more than 2.3 s)',
  },
  {
    name: 'event and ServicePID instants 2 s apart agree (tolerance 2 s + 300 ms call)',
    mutate: (r) => (r.servicePid = { ok: true, value: { pid: 1893, createdMs: START + 2 * S } }),
    verdict: 'skip',
    reason: /^containerd PID 1893 started 8\.5 s after/, // the earlier of the two earliest instants: the event's
  },
  {
    name: 'the newest start event wins (an older one from before a restart is ignored)',
    mutate: (r) => {
      const c = cri(r);
      c.events.push({ state: 'Running', message: 'Process Process([...]) started with PID 1200', agoMs: T0 - W + 60 * S });
    },
    verdict: 'skip',
    reason: /^containerd PID 1893 started/,
  },
  {
    name: 'the newest start event is chosen by its age, not its position (events listed oldest first)',
    mutate: (r) => {
      const c = cri(r);
      // An older process (PID 1200, before a restart) listed FIRST: position would pick it.
      c.events.reverse();
      c.events.unshift({ state: 'Running', message: 'Process Process([...]) started with PID 1200', agoMs: T0 - W + 60 * S });
    },
    verdict: 'skip',
    reason: /^containerd PID 1893 started/,
  },
  {
    name: 'two start events of the same age with different PIDs cannot be ordered',
    mutate: (r) => {
      const c = cri(r);
      c.events.splice(2, 0, { state: 'Running', message: 'Process Process([...]) started with PID 1200', agoMs: startEvent(r).agoMs });
    },
    verdict: 'reboot',
    reason: /^ambiguous containerd start: the start events of PID 1893 and PID 1200 cannot be ordered/,
  },
  {
    name: 'the runner clock went backwards during the call',
    mutate: (r) => (cri(r).clientAfterMs = T0 - 5 * S),
    verdict: 'reboot',
    reason: 'the runner clock went backwards around `talosctl service cri`, so the start age cannot be placed',
  },
  // --- rule 3: the last write
  {
    name: 'a listing failed',
    mutate: (r) => (r.files[1].listing = { ok: false, error: 'permission denied' }),
    verdict: 'reboot',
    reason: `listing ${PART} failed: permission denied`,
  },
  {
    name: 'an unparseable LASTMOD',
    mutate: (r) => {
      const l = listing(r, 0);
      l.lastModText = 'garbage';
      l.mtimeMs = undefined;
    },
    verdict: 'reboot',
    reason: `the modification time of ${CRI} could not be parsed (garbage)`,
  },
  {
    name: 'etcfilestatus failed',
    mutate: (r) => (r.files[0].status = { ok: false, error: 'unexpected output' }),
    verdict: 'reboot',
    reason: `the etcfilestatus of ${CRI} could not be read: unexpected output`,
  },
  {
    name: 'etcfilestatus updated later than the mtime raises the latest write (same second as the start → reboot)',
    mutate: (r) => (r.files[0].status = { ok: true, value: { id: 'cri/conf.d/cri.toml', updatedMs: START } }),
    verdict: 'reboot',
    reason: /^containerd \(PID 1893\) may have started before the last write of \/etc\/cri\/conf\.d\/cri\.toml/,
  },
  {
    name: 'no config file exists',
    mutate: (r) => {
      for (const f of r.files) {
        f.listing = { ok: true, value: { path: f.path, exists: false } };
        f.content = undefined;
      }
    },
    verdict: 'reboot',
    reason: `none of the CRI config files exists (${CRI}, ${PART})`,
  },
  {
    name: 'only cri.toml exists (Talos 1.14 has no part file): missing part is reported, not an error',
    mutate: (r) => {
      r.files[1].listing = { ok: true, value: { path: PART, exists: false } };
      r.files[1].content = undefined;
    },
    verdict: 'skip',
    reason: /^containerd PID 1893 started 8\.0 s after the last config write \(\/etc\/cri\/conf\.d\/cri\.toml\)/,
  },
  {
    name: 'the part file written later than cri.toml is the latest write',
    mutate: (r) => {
      const l = listing(r, 1);
      l.mtimeMs = W + 5 * S;
    },
    verdict: 'skip',
    reason: `containerd PID 1893 started 3.0 s after the last config write (${PART}) and the config carries the desired credential for ghcr.io`,
  },
  {
    name: 'a file older than six months: minute precision, start 30 s after the minute → cannot be ordered',
    mutate: (r) => older(r, 30 * S),
    verdict: 'reboot',
    reason: /^containerd \(PID 1893\) may have started before the last write of \/etc\/cri\/conf\.d\/cri\.toml/,
  },
  {
    name: 'a file older than six months: start 2 min after the minute → skip',
    mutate: (r) => older(r, 2 * MIN),
    verdict: 'skip',
    // earliest start = minute + 120 s − 1 s; latest write = minute + 59.999 s → gap 59.001 s
    reason: /^containerd PID 1893 started 59\.0 s after the last config write/,
  },
  // --- rule 4: the credential
  {
    name: 'an existing file was not read',
    mutate: (r) => (r.files[0].content = undefined),
    verdict: 'reboot',
    reason: `${CRI} exists but was not read, so its credential is unknown`,
  },
  {
    name: 'reading a file failed',
    mutate: (r) => (r.files[0].content = { ok: false, error: 'permission denied (needs os:admin)' }),
    verdict: 'reboot',
    reason: `reading ${CRI} failed: permission denied (needs os:admin)`,
  },
  {
    name: 'unparseable TOML',
    mutate: (r) => (r.files[1].content = { ok: false, error: 'TOML parse error at line 3' }),
    verdict: 'reboot',
    reason: `reading ${PART} failed: TOML parse error at line 3`,
  },
  {
    name: 'old credential in a recently written file (rebooted after the OLD credential was written)',
    mutate: (r) => {
      const c = r.files[0].content;
      if (c?.ok) c.value.auth['ghcr.io'] = { ...OLD };
    },
    verdict: 'reboot',
    reason: `${CRI} holds an old credential for ghcr.io`,
  },
  {
    name: 'cri.toml without an entry for the host, the part file agreeing is not enough',
    mutate: (r) => {
      const c = r.files[0].content;
      if (c?.ok) delete c.value.auth['ghcr.io'];
    },
    verdict: 'reboot',
    reason: `${CRI} has no auth entry for ghcr.io`,
  },
  {
    name: 'old credential only in the part file',
    mutate: (r) => {
      const c = r.files[1].content;
      if (c?.ok) c.value.auth['ghcr.io'] = { ...OLD };
    },
    verdict: 'reboot',
    reason: `${PART} holds an old credential for ghcr.io`,
  },
  {
    name: 'only the identitytoken differs',
    mutate: (r) => {
      const c = r.files[0].content;
      if (c?.ok) c.value.auth['ghcr.io'] = { ...NEW, identitytoken: 'x' };
    },
    verdict: 'reboot',
    reason: `${CRI} holds an old credential for ghcr.io`,
  },
  {
    name: 'docker.io: the entry lives under registry-1.docker.io',
    desired: { host: 'docker.io', tomlHost: 'registry-1.docker.io', fields: NEW },
    mutate: (r) => {
      for (const f of r.files) if (f.content?.ok) f.content.value.auth = { 'registry-1.docker.io': { ...NEW } };
    },
    verdict: 'skip',
    reason: /desired credential for registry-1\.docker\.io$/,
  },
  {
    name: 'docker.io: an entry under "docker.io" is not what containerd uses',
    desired: { host: 'docker.io', tomlHost: 'registry-1.docker.io', fields: NEW },
    mutate: (r) => {
      for (const f of r.files) if (f.content?.ok) f.content.value.auth = { 'docker.io': { ...NEW } };
    },
    verdict: 'reboot',
    reason: `${CRI} has no auth entry for registry-1.docker.io`,
  },
  // --- rule 5: the clock
  {
    name: 'time status failed',
    mutate: (r) => (r.timeStatus = { ok: false, error: 'unparseable' }),
    verdict: 'reboot',
    reason: 'the node time status could not be read: unparseable',
  },
  {
    name: 'clock not synced',
    mutate: (r) => (r.timeStatus = { ok: true, value: { synced: false, epoch: 0 } }),
    verdict: 'reboot',
    reason: 'the node clock is not synced',
  },
  {
    name: 'epoch 1',
    mutate: (r) => (r.timeStatus = { ok: true, value: { synced: true, epoch: 1 } }),
    verdict: 'reboot',
    reason: 'the node clock jumped by more than 15 minutes since boot (time epoch 1)',
  },
  {
    name: "a file written in the runner's future",
    mutate: (r) => {
      listing(r, 1).mtimeMs = T0 + 10 * S;
    },
    verdict: 'reboot',
    reason: `${PART} was written up to 2026-08-20T12:00:10.999Z, after the runner's now (2026-08-20T12:00:00.300Z): the node clock is ahead or stepped`,
  },
  {
    name: "ServicePID created in the runner's future (no start event)",
    mutate: (r) => {
      dropStartEvent(r);
      r.servicePid = { ok: true, value: { pid: 1893, createdMs: T0 + 60 * S } };
    },
    verdict: 'reboot',
    reason: /^containerd \(PID 1893\) started up to 2026-08-20T12:01:00\.999Z, after the runner's now/,
  },
  // --- rule 6: the order itself
  {
    name: 'same-second write and start',
    mutate: (r) => {
      r.servicePid = { ok: true, value: { pid: 1893, createdMs: W } };
      startEvent(r).agoMs = T0 - W;
    },
    verdict: 'reboot',
    reason: /^containerd \(PID 1893\) may have started before the last write of/,
  },
  {
    name: 'start before the write (credential written after boot, never loaded)',
    mutate: (r) => {
      for (let i = 0; i < 2; i++) listing(r, i).mtimeMs = START + MIN;
      r.files[0].status = { ok: true, value: { id: 'cri/conf.d/cri.toml', updatedMs: START + MIN } };
    },
    verdict: 'reboot',
    reason: /^containerd \(PID 1893\) may have started before the last write of/,
  },
  {
    name: 'gap exactly the margin → reboot',
    marginMs: 8001,
    mutate: () => {},
    verdict: 'reboot',
    reason: `containerd (PID 1893) started only 8.0 s after the last write of ${CRI}, not more than the 8.0 s margin, so the order cannot be proven`,
  },
  {
    name: 'gap one ms above the margin → skip',
    marginMs: 8000,
    mutate: () => {},
    verdict: 'skip',
    reason: /^containerd PID 1893 started 8\.0 s after/,
  },
  {
    name: 'a negative margin is refused',
    marginMs: -1,
    mutate: () => {},
    verdict: 'reboot',
    reason: 'the evidence margin (-1 ms) is not a non-negative duration',
  },
  {
    name: 'talos version unreadable does not matter to the invariant',
    mutate: (r) => (r.talosVersion = { ok: false, error: 'timeout' }),
    verdict: 'skip',
    reason: /^containerd PID 1893 started/,
  },
];

/** Boot in January (> 180 days before the runner's August): LASTMOD has minute precision. */
function older(r: EvidenceReadings, startAfterMinute: number): void {
  const minute = Date.UTC(2026, 0, 2, 8, 15, 0);
  for (let i = 0; i < 2; i++) {
    const l = listing(r, i);
    l.lastModText = 'Jan  2 2026 08:15';
    l.mtimeMs = minute;
    l.precisionMs = MIN;
  }
  r.files[0].status = { ok: true, value: { id: 'cri/conf.d/cri.toml', updatedMs: minute + 10 * S } };
  const start = minute + startAfterMinute;
  startEvent(r).agoMs = T0 - start;
  r.servicePid = { ok: true, value: { pid: 1893, createdMs: start } };
}

describe('rebootEvidence: one broken condition per row', () => {
  it.each(rows)('$verdict: $name', ({ mutate, desired, marginMs, verdict, reason }) => {
    const r = base();
    mutate(r);
    const got = rebootEvidence(r, desired ?? ghcr, { marginMs: marginMs ?? 2000 });
    expect(got.reason).toEqual(typeof reason === 'string' ? reason : expect.stringMatching(reason));
    expect(got.verdict).toBe(verdict);
    // the credential never leaves the comparison
    const text = JSON.stringify(got);
    expect(text).not.toContain('secret-token');
    expect(got.reason).not.toContain('\n');
  });
});

describe('rebootEvidence: values', () => {
  it('records everything compared on a skip', () => {
    const got = rebootEvidence(base(), ghcr, { marginMs: 2000 });
    expect(got.values).toEqual({
      marginMs: 2000,
      talosVersion: 'v1.13.8',
      criState: 'Running',
      criHealth: 'OK',
      runnerWindow: { before: '2026-08-20T12:00:00.000Z', after: '2026-08-20T12:00:00.300Z' },
      criEvent: { pid: 1893, agoMs: T0 - START },
      servicePid: { pid: 1893, created: '2026-08-20T09:00:10.000Z' },
      criPid: 1893,
      criStartEarliest: '2026-08-20T09:00:09.000Z',
      criStartSource: 'start event + ServicePID',
      configWrittenLatest: '2026-08-20T09:00:00.999Z',
      configWrittenPath: CRI,
      gapMs: 8001,
      timeSynced: true,
      timeEpoch: 0,
      files: [
        {
          path: CRI,
          exists: true,
          lastMod: 'Aug 20 09:00:00',
          updated: '2026-08-20T09:00:00.000Z',
          latestWrite: '2026-08-20T09:00:00.999Z',
          credential: 'desired',
        },
        { path: PART, exists: true, lastMod: 'Aug 20 09:00:00', latestWrite: '2026-08-20T09:00:00.999Z', credential: 'desired' },
      ],
    });
  });

  it('still records everything on a reboot (old credential, clock not synced)', () => {
    const r = base();
    const c = r.files[0].content;
    if (c?.ok) c.value.auth['ghcr.io'] = { ...OLD };
    r.timeStatus = { ok: true, value: { synced: false, epoch: 0 } };
    const got = rebootEvidence(r, ghcr, { marginMs: 2000 });
    expect(got.verdict).toBe('reboot');
    expect(got.reason).toBe(`${CRI} holds an old credential for ghcr.io`);
    expect(got.values.files.map((f) => f.credential)).toEqual(['old', 'desired']);
    expect(got.values.gapMs).toBe(8001);
    expect(got.values.timeSynced).toBe(false);
    expect(got.values.criStartEarliest).toBe('2026-08-20T09:00:09.000Z');
  });

  it('marks a missing file and an unreadable one', () => {
    const r = base();
    r.files[1].listing = { ok: true, value: { path: PART, exists: false } };
    r.files[1].content = undefined;
    r.files[0].content = { ok: false, error: 'denied' };
    const got = rebootEvidence(r, ghcr, { marginMs: 2000 });
    expect(got.values.files).toEqual([
      expect.objectContaining({ path: CRI, exists: true, credential: 'unknown' }),
      { path: PART, exists: false },
    ]);
  });
});

describe('isTalosAtLeast', () => {
  const rows: Array<[string, number, number, boolean | undefined]> = [
    ['v1.13.8', 1, 14, false],
    ['v1.14.0', 1, 14, true],
    ['v1.14.2', 1, 14, true],
    ['v1.15.0', 1, 14, true],
    ['v2.0.0', 1, 14, true],
    ['v0.99.0', 1, 14, false],
    ['1.14.1', 1, 14, true],
    ['v1.14.0-rc.1', 1, 14, true],
    ['v1.14.0-beta.0+dirty', 1, 14, true],
    ['v1.9.3', 1, 14, false],
    ['', 1, 14, undefined],
    ['unknown', 1, 14, undefined],
    ['v1', 1, 14, undefined],
    ['v1.x.3', 1, 14, undefined],
  ];
  it.each(rows)('%s ≥ %i.%i → %s', (version, major, minor, want) => {
    expect(isTalosAtLeast(version, major, minor)).toBe(want);
  });
});
