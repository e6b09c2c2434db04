// The rows of src/rules/evidence/ordering.ts, judged through the verdict (src/rules/evidence.ts).
import { describe } from 'vitest';
import { DEFAULT_EVIDENCE_MARGIN_MS } from '../../../src/core/config.js';
import { apiNode, base, cliNode, cri, CRI, exact, expectRows, type Row, W } from './fixtures.js';

const rows: Row[] = [
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
];

describe('rebootEvidence: the ordering on intervals (rule 6), one condition per row', () => {
  expectRows(rows);
});
