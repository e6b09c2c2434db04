// The names of the steps a node's roll records, and the phase of the roll each one belongs to: one
// home the pipeline (which names its steps with these) and the run's timeline in the job summary
// (which draws each phase with its own character) share, so renaming a step cannot silently turn
// a drain into "another step" on the timeline.

/** The phases the timeline tells apart; any step not named here is `other`. */
export const STEP_PHASES = ['claim', 'drain', 'reboot', 'cri-restart', 'ready', 'proof', 'release'] as const;
export type StepPhase = (typeof STEP_PHASES)[number] | 'other';

/** The steps with a fixed name that belong to a phase. */
export const STEP = {
  claim: 'claim',
  drain: 'drain',
  /** the one retry of a drain cut off by the network */
  drainRetry: 'drain (retry after a transport failure)',
  reboot: 'reboot',
  waitReady: 'wait for Ready',
  prove: 'prove the new credential is loaded',
  /**
   * the proof's first reading was not final (cri not up yet, or the boot's CRI files not all written
   * and read): reading it again until it is (a wait on the boot, not work)
   */
  waitProofFinal: 'wait for the boot to finish (the proof read again)',
  release: 'release',
  /** the settle gate holding a drain until the workloads earlier drains evicted are available again */
  settleWait: 'settle gate (before drain)',
  /** the release after a stop: the node is given back as it was */
  releaseRestore: 'release (restore)',
} as const;

const CRI_RESTART = 'wait for Talos to restart cri';
const CRI_RESTART_WAITED = `${CRI_RESTART} (up to `;

/** Waiting for Talos to restart cri after the patch, bounded by `upTo` (cri-restart-wait, formatted). */
export function criRestartStep(upTo: string): string {
  return `${CRI_RESTART_WAITED}${upTo})`;
}

/** Recorded instead of a wait that could prove nothing: not a wait, so not the cri restart phase. */
export const CRI_RESTART_NOT_WAITED = `${CRI_RESTART} (not waited)`;

const PHASE_OF_STEP: ReadonlyMap<string, StepPhase> = new Map<string, StepPhase>([
  [STEP.claim, 'claim'],
  [STEP.drain, 'drain'],
  [STEP.drainRetry, 'drain'],
  [STEP.reboot, 'reboot'],
  [STEP.waitReady, 'ready'],
  [STEP.prove, 'proof'],
  [STEP.waitProofFinal, 'proof'],
  [STEP.release, 'release'],
  [STEP.releaseRestore, 'release'],
]);

/** The phase a recorded step belongs to, from its name. */
export function stepPhase(name: string): StepPhase {
  const fixed = PHASE_OF_STEP.get(name);
  if (fixed) return fixed;
  return name.startsWith(CRI_RESTART_WAITED) ? 'cri-restart' : 'other';
}
