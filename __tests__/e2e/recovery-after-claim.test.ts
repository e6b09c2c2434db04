// End to end: a run SIGKILLed right after its claim (no post step), then rerun: the rerun takes the expired Lease and
// completes the node. One phase per file, so the parallel runner overlaps them (each waits one Lease
// duration). The cases: ./recoveryPhases.ts.
import { PHASES, recoverySuite } from './recoveryPhases.js';

recoverySuite('after its claim', [PHASES[0]]);
