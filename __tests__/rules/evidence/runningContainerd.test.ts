// The rows of src/rules/evidence/runningContainerd.ts, judged through the verdict (src/rules/evidence.ts).
import { describe } from 'vitest';
import { apiNode, base, cliNode, cri, exact, expectRows, H, type Row, run, W } from './fixtures.js';

const rows: Row[] = [
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
];

describe('rebootEvidence: the cri service and which launch, which run (rules 1 and 2), one condition per row', () => {
  expectRows(rows);
});
