// The rows of src/rules/evidence/clock.ts, judged through the verdict (src/rules/evidence.ts).
import { describe } from 'vitest';
import { apiNode, base, cliNode, cri, exact, expectRows, listing, type Row, second, T0, W } from './fixtures.js';

const rows: Row[] = [
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
];

describe('rebootEvidence: the node clock (rule 5), one condition per row', () => {
  expectRows(rows);
});
