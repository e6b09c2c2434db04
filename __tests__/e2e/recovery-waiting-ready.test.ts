// End to end: a run SIGKILLed while it waits for Ready and the proof (no post step), then rerun: the rerun takes the expired Lease and
// completes the node. One phase per file, so the parallel runner overlaps them (each waits one Lease
// duration). The cases: ./recoveryPhases.ts.
import { PHASES, recoverySuite } from './recoveryPhases.js';

recoverySuite('while it waits for Ready and the proof', [PHASES[4]]);
