import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';
import { LongestFirst } from './__tests__/sequencer.js';
import { COMPAT, EXTENDED } from './__tests__/tiers.js';

// Which files run (__tests__/tiers.ts): `npm test` sets RAR_TEST_TIER=core, planned for 150 s on the
// 2-core machine every developer and CI has; `npm run test:all`, a plain `npx vitest run` (any file named
// on its command line too) and CI on Node 24 run every file; CI's Node 20 pass runs the compat tier.
const TIERS = {
  all: { include: ['__tests__/**/*.test.ts'], exclude: configDefaults.exclude },
  core: { include: ['__tests__/**/*.test.ts'], exclude: [...configDefaults.exclude, ...EXTENDED] },
  compat: { include: COMPAT.map((p) => (p.endsWith('/**') ? `${p}/*.test.ts` : p)), exclude: configDefaults.exclude },
};
const tierName = process.env.RAR_TEST_TIER || 'all';
if (!Object.hasOwn(TIERS, tierName)) throw new Error(`RAR_TEST_TIER must be one of ${Object.keys(TIERS).join(', ')}; got "${tierName}"`);
const tier = TIERS[tierName as keyof typeof TIERS];

export default defineConfig({
  test: {
    include: tier.include,
    exclude: tier.exclude,
    // the session's directory for the runner emulator's run directories, removed at its end
    globalSetup: ['./__tests__/globalSetup.ts'],
    // A hang detector, not a speed check (speed is the bench's): an end-to-end test that takes 40 s on
    // an idle machine takes two or three times that on a runner whose cores are shared, and a test must
    // not fail for that. One bound for every test; no test sets a shorter one of its own.
    testTimeout: 300_000,
    hookTimeout: 120_000,
    // The end-to-end files spend most of their wall time waiting: on the twin's clocks (a reboot, a
    // drain held by a PDB, the run's own 2 s poll) and on the child processes they run (the bundle,
    // kubectl, talosctl), which the machine schedules across all its cores. So more files run at once
    // than there are cores; what bounds the suite is then its total CPU (docs/testing.md).
    maxWorkers: Math.max(2, availableParallelism() * 5),
    // The environment the tests' child processes inherit (about 3,000 kubectl, 150 bundle and 450 fake
    // talosctl runs), trimmed of start-up work no test depends on (docs/testing.md, "the CPU of the children"):
    // - NODE_EXTRA_CA_CERTS: a machine's CA bundle (this one sets Debian's 144 certificates) is parsed at
    //   every Node start, 43 ms of CPU each; no test talks to a server that bundle signs (the twin's TLS
    //   is verified against its own CA, given explicitly).
    // - GOGC: kubectl's collector starts at a 4 MB heap and runs several times while kubectl starts up
    //   (62 ms of CPU a run here, 45 ms at 400, where it runs five times less often). Only the memory use changes.
    // - NODE_COMPILE_CACHE: Node 22.1+ keeps the V8 code of the scripts it compiled (the bundle, its chunks,
    //   the fake talosctl) in this directory and reuses it at the next start instead of compiling again;
    //   Node 20 ignores it. The code run is the same; only its compilation is skipped.
    env: { NODE_EXTRA_CA_CERTS: '', GOGC: '400', NODE_COMPILE_CACHE: join(tmpdir(), 'rar-tests-node-compile-cache') },
    // Threads, not forks: one process for the workers, so their start-up and memory are not paid again
    // per worker (measured: 173 s for forks' 204 s at eight workers, docs/testing.md).
    pool: 'threads',
    // One module graph per worker instead of one per file: every e2e file imports the twin and the
    // action's sources, and loading them again for each file was a fifth of the suite's CPU. No test
    // file changes state another could see (no vi.mock; fake timers, env and spies are restored).
    isolate: false,
    // The longest files first on a fresh clone too (__tests__/sequencer.ts).
    sequence: { sequencer: LongestFirst },
  },
});
