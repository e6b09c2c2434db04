import { describe, expect, it } from 'vitest';
import { DEFAULT_EVIDENCE_MARGIN_MS } from '../../src/core/config.js';
import type { AuthFields, DesiredCredential } from '../../src/core/model/credential.js';
import type { EvidenceReadings, Instant, ServiceEvent } from '../../src/core/model/readings.js';
import { isTalosAtLeast, placedLaunch, rebootEvidence } from '../../src/rules/evidence.js';

// Instants as each read path delivers them (docs/talos-evidence-timing.md):
// - API: nanosecond timestamps, exact bounds;
// - CLI: "(D ago)" placed in the runner window ± 500 ms, RFC 3339 / ls -l seconds as [t, t + 999].
const S = 1000;
const H = 3600 * S;
const CRI = '/etc/cri/conf.d/cri.toml';
const PART = '/etc/cri/conf.d/01-registries.part';
const NEW: AuthFields = { username: 'ci-bot', password: 'new-secret-token', auth: '', identitytoken: '' };
const OLD: AuthFields = { username: 'ci-bot', password: 'old-secret-token', auth: '', identitytoken: '' };
const ghcr: DesiredCredential = { host: 'ghcr.io', tomlHost: 'ghcr.io', fields: NEW };

const exact = (ms: number): Instant => ({ earliestMs: ms, latestMs: ms, via: 'api', text: new Date(ms).toISOString() });
const second = (ms: number, via: 'api' | 'cli' = 'cli'): Instant => {
  const t = Math.floor(ms / S) * S;
  return { earliestMs: t, latestMs: t + 999, via, text: new Date(t).toISOString() };
};

/** One node's timeline, on the node clock (ms): W the config write, L the containerd launch. */
interface Timeline {
  W: number;
  L: number;
  pid?: number;
  /** runner clock before and after the service read */
  before: number;
  after: number;
}

const T0 = Date.UTC(2026, 7, 20, 12, 0, 0);

/** The events Talos logs for one run, oldest first: pre-launch (before L), then the start event. */
function run(L: number, pid: number): Array<{ state: string; message: string; t: number }> {
  return [
    { state: 'Starting', message: 'Starting service', t: L - 40 },
    { state: 'Waiting', message: 'Waiting for network, etc files', t: L - 39 },
    { state: 'Preparing', message: 'Running pre state', t: L - 3 },
    { state: 'Preparing', message: 'Creating service runner', t: L - 1.5 },
    {
      state: 'Running',
      message: `Process Process(["/bin/containerd" "--address" "/run/containerd/containerd.sock"]) started with PID ${pid}`,
      t: L + 0.4,
    },
    { state: 'Running', message: 'Health check successful', t: L + 1200 },
  ];
}

/** API path: exact instants; the write's status recorded 0.3 ms after the write. */
function apiNode(tl: Timeline, over: { events?: ServiceEvent[] } = {}): EvidenceReadings {
  const pid = tl.pid ?? 1893;
  return {
    node: 'w1',
    talosVersion: { ok: true, value: 'v1.14.0' },
    criService: {
      ok: true,
      value: {
        via: 'api',
        state: 'Running',
        health: 'OK',
        events: over.events ?? run(tl.L, pid).map((e) => ({ state: e.state, message: e.message, at: exact(e.t) })),
        clientBeforeMs: tl.before,
        clientAfterMs: tl.after,
      },
    },
    servicePid: { ok: true, value: { pid, created: exact(tl.L + 0.2) } },
    files: [
      {
        path: CRI,
        listing: { ok: true, value: { path: CRI, exists: true, mtime: second(tl.W, 'api') } },
        status: { ok: true, value: { id: 'cri/conf.d/cri.toml', updated: exact(tl.W + 0.3), specVersion: '3' } },
        content: { ok: true, value: { path: CRI, exists: true, auth: { 'ghcr.io': { ...NEW }, 'quay.io': { ...OLD } } } },
      },
    ],
    timeStatus: { ok: true, value: { synced: true, epoch: 0 } },
  };
}

