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
  readNode: 'read node',
  /** before the claim, when Talos's merge applies the patch: the credential forms the node's config carries */
  readCredentialForms: 'read the credential forms of the machine config',
  readEvidence: 'read reboot evidence',
  /** the phase annotation set to `mutating` before Talos may be touched */
  markMutating: 'phase=mutating',
  reReadAfterMarkFailed: 're-read node (phase=mutating failed)',
  reReadBeforePatch: 're-read node (before the credential patch)',
  applyPatch: 'apply the credential patch',
  reReadBeforeRelease: 're-read node (before the release)',
  waitApiserver: 'wait for the apiserver (/readyz)',
  settleListPods: "list the node's pods (settle gate)",
  settleBaseline: "read their controllers' counts before the drain (settle gate)",
  readBlockingPdbs: 'read the PodDisruptionBudgets that blocked the drain',
  quarantine: 'quarantine (keep the cordon, give up the claim)',
  /** Kubernetes cannot reach the node's kubelet: does the Talos API still answer? */
  talosAnswers: 'ask the Talos API (Kubernetes cannot reach the node)',
} as const;

/** Where in a node's roll a guard (the fence read before a mutation) and the quorum gate run. */
export const CHECKPOINT = {
  beforeDrain: 'before drain',
  afterDrain: 'after drain',
  afterWatchLost: 'after the watch of the drain was lost',
  afterCutOff: 'after the drain was cut off',
} as const;

/** The guard at a checkpoint: the node read again and checked to be still ours. */
export function guardStep(at: string): string {
  return `guard (${at})`;
}

/** The quorum gate at a checkpoint (control planes only). */
export function quorumGateStep(at: string): string {
  return `quorum gate (${at})`;
}

/** The step of a node a start check refused before its claim (src/pipeline/scheduler.ts): the check's name, failed. */
export function startCheckStep(check: string): string {
  return `start check (${check})`;
}

/** The pull probe of `verify-image`. */
export function verifyImageStep(image: string): string {
  return `${VERIFY_PREFIX}${image}${VERIFY_SUFFIX}`;
}

const VERIFY_PREFIX = 'verify ';
const VERIFY_SUFFIX = ' through containerd';

/** The image a `verify-image` step pulled, read back from its name; undefined for any other step. */
export function verifiedImageOf(name: string): string | undefined {
  return name.startsWith(VERIFY_PREFIX) && name.endsWith(VERIFY_SUFFIX)
    ? name.slice(VERIFY_PREFIX.length, -VERIFY_SUFFIX.length)
    : undefined;
}

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
