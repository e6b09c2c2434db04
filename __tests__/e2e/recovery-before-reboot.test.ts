// End to end: a run SIGKILLed before its reboot (after the claim, after the credential patch, during
// the drain), no post step, then rerun: the rerun completes the node. The cases: ./recoveryPhases.ts.
import { PHASES, recoverySuite } from './recoveryPhases.js';

recoverySuite('before its reboot', PHASES.slice(0, 3));