/** CLI path: the same timeline as talosctl prints it and the adapter bounds it. */
function cliNode(tl: Timeline): EvidenceReadings {
  const pid = tl.pid ?? 1893;
  // talosctl computes the age at some instant of the call; take the middle, round to the second
  const printedAt = (tl.before + tl.after) / 2;
  const age = (t: number): Instant => {
    const ago = Math.round((printedAt - t) / S) * S;
    return { earliestMs: tl.before - ago - 500, latestMs: tl.after - ago + 500, via: 'cli', text: `${ago / S}s ago` };
  };
  const r = apiNode(tl);
  if (!r.criService.ok) throw new Error('fixture');
  r.criService.value.via = 'cli';
  r.criService.value.events = run(tl.L, pid)
    .reverse()
    .map((e) => ({ state: e.state, message: e.message, at: age(e.t) }));
  r.servicePid = { ok: true, value: { pid, created: second(tl.L + 0.2) } };
  const f = r.files[0];
  f.listing = { ok: true, value: { path: CRI, exists: true, lastModText: 'Aug 20 09:00:00', mtime: second(tl.W) } };
  f.status = { ok: true, value: { id: 'cri/conf.d/cri.toml', updated: second(tl.W + 0.3) } };
  return r;
}

const cri = (r: EvidenceReadings) => {
  if (!r.criService.ok) throw new Error('fixture');
  return r.criService.value;
};
const listing = (r: EvidenceReadings, i = 0) => {
  const l = r.files[i].listing;
  if (!l.ok) throw new Error('fixture');
  return l.value;
};

// A base timeline: write 3 h before the read, containerd launched 100 ms after it.
const W = T0 - 3 * H;
const base: Timeline = { W, L: W + 100, before: T0, after: T0 + 300 };

type Row = {
  name: string;
  build?: () => EvidenceReadings;
  mutate?: (r: EvidenceReadings) => void;
  desired?: DesiredCredential;
  marginMs?: number;
  verdict: 'skip' | 'reboot';
  ordering: 'after' | 'undecidable' | 'before' | 'unknown';
  contradicts: boolean;
  reason: string | RegExp;
};

const withPart = (r: EvidenceReadings, partWrite: number, auth: Record<string, AuthFields> = { 'ghcr.io': { ...NEW } }) => {
  r.files.push({
    path: PART,
    listing: { ok: true, value: { path: PART, exists: true, lastModText: 'Aug 20 09:00:00', mtime: second(partWrite) } },
    content: { ok: true, value: { path: PART, exists: true, auth } },
  });
};

