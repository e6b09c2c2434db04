// End to end: a run SIGKILLed once its reboot was sent (no post step), then rerun: the rerun takes the expired Lease and
// completes the node. One phase per file, so the parallel runner overlaps them (each waits one Lease
// duration). The cases: ./recoveryPhases.ts.
import { PHASES, recoverySuite } from './recoveryPhases.js';

recoverySuite('once its reboot was sent', [PHASES[3]]);
