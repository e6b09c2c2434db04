// The rows of src/rules/evidence/configWrite.ts, judged through the verdict (src/rules/evidence.ts).
import { describe } from 'vitest';
import { apiNode, base, cliNode, CRI, expectRows, listing, PART, type Row, second, W, withPart } from './fixtures.js';

const rows: Row[] = [
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
];

describe('rebootEvidence: the last write of the config (rule 3), one condition per row', () => {
  expectRows(rows);
});