const rows: Row[] = [
  // --- the ordering on intervals
  {
    name: 'API: nanosecond instants 100 ms apart decide with a margin below 100 ms',
    build: () => apiNode(base),
    marginMs: 50,
    verdict: 'skip',
    ordering: 'after',
    contradicts: false,
    // start ≥ "Creating service runner" (W + 98.5), write ≤ status (W + 0.3); start ≤ ServicePID (W + 100.2), write ≥ mtime second (W)
    reason: `containerd PID 1893 started +99 ms ± 1 ms after the last config write (${CRI}, read via api) and the config carries the desired credential for ghcr.io`,
  },
  {
    name: 'API: the same reading with the default margin skips',
    build: () => apiNode(base),
    marginMs: DEFAULT_EVIDENCE_MARGIN_MS,
    verdict: 'skip',
    ordering: 'after',
    contradicts: false,
    reason: /^containerd PID 1893 started \+99 ms ± 1 ms after/,
  },
  {
    name: 'API: a margin above the 98.2 ms lower bound cannot order it',
    build: () => apiNode(base),
    marginMs: 100,
    verdict: 'reboot',
    ordering: 'undecidable',
    contradicts: false,
    reason: `containerd (PID 1893) started +99 ms ± 1 ms (read via api) after the last write of ${CRI}: not provably more than the 100 ms margin, so the order cannot be proven`,
  },
  {
    name: 'CLI: the same write and a launch 1 s later cannot be ordered (second-rounded bounds overlap)',
    build: () => cliNode({ ...base, L: W + 1000 }),
    marginMs: DEFAULT_EVIDENCE_MARGIN_MS,
    verdict: 'reboot',
    ordering: 'undecidable',
    contradicts: false,
    reason: /^containerd \(PID 1893\) started \+\S+ ms ± 1\.\d s \(read via cli\) after the last write/,
  },
  {
    name: 'CLI: a launch 5 s after the write decides, its uncertainty shown',
    build: () => cliNode({ ...base, L: W + 5000 }),
    verdict: 'skip',
    ordering: 'after',
    contradicts: false,
    reason: /^containerd PID 1893 started \+4\.\d s ± 1\.\d s after the last config write \(\/etc\/cri\/conf\.d\/cri\.toml, read via cli\)/,
  },
  {
    name: 'a tie never skips: the pre-launch event stamped exactly at the status update, margin 0',
    build: () => {
      const r = apiNode(base);
      for (const e of cri(r).events) if (!/PID|Health/.test(e.message) && e.at.earliestMs > W + 0.3) e.at = exact(W + 0.3);
      return r;
    },
    marginMs: 0,
    verdict: 'reboot',
    ordering: 'undecidable',
    contradicts: false,
    reason: /not provably more than the 0 ms margin/,
  },
  {
    // Talos 1.14 at boot: cri.ServiceController starts cri only once cri.toml's EtcFileStatus exists,
    // so the whole run (Starting … Creating service runner) is logged after the status, and containerd
    // launches a few ms after it. Both instants are one clock's nanosecond stamps: 2.6 ms apart is an order.
    name: 'API, Talos 1.14 fresh boot: a launch 3.5 ms after the status, its run logged after it, skips with the default margin',
    build: () =>
      apiNode(base, {
        events: [
          { state: 'Starting', message: 'Starting service', at: exact(W + 0.9) },
          {
            state: 'Waiting',
            message: 'Waiting for volumes /var/lib, CRI to be mounted, network, /etc files to be ready',
            at: exact(W + 0.95),
          },
          { state: 'Preparing', message: 'Running pre state', at: exact(W + 1.4) },
          { state: 'Preparing', message: 'Creating service runner', at: exact(W + 2.9) },
          { state: 'Running', message: 'Process Process(["/bin/containerd"]) started with PID 1893', at: exact(W + 3.9) },
        ],
      }),
    mutate: (r) => {
      if (r.servicePid?.ok) r.servicePid.value.created = exact(W + 3.7);
    },
    verdict: 'skip',
    ordering: 'after',
    contradicts: false,
    // start ≥ "Creating service runner" (W + 2.9) > status (W + 0.3); start ≤ ServicePID (W + 3.7), write ≥ mtime second (W)
    reason: /^containerd PID 1893 started \+3 ms ± 550 µs after the last config write \(\/etc\/cri\/conf\.d\/cri\.toml, read via api\)/,
  },
  {
    name: 'a gap equal to the margin never skips',
    build: () => apiNode({ ...base, L: W + 20 + 1.5 + 0.3 }),
    marginMs: 20,
    verdict: 'reboot',
    ordering: 'undecidable',
    contradicts: false,
    reason: /not provably more than the 20 ms margin/,
  },
  {
    name: 'containerd provably started before the write (≤1.13 boot, containerd first): contradicts',
    build: () => apiNode({ ...base, L: W - 2000 }),
    verdict: 'reboot',
    ordering: 'before',
    contradicts: true,
    reason: `containerd (PID 1893) started before the last write of ${CRI} (start − write -2 s ± 1 ms (read via api)), so it runs with an older config`,
  },
  // --- the clock
  {
    name: 'a backward clock step flagged by TimeStatus (epoch 1) never skips, even on exact instants',
    build: () => apiNode(base),
    mutate: (r) => (r.timeStatus = { ok: true, value: { synced: true, epoch: 1 } }),
    verdict: 'reboot',
    ordering: 'undecidable',
    contradicts: false,
    reason: 'the node clock jumped by more than 15 minutes since boot (time epoch 1)',
  },
  {
    name: 'a flagged clock also keeps "before" from counting as proof',
    build: () => apiNode({ ...base, L: W - 2000 }),
    mutate: (r) => (r.timeStatus = { ok: true, value: { synced: false, epoch: 0 } }),
    verdict: 'reboot',
    ordering: 'undecidable',
    contradicts: false,
    reason: 'the node clock is not synced',
  },
  {
    name: 'time status failed',
    build: () => apiNode(base),
    mutate: (r) => (r.timeStatus = { ok: false, error: 'rpc error: code = Unavailable' }),
    verdict: 'reboot',
    ordering: 'undecidable',
    contradicts: false,
    reason: 'the node time status could not be read: rpc error: code = Unavailable',
  },
  {
    name: "a start in the runner's future (node clock ahead by more than the tolerance)",
    build: () => apiNode({ ...base, W: T0 - 5000, L: T0 + 2000 }),
    verdict: 'reboot',
    ordering: 'undecidable',
    contradicts: false,
    reason: /^containerd \(PID 1893\) started up to .*after the runner's now .*: the node clock is ahead or stepped$/,
  },
  {
    name: "a write in the runner's future",
    build: () => apiNode(base),
    mutate: (r) => {
      r.files[0].status = { ok: true, value: { id: 'cri/conf.d/cri.toml', updated: exact(T0 + 5000) } };
      listing(r).mtime = second(T0 + 5000, 'api');
    },
    verdict: 'reboot',
    ordering: 'undecidable',
    contradicts: false,
    reason: /^\/etc\/cri\/conf\.d\/cri\.toml was written up to .*after the runner's now/,
  },
  {
    name: 'a recent launch a few ms "ahead" of the runner is ordinary skew, not a stepped clock',
    build: () => apiNode({ ...base, W: T0 - 400, L: T0 + 290 }),
    verdict: 'skip',
    ordering: 'after',
    contradicts: false,
    reason: /^containerd PID 1893 started \+/,
  },
  {
    name: 'the runner clock went backwards during the call',
    build: () => cliNode({ ...base, L: W + 5000 }),
    mutate: (r) => (cri(r).clientAfterMs = T0 - 1),
    verdict: 'reboot',
    ordering: 'unknown',
    contradicts: false,
    reason: 'the runner clock went backwards around the cri service read, so its instants cannot be placed',
  },
  // --- which launch, which run
  {
    name: 'the current run is chosen by time: an older run listed after it (any order) does not count',
    build: () => {
      const older = run(W - H, 900).map((e) => ({ state: e.state, message: e.message, at: exact(e.t) }));
      const current = run(base.L, 1893).map((e) => ({ state: e.state, message: e.message, at: exact(e.t) }));
      return apiNode(base, { events: [...current.reverse(), ...older] });
    },
    verdict: 'skip',
    ordering: 'after',
    contradicts: false,
    reason: /^containerd PID 1893 started \+99 ms ± 1 ms/,
  },
  {
    name: 'pre-launch events of an OLDER run do not bound the current launch',
    build: () => {
      const older = run(W - H, 900).map((e) => ({ state: e.state, message: e.message, at: exact(e.t) }));
      const start = run(base.L, 1893)
        .filter((e) => /started with PID/.test(e.message))
        .map((e) => ({ state: e.state, message: e.message, at: exact(e.t) }));
      return apiNode(base, { events: [...older, ...start] });
    },
    verdict: 'reboot',
    ordering: 'unknown',
    contradicts: false,
    reason: /^no pre-launch event of the current cri run \(PID 1893\) in the history/,
  },
  {
    name: 'a stale pre-launch event logged after the launch is not a lower bound of it',
    build: () => apiNode(base),
    mutate: (r) => cri(r).events.push({ state: 'Preparing', message: 'Running pre state', at: exact(base.L + 5000) }),
    verdict: 'skip',
    ordering: 'after',
    contradicts: false,
    reason: /^containerd PID 1893 started \+99 ms/,
  },
  {
    name: 'no start event in the history: the launch cannot be placed',
    build: () => apiNode(base),
    mutate: (r) => (cri(r).events = cri(r).events.filter((e) => !/started with PID/.test(e.message))),
    verdict: 'reboot',
    ordering: 'unknown',
    contradicts: false,
    reason: "no 'started with PID' event in the cri history (64 events kept), so the launch of the running containerd cannot be placed",
  },
  {
    name: 'CLI: two start events with different PIDs in the same second cannot be told apart',
    build: () => cliNode({ ...base, L: W + 5000 }),
    mutate: (r) =>
      cri(r).events.unshift({
        state: 'Running',
        message: 'Process Process(["/bin/containerd"]) started with PID 2001',
        at: cri(r).events[1].at,
      }),
    verdict: 'reboot',
    ordering: 'unknown',
    contradicts: false,
    reason: /^ambiguous containerd start: start events for PID \d+ and PID \d+ cannot be ordered/,
  },
  {
    name: 'ServicePID names another PID',
    build: () => apiNode(base),
    mutate: (r) => (r.servicePid = { ok: true, value: { pid: 2001, created: exact(base.L + 0.2) } }),
    verdict: 'reboot',
    ordering: 'unknown',
    contradicts: false,
    reason: 'ambiguous containerd start: the newest start event names PID 1893 but ServicePID names PID 2001',
  },
  {
    name: 'ServicePID recorded outside its run (before the pre-launch events): another process or a clock step',
    build: () => apiNode(base),
    mutate: (r) => (r.servicePid = { ok: true, value: { pid: 1893, created: exact(W - 10) } }),
    verdict: 'reboot',
    ordering: 'unknown',
    contradicts: false,
    reason: /^ambiguous containerd start: ServicePID for PID 1893 was recorded at .*, outside its run/,
  },
  {
    name: 'ServicePID reading failed',
    build: () => apiNode(base),
    mutate: (r) => (r.servicePid = { ok: false, error: 'rpc error: code = PermissionDenied' }),
    verdict: 'reboot',
    ordering: 'after',
    contradicts: false,
    reason: 'the cri ServicePID could not be read: rpc error: code = PermissionDenied',
  },
  {
    name: 'no ServicePID resource (Talos < 1.13): the start event alone bounds the launch from above',
    build: () => apiNode(base),
    mutate: (r) => (r.servicePid = undefined),
    verdict: 'skip',
    ordering: 'after',
    contradicts: false,
    reason: /^containerd PID 1893 started \+99 ms ± 1 ms/,
  },
  // --- the cri service
  {
    name: 'cri not Running contradicts',
    build: () => apiNode(base),
    mutate: (r) => (cri(r).state = 'Waiting'),
    verdict: 'reboot',
    ordering: 'after',
    contradicts: true,
    reason: 'the cri service is Waiting, not Running',
  },
  {
    name: 'cri Running but unhealthy does not contradict',
    build: () => apiNode(base),
    mutate: (r) => (cri(r).health = 'Fail'),
    verdict: 'reboot',
    ordering: 'after',
    contradicts: false,
    reason: 'the cri service is Running but its health is Fail, not OK',
  },
  {
    name: 'cri reading failed',
    build: () => apiNode(base),
    mutate: (r) => (r.criService = { ok: false, error: 'rpc error: code = Unavailable' }),
    verdict: 'reboot',
    ordering: 'unknown',
    contradicts: false,
    reason: 'the cri service status could not be read: rpc error: code = Unavailable',
  },
  // --- the write
  {
    name: 'API: the whole-second mtime never orders: a status 100 ms before the launch decides even within the same second',
    build: () => apiNode({ ...base, W: W + 850, L: W + 950 }),
    marginMs: 50,
    verdict: 'skip',
    ordering: 'after',
    contradicts: false,
    reason: /^containerd PID 1893 started \+\d+ ms ± \d+ ms after/,
  },
  {
    name: 'API: a file modified after its status was recorded: something else wrote it',
    build: () => apiNode(base),
    mutate: (r) => (listing(r).mtime = second(W + 2000, 'api')),
    verdict: 'reboot',
    ordering: 'unknown',
    contradicts: false,
    reason: /^\/etc\/cri\/conf\.d\/cri\.toml was modified at .*, after its EtcFileStatus was recorded/,
  },
  {
    name: 'API: no status reading for an existing file',
    build: () => apiNode(base),
    mutate: (r) => delete r.files[0].status,
    verdict: 'reboot',
    ordering: 'unknown',
    contradicts: false,
    reason: `${CRI} has no EtcFileStatus reading, and its whole-second modification time cannot order the write`,
  },
  {
    name: 'etcfilestatus failed',
    build: () => cliNode({ ...base, L: W + 5000 }),
    mutate: (r) => (r.files[0].status = { ok: false, error: 'NotFound' }),
    verdict: 'reboot',
    ordering: 'unknown',
    contradicts: false,
    reason: `the etcfilestatus of ${CRI} could not be read: NotFound`,
  },
  {
    name: 'a listing failed',
    build: () => apiNode(base),
    mutate: (r) => (r.files[0].listing = { ok: false, error: 'permission denied' }),
    verdict: 'reboot',
    ordering: 'unknown',
    contradicts: false,
    reason: `listing ${CRI} failed: permission denied`,
  },
  {
    name: 'an unparseable modification time',
    build: () => cliNode({ ...base, L: W + 5000 }),
    mutate: (r) => (listing(r).mtime = { earliestMs: Number.NaN, latestMs: Number.NaN, via: 'cli', text: 'Aug 99' }),
    verdict: 'reboot',
    ordering: 'unknown',
    contradicts: false,
    reason: `the modification time of ${CRI} could not be parsed (Aug 20 09:00:00)`,
  },
  {
    name: 'no config file exists',
    build: () => apiNode(base),
    mutate: (r) => {
      r.files[0].listing = { ok: true, value: { path: CRI, exists: false } };
      delete r.files[0].content;
      delete r.files[0].status;
    },
    verdict: 'reboot',
    ordering: 'unknown',
    contradicts: false,
    reason: `none of the CRI config files exists (${CRI})`,
  },
  {
    name: 'CLI: a part file written later than cri.toml is the last write (start 5 s after cri.toml, 1 s after the part)',
    build: () => {
      const r = cliNode({ ...base, L: W + 5000 });
      withPart(r, W + 4000);
      return r;
    },
    verdict: 'reboot',
    ordering: 'undecidable',
    contradicts: false,
    reason: new RegExp(`after the last write of ${PART.replace(/\./g, '\\.')}: not provably more`),
  },
  {
    name: 'CLI: an ls -l row older than six months has minute precision',
    build: () => cliNode({ ...base, L: W + 30_000 }),
    mutate: (r) => {
      const m = Math.floor(W / 60_000) * 60_000;
      listing(r).mtime = { earliestMs: m, latestMs: m + 59_999, via: 'cli', text: 'Aug 20 2026 09:00' };
    },
    verdict: 'reboot',
    ordering: 'undecidable',
    contradicts: false,
    reason: /not provably more than the/,
  },
  // --- the credential
  {
    name: 'an old credential contradicts, whatever the order says',
    build: () => apiNode(base),
    desired: { ...ghcr, fields: { ...NEW, password: 'newer' } },
    verdict: 'reboot',
    ordering: 'after',
    contradicts: true,
    reason: `${CRI} holds an old credential for ghcr.io`,
  },
  {
    name: 'no entry for the host contradicts (a part file agreeing is not enough)',
    build: () => {
      const r = cliNode({ ...base, L: W + 5000 });
      withPart(r, W);
      return r;
    },
    desired: { host: 'docker.io', tomlHost: 'registry-1.docker.io', fields: NEW },
    verdict: 'reboot',
    ordering: 'after',
    contradicts: true,
    reason: `${CRI} has no auth entry for registry-1.docker.io`,
  },
  {
    name: 'a file that could not be read is unproven, not contradicted',
    build: () => apiNode(base),
    mutate: (r) => (r.files[0].content = { ok: false, error: 'PermissionDenied' }),
    verdict: 'reboot',
    ordering: 'after',
    contradicts: false,
    reason: `reading ${CRI} failed: PermissionDenied`,
  },
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

describe('rebootEvidence: one condition per row', () => {
  it.each(rows)('$name', (row) => {
    const r = row.build!();
    row.mutate?.(r);
    const v = rebootEvidence(r, row.desired ?? ghcr, { marginMs: row.marginMs ?? DEFAULT_EVIDENCE_MARGIN_MS });
    expect({ verdict: v.verdict, ordering: v.ordering, contradicts: v.contradicts }).toEqual({
      verdict: row.verdict,
      ordering: row.ordering,
      contradicts: row.contradicts,
    });
    if (typeof row.reason === 'string') expect(v.reason).toBe(row.reason);
    else expect(v.reason).toMatch(row.reason);
  });
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
    const v = rebootEvidence(r, ghcr, { marginMs: 0 });
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
    expect(rebootEvidence(r, ghcr, { marginMs: 0 }).incomplete).toBeUndefined();
  });
});

