// Decision records: built as a node goes through its steps; the only input of the report. Here too
// what a record holds besides the evidence verdict (its steps, the drain's blockers and the quarantine,
// the plan's config preview, an undecided proof), the run's holds and how a whole run ended.
// Plain data, no I/O.

import type { HostToRoll } from './hosts.js';
import type { Role } from './node.js';
import type { UnsatisfiableDrain } from './unsatisfiableDrain.js';
import type { EvidenceVerdict } from './verdict.js';

/**
 * How a whole run ended: the action's `result` output, for every mode. `clean` nothing to do,
 * `processed` something done, `planned` (plan), `partial` (the time budget stopped the roll with
 * nodes left; every node started ended cleanly), `failed`.
 */
export const ACTION_RESULTS = ['clean', 'processed', 'planned', 'partial', 'failed'] as const;
export type ActionResult = (typeof ACTION_RESULTS)[number];

/** What became of one node the run reached (the report file's schema and its counts take the list from here). */
export const OUTCOMES = ['rebooted', 'reboot-skipped', 'planned-reboot', 'planned-skip', 'refused', 'failed', 'quarantined'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** One thing that kept a drain from finishing: a PodDisruptionBudget and the pods it protected, or pods without one. */
export interface DrainBlocker {
  /** `namespace/name` of the PDB; absent: the pods were pending without a PDB refusing them (e.g. stuck terminating) */
  pdb?: string;
  /** the PDB's status as read: how many disruptions it allowed, healthy pods now and needed */
  status?: { disruptionsAllowed: number; currentHealthy: number; desiredHealthy: number };
  /** `namespace/name` of each pod it held on the node */
  pods: string[];
}

/** A node this run quarantined (`undrainable: quarantine`): what blocked its drain and how a person lifts it. */
export interface QuarantineNote {
  blockers: DrainBlocker[];
  /** how to lift it the right way, one line: let the PDBs allow the eviction, then rerun */
  lift: string;
  /** the CAS-guarded `kubectl patch` that lifts it by hand (the node keeps the old credential until rebooted) */
  byHand: string;
}

export interface StepRecord {
  name: string;
  startedAt: string;
  durationMs: number;
  ok: boolean;
  detail?: string;
}

/**
 * A moment the roll held new starts back (the run's timeline shows it): the settle gate waiting for
 * evicted workloads to be available again or a health gate false (`startedAt`..`endedAt`; docs/gates.md), or the time budget refusing a
 * start (`startedAt` only: from then on nothing new starts). ISO instants of the runner's clock.
 */
/** What held starts back: the settle gate, the time budget, the maintenance windows, a health gate (the report's enum too). */
export const ROLL_HOLD_KINDS = ['settle', 'budget', 'window', 'gate'] as const;
export type RollHoldKind = (typeof ROLL_HOLD_KINDS)[number];

export interface RollHold {
  /**
   * `window`: no maintenance window was open at a start (docs/windows.md); like `budget`, a stop that never ends.
   * `gate`: a health gate was false (docs/gates.md); like `settle`, it ends when the gate holds again.
   */
  kind: RollHoldKind;
  startedAt: string;
  /** absent while it holds, and for a budget or window stop */
  endedAt?: string;
  /** one line: what it waited for, or the budget's message */
  detail: string;
  /** the node whose start or drain it held, when one */
  node?: string;
}

export interface DecisionRecord {
  node: string;
  uid: string;
  role: Role;
  internalIP: string;
  outcome: Outcome;
  /** one line */
  reason: string;
  /**
   * optional: the registry hosts this node's roll is for (those it was not verified for, and why; `reprove`:
   * only the proof image changed), in the run's order. The evidence and the proof judge these hosts.
   */
  hosts?: HostToRoll[];
  evidence?: EvidenceVerdict;
  /** evidence read after the patch (Talos >= 1.14) or after the reboot */
  proof?: EvidenceVerdict;
  claim?: { attempts: number; conflicts: string[] };
  steps: StepRecord[];
  durationMs: number;
  /** when the run started and ended this node (ISO, the runner's clock); absent in plan mode */
  startedAt?: string;
  endedAt?: string;
  /** for refused/failed: what to check and how to recover */
  nextStep?: string;
  /**
   * optional: why the node stays cordoned although this run released it (one line: an operator's
   * cordon found at the claim, a quarantine kept). Absent: the release left it schedulable, or the node
   * was not released (its reason and next step say what is left on it).
   */
  cordonKept?: string;
  /**
   * optional: the autoscaler marks this run left in place, one line each (docs/autoscaler-marks.md): a mark
   * the node carried before the claim (someone else's, left exactly as found; a value other than "true"
   * says that autoscaler may remove the node while it is drained, and how to keep it off), and a mark the
   * claim wrote that its release kept because someone changed it, or the record, while the node was held.
   */
  autoscalerMarks?: MarksNote;
  /**
   * optional, only on a `rebooted` node: the node came back (new boot id, Ready, the config carrying the
   * desired credential) but the proof could not order containerd's start after the config write.
   * Set means the roll did not fail on it; see ProofUndecided.
   */
  proofUndecided?: ProofUndecided;
  /** plan mode only: what the credential patch would change in the node's machine config */
  configPreview?: ConfigPreview;
  /** only on a `quarantined` node: what blocked the drain and how to lift the quarantine */
  quarantine?: QuarantineNote;
  /** plan mode, only on a `planned-reboot` node: whether its drain would go through now (dry-run evictions) */
  drainForecast?: DrainForecast;
}

/** The autoscaler marks a run left in place on a node, one line each (docs/autoscaler-marks.md). */
export interface MarksNote {
  /** marks the node carried before the claim: someone else's, left exactly as found */
  found: string[];
  /** marks the claim wrote that a release kept: someone changed the mark, or the record, while the node was held */
  kept: string[];
}

/**
 * plan mode: what `kubectl drain` of the node would meet now. The pods it would evict, each asked to
 * the apiserver as a dry-run eviction (`dryRun=All`: the PDB check runs, nothing changes), and the
 * pods its own filters refuse before any eviction (src/rules/drainForecast.ts). A moment's answer,
 * not a promise: budgets change as pods come and go (docs/plan.md).
 */
export interface DrainForecast {
  /** the drain would go through now: nothing refused, nothing blocked, every dry run answered */
  ok: boolean;
  /** how many pods the drain would evict */
  evictions: number;
  /** pods whose dry-run eviction a PodDisruptionBudget refused (429), with the PDBs covering them (`namespace/name`) */
  blocked: Array<{ pod: string; budgets: string[]; message: string }>;
  /** the PDBs named in `blocked`, with their status as read */
  budgets: Array<{ pdb: string; disruptionsAllowed: number; currentHealthy: number; desiredHealthy: number }>;
  /** pods kubectl drain refuses with the action's flags, before evicting anything: the drain would fail at once */
  refusals: Array<{ pod: string; reason: string }>;
  /** dry runs that got no answer of the PDB check (transport, more than one PDB, …), and why */
  errors: Array<{ pod: string; message: string }>;
  /** set when the forecast could not be made at all (the pod list failed): why; the lists are then empty */
  unknown?: string;
  /**
   * optional: the drain can never finish and apply would refuse the node before claiming it (the
   * unsatisfiable-drain rule, src/rules/unsatisfiableDrain.ts, that apply's start check asks too)
   */
  unsatisfiable?: UnsatisfiableDrain;
}

/**
 * plan mode: what the credential patch would change in a node's machine config, from the action's own
 * change list (src/adapters/talos/machineConfig/plan.ts) and the checks it made on the patched text without the
 * node (docs/plan.md): never a value, never another program's text. No edits: the config already
 * carries the credential. Or why none is shown.
 */
export type ConfigPreview = { shown: true; edits: CredentialEdit[]; checks: string[] } | { shown: false; why: string };

/** One place of a machine config the credential patch writes, and what happens to each field there. */
export interface CredentialEdit {
  /** `RegistryAuthConfig/ghcr.io` or `v1alpha1 machine.registries.config.ghcr.io.auth` */
  target: string;
  action: 'added' | 'replaced';
  /** the credential fields before or after, by name (username, password, auth, identityToken); no value */
  fields: Array<{ name: string; change: 'added' | 'removed' | 'changed' | 'unchanged' }>;
  /** why this place is written: the patch gives it, or the node carries this form for the host too */
  because: string;
}

/**
 * A post-reboot proof that neither proved nor contradicted the credential being loaded (rules in
 * src/rules/proof.ts): what could not be proven, and how the run settled it.
 * - `verify-image`: containerd itself pulled `verify-image` with the node's credential: proven another way;
 * - `warning`: no `verify-image`; released (verified marker written) with a warning naming the residual risk.
 */
export interface ProofUndecided {
  /** the evidence rule's reason, one line: which ordering could not be proven, with the gap and the read path */
  unproven: string;
  settledBy: 'verify-image' | 'warning';
  /** what may still be wrong, for a person (one line) */
  residualRisk: string;
  /** for `warning`: how a person settles it */
  nextStep?: string;
}
