// End to end: a run SIGKILLed once its reboot was sent (the reboot in flight, waiting for Ready and the
// proof, before the release), no post step, then rerun: the rerun completes the node without a second
// reboot. The cases: ./recoveryPhases.ts.
import { PHASES, recoverySuite } from './recoveryPhases.js';

recoverySuite('after its reboot was sent', PHASES.slice(3));