describe('rebootEvidence: values', () => {
  it('records the gap as bounds, the read path and the instants compared', () => {
    const v = rebootEvidence(apiNode(base), ghcr, { marginMs: 50 });
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
      const cli = rebootEvidence(cliNode(tl), ghcr, { marginMs: 10 }).values.gap!;
      const api = rebootEvidence(apiNode(tl), ghcr, { marginMs: 10 }).values.gap!;
      expect(cli.lowMs).toBeLessThanOrEqual(gap);
      expect(cli.highMs).toBeGreaterThanOrEqual(gap);
      expect(cli.highMs - cli.lowMs).toBeGreaterThan(api.highMs - api.lowMs);
      expect(rebootEvidence(cliNode(tl), ghcr, { marginMs: 10 }).values.readPath).toBe('cli');
    }
  });

  it('a slow call widens the CLI bounds instead of shrinking the gap (5 s read during a 3.2 s call)', () => {
    // The old rule anchored "(D ago)" at the runner clock before the call: under load a 5 s gap read as 1.8 s.
    const v = rebootEvidence(cliNode({ ...base, L: W + 5000, after: T0 + 3200 }), ghcr, { marginMs: 10 });
    const gap = v.values.gap!;
    expect(gap.lowMs).toBeLessThanOrEqual(5000);
    expect(gap.highMs).toBeGreaterThanOrEqual(5000);
    expect(gap.highMs - gap.lowMs).toBeGreaterThan(3200);
    expect(v.reason).toMatch(/started \+\d(\.\d)? s ± \d(\.\d)? s after/);
  });

  it('still records everything on a reboot', () => {
    const r = apiNode(base);
    r.timeStatus = { ok: true, value: { synced: false, epoch: 0 } };
    const v = rebootEvidence(r, { ...ghcr, fields: OLD }, { marginMs: 50 });
    expect(v.verdict).toBe('reboot');
    expect(v.contradicts).toBe(true);
    expect(v.values.files[0].credential).toBe('old');
    expect(v.values.timeSynced).toBe(false);
    expect(v.values.gap).toBeDefined();
  });
});

// Rule 2b: after the credential patch a skip rests on a containerd launched after the one the reading
// before the patch placed. The hazard it closes: Talos writes cri.toml after ApplyConfiguration has
// returned, so a reading after the patch can pair the containerd that ran before it (and the write time
// it was ordered after) with the new content; the plain rule skips that.
describe('rebootEvidence after the credential patch (rule 2b: a launch after the patch)', () => {
  const PATCH = T0 - 10 * S; // the patch, on the node clock
  const prePatch = rebootEvidence(apiNode({ ...base, pid: 1893 }), { ...ghcr, fields: OLD }, { marginMs: 10 });
  const before = placedLaunch(prePatch)!;
  /** the old containerd, the old write time, the new content: one reading straddling the write */
  const straddled = () => apiNode({ ...base, pid: 1893 });

  it('the reading before the patch places its launch: PID and the launch bounds, node clock', () => {
    expect(before).toEqual({ pid: 1893, earliestMs: W + 98.5, latestMs: W + 100.2 });
  });

  it('the containerd that ran before the patch is never a skip, though the plain rule would skip the straddled reading', () => {
    expect(rebootEvidence(straddled(), ghcr, { marginMs: 10 }).verdict).toBe('skip');
    const v = rebootEvidence(straddled(), ghcr, { marginMs: 10, afterPatch: { before } });
    expect(v.verdict).toBe('reboot');
    expect(v.reason).toBe('containerd PID 1893 is the one that ran before the patch: Talos has not restarted cri since');
    expect(v.contradicts).toBe(false);
    expect(v.values.launchBeforePatch).toEqual({ pid: 1893, latest: new Date(W + 100.2).toISOString() });
  });

  it('a new containerd launched after the write that carries the credential is a skip (API)', () => {
    const tl: Timeline = { W: PATCH + 120, L: PATCH + 120 + 300, pid: 2377, before: T0, after: T0 + 50 };
    const v = rebootEvidence(apiNode(tl), ghcr, { marginMs: 10, afterPatch: { before } });
    expect(v.verdict, v.reason).toBe('skip');
    expect(v.reason).toMatch(/^containerd PID 2377 started \+\d+ ms ± \d+ ms after the last config write/);
  });

  it('a new containerd read through talosctl: a skip when the second-rounded bounds order both', () => {
    const cliBefore = placedLaunch(rebootEvidence(cliNode({ ...base, pid: 1893 }), ghcr, { marginMs: 10 }))!;
    const tl: Timeline = { W: PATCH + 120, L: PATCH + 120 + 5000, pid: 2377, before: T0, after: T0 + 400 };
    expect(rebootEvidence(cliNode(tl), ghcr, { marginMs: 10, afterPatch: { before: cliBefore } }).verdict).toBe('skip');
  });

  it('another PID whose launch is not provably later than the one before the patch is not a skip', () => {
    // the same instants as before the patch under another PID: a reading that contradicts itself
    const v = rebootEvidence(apiNode({ ...base, pid: 2377 }), ghcr, { marginMs: 10, afterPatch: { before } });
    expect(v.verdict).toBe('reboot');
    expect(v.reason).toMatch(
      /^containerd PID 2377 \(launched from .*\) is not provably launched after PID 1893, which ran before the patch/,
    );
  });

  it('compares node instants only: a runner clock far off the node changes nothing', () => {
    // the new launch and write 10 s in the node's past, the runner window an hour ahead of the node
    const tl: Timeline = { W: PATCH + 120, L: PATCH + 120 + 300, pid: 2377, before: T0 + H, after: T0 + H + 50 };
    expect(rebootEvidence(apiNode(tl), ghcr, { marginMs: 10, afterPatch: { before } }).verdict).toBe('skip');
  });

  it('a reading before the patch that placed no launch gives no anchor: reboot, and it says so', () => {
    const unplaced = apiNode(base);
    // no start event left in the history (pushed out of the 64 events)
    cri(unplaced).events = cri(unplaced).events.filter((e) => !/started with PID/.test(e.message));
    const pre = rebootEvidence(unplaced, ghcr, { marginMs: 10 });
    expect(placedLaunch(pre)).toBeUndefined();
    const tl: Timeline = { W: PATCH + 120, L: PATCH + 120 + 300, pid: 2377, before: T0, after: T0 + 50 };
    const v = rebootEvidence(apiNode(tl), ghcr, { marginMs: 10, afterPatch: { before: undefined } });
    expect(v.verdict).toBe('reboot');
    expect(v.reason).toBe('the reading before the patch placed no containerd launch, so no launch can be proven to follow the patch');
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
