// Plain data shared by the rules, the adapters, the rollout and the report.
// Nothing in here does I/O; every type is a value a test can write by hand.

/** One taint exactly as the apiserver stores it (`timeAdded` kept, so a JSON Patch `test` can match it byte for byte). */
export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

export type Role = 'worker' | 'control-plane';

/** The fields of a Node that the action reads; built by the kubectl adapter from `kubectl get node -o json`. */
export interface NodeState {
  name: string;
  uid: string;
  resourceVersion: string;
  /** set when the node is being deleted */
  deletionTimestamp?: string;
  /** `spec.unschedulable` (absent on the server means false) */
  unschedulable: boolean;
  /** `spec.taints` as stored, in server order; empty when the key is absent */
  taints: Taint[];
  labels: Record<string, string>;
  /** `metadata.annotations`; empty when absent */
  annotations: Record<string, string>;
  /** whether `metadata.annotations` exists as a key at all: a JSON Patch `add` below a missing map fails */
  hasAnnotationsMap: boolean;
  /** every `status.addresses[type=InternalIP]` address, in order */
  internalIPs: string[];
  role: Role;
  /** status of the Ready condition; 'Unknown' when missing */
  ready: 'True' | 'False' | 'Unknown';
  /** `status.nodeInfo.bootID`; empty when missing */
  bootID: string;
}

/** Annotation keys under the user's prefix. */
export interface AnnotationKeys {
  owner: string;
  phase: string;
  wasCordoned: string;
  verifiedRevision: string;
  /** a node left cordoned because its drain timed out (`undrainable: quarantine`; src/rules/quarantine.ts) */
  quarantined: string;
}

export function annotationKeys(prefix: string): AnnotationKeys {
  return {
    owner: `${prefix}/owner`,
    phase: `${prefix}/phase`,
    wasCordoned: `${prefix}/was-cordoned`,
    verifiedRevision: `${prefix}/verified-revision`,
    quarantined: `${prefix}/quarantined`,
  };
}

/** One JSON Patch (RFC 6902) operation as the action sends it. */
export type JsonPatchOp =
  | { op: 'test'; path: string; value: unknown }
  | { op: 'add'; path: string; value: unknown }
  | { op: 'replace'; path: string; value: unknown }
  | { op: 'remove'; path: string };

/** What the claim captured from its fresh read; the guard and the release compare against it. */
export interface ClaimCapture {
  node: string;
  uid: string;
  internalIP: string;
  role: Role;
  wasCordoned: boolean;
  /** `spec.taints` exactly as read (the claim's `test` op compares it in order) */
  taints: Taint[];
  /** scheduling taints: all but the cordon mirror and the autoscaler's advisory taint, as sorted `key=value:effect` strings (`taintId`) */
  schedulingTaints: string[];
  owner: string;
  /** whether `metadata.annotations` existed at the read (optional; lets a retry say "annotations map appeared") */
  hadAnnotationsMap?: boolean;
  /**
   * optional: the `quarantined` annotation exactly as the claim read it. Set, the node was cordoned at
   * the claim BECAUSE of a quarantine, and `wasCordoned` is the quarantine's record of the time before.
   */
  quarantined?: string;
}

/** The four auth fields containerd's CRI config carries for a registry host (empty string = absent). */
export interface AuthFields {
  username: string;
  password: string;
  auth: string;
  identitytoken: string;
}

/** The credential the auth patch asks for. The secret fields must never be logged. */
export interface DesiredCredential {
  /** registry host as named in the patch (e.g. `ghcr.io`, `docker.io`) */
  host: string;
  /** the key containerd's TOML uses for it (`docker.io` becomes `registry-1.docker.io`) */
  tomlHost: string;
  fields: AuthFields;
}

// ---------------------------------------------------------------------------------------------
// Evidence readings: what the talosctl adapter read from one node, parsed but not judged.
// All instants are epoch milliseconds. Instants taken from the node are on the node's clock.
// ---------------------------------------------------------------------------------------------

/** A reading that either worked or failed with a reason a user can act on. */
export type Reading<T> = { ok: true; value: T } | { ok: false; error: string };

/** Which path read a node: the Talos API over gRPC (nanosecond instants) or talosctl's printed text. */
export type ReadPath = 'api' | 'cli';

/**
 * An instant on the node's clock, known only within the bounds of the reading that produced it.
 * Epoch milliseconds, fractional (a nanosecond API timestamp keeps sub-millisecond digits; a double
 * holds about 0.25 µs at today's epoch). An exact reading has `earliestMs === latestMs`.
 * Each adapter turns what it read into these bounds (docs/talos-evidence-timing.md says how); the
 * evidence rule reasons on the bounds only, so both read paths are judged by one rule.
 */
export interface Instant {
  earliestMs: number;
  latestMs: number;
  via: ReadPath;
  /** what was read: an RFC 3339 timestamp with its digits (API) or the text talosctl printed (CLI) */
  text: string;
}

export interface ServiceEvent {
  state: string;
  message: string;
  /** when the event was logged, on the node's clock (CLI: placed from its "(D ago)" age and the runner window) */
  at: Instant;
}

/** The cri service's state and event history, with the runner's clock read just before and just after the call. */
export interface CriServiceReading {
  via?: ReadPath;
  state: string;
  health: string;
  lastHealthMessage?: string;
  /** in the order read (CLI: newest first; API: oldest first). Never rely on it: order by `at`. */
  events: ServiceEvent[];
  clientBeforeMs: number;
  clientAfterMs: number;
}

/** ServicePIDs.runtime.talos.dev `cri` (Talos >= 1.13), recorded right after the launch. */
export interface ServicePidReading {
  pid: number;
  /** metadata.created: recorded right after the launch, so an upper bound of it */
  created: Instant;
}

/** A config file's presence and modification time (`ls -l` on the CLI path, `MachineService.List` on the API path). */
export interface FileListing {
  path: string;
  exists: boolean;
  /** the LASTMOD cell exactly as printed (CLI) */
  lastModText?: string;
  /**
   * the modification time with its truncation as bounds, present when the file exists (whole seconds
   * on both paths, a minute for an old `ls -l` row: never the ordering instant on the API path)
   */
  mtime?: Instant;
}

/** EtcFileStatuses.files.talos.dev: updated after the controller wrote the file, so an upper bound of the write. */
export interface EtcFileStatusReading {
  id: string;
  /** max(metadata.created, metadata.updated): the status is recorded after the write it describes */
  updated: Instant;
  specVersion?: string;
}

/** `talosctl read PATH` parsed as TOML: the auth entries for each registry host. Never logged. */
export interface FileAuthReading {
  path: string;
  exists: boolean;
  /** host key as in the TOML (`registry-1.docker.io`, `ghcr.io`) → auth fields */
  auth: Record<string, AuthFields>;
}

export interface TimeStatusReading {
  synced: boolean;
  epoch: number;
}

export interface ConfigFileReadings {
  path: string;
  listing: Reading<FileListing>;
  /** absent when the adapter has no etcfilestatus for this path */
  status?: Reading<EtcFileStatusReading>;
  /** absent when the listing said the file does not exist (nothing to read) */
  content?: Reading<FileAuthReading>;
}

export interface EvidenceReadings {
  node: string;
  /** server Tag from `talosctl version`, e.g. `v1.13.8` */
  talosVersion: Reading<string>;
  criService: Reading<CriServiceReading>;
  /** undefined when the node does not offer the resource (Talos < 1.13) */
  servicePid?: Reading<ServicePidReading>;
  files: ConfigFileReadings[];
  timeStatus: Reading<TimeStatusReading>;
}

/** Every value the evidence rule compared, for the summary and the decision output. */
export interface EvidenceValues {
  criState?: string;
  criHealth?: string;
  criPid?: number;
  /** earliest instant containerd could have started (ISO): the newest pre-launch event of its run */
  criStartEarliest?: string;
  /** optional: latest instant it could have started (ISO): ServicePID created / the start event */
  criStartLatest?: string;
  criStartSource?: string;
  /** latest instant any config file could have been written (ISO) */
  configWrittenLatest?: string;
  /** optional: the launch's bounds in epoch ms (node clock), for a compact rendering */
  criStart?: { earliestMs: number; latestMs: number };
  /** optional: the last write's bounds in epoch ms (node clock) */
  configWrite?: { earliestMs: number; latestMs: number };
  /** optional: earliest instant the last write could have been (ISO): the newest file's mtime */
  configWrittenEarliest?: string;
  configWrittenPath?: string;
  marginMs: number;
  /** start − write, in ms, when both are known: the lower end of `gap` (what the margin is compared with) */
  gapMs?: number;
  /** optional: every value start − write can take given the bounds of both instants, in ms */
  gap?: { lowMs: number; highMs: number };
  /** optional: which path read the instants that decided ('mixed' when the two paths were combined) */
  readPath?: ReadPath | 'mixed';
  timeSynced?: boolean;
  timeEpoch?: number;
  /** per path: exists, lastMod as printed, whether it carries the desired credential */
  files: Array<{
    path: string;
    exists?: boolean;
    lastMod?: string;
    updated?: string;
    credential?: 'desired' | 'old' | 'absent' | 'unknown';
    /** optional: latest instant this file could have been written (ISO) */
    latestWrite?: string;
  }>;
  talosVersion?: string;
  /** optional: the current run's "started with PID" event and its instant as read (ISO of the bounds) */
  criEvent?: { pid: number; at: string; text?: string };
  /** optional: `get servicepids cri`, as read (created ISO, node clock) */
  servicePid?: { pid: number; created: string };
  /** optional: the runner clock just before and after `talosctl service cri` (ISO) */
  runnerWindow?: { before: string; after: string };
  /** optional, on a reading after the credential patch: the launch the reading before it placed (PID, latest ISO) */
  launchBeforePatch?: { pid: number; latest: string };
}

/** A containerd launch a reading placed: its PID and the launch's bounds (node clock, epoch ms). */
export interface CriLaunch {
  pid: number;
  earliestMs: number;
  latestMs: number;
}

/**
 * What the instants say about containerd's start against the last config write:
 * - `after`: provably after by more than the margin (the only ordering that may skip);
 * - `undecidable`: the bounds overlap, the gap is within the margin, or the clock cannot be trusted;
 * - `before`: provably before (start.latest < write.earliest), on a clock the checks trust;
 * - `unknown`: an instant could not be read at all.
 */
export type EvidenceOrdering = 'after' | 'undecidable' | 'before' | 'unknown';

export interface EvidenceVerdict {
  verdict: 'skip' | 'reboot';
  /** one line a user reads in the summary table */
  reason: string;
  values: EvidenceValues;
  /** optional: the ordering of start and write (see EvidenceOrdering) */
  ordering?: EvidenceOrdering;
  /**
   * optional: true when the readings prove the running containerd does NOT hold the desired
   * credential (cri not Running, an old or absent credential in an existing config file, or a start
   * provably before the write), as opposed to merely failing to prove that it does. After a reboot,
   * only a contradicting proof is a failed roll; an undecidable one is a residual risk to report.
   */
  contradicts?: boolean;
  /**
   * optional: set when a reading the rule needs was not there — not taken, failed, or of a file not
   * there yet (listed but not read, read but not found, no EtcFileStatus yet) — with the first such
   * reason. Absent: every reading the rule needs was taken. A `skip` is never incomplete. After a
   * reboot an incomplete reading is read again, never judged (src/rules/proof.ts).
   */
  incomplete?: string;
}

// ---------------------------------------------------------------------------------------------
// Decision records: built as a node goes through its steps; the only input of the report.
// ---------------------------------------------------------------------------------------------

/**
 * How a whole run ended: the action's `result` output, for every mode. `clean` nothing to do,
 * `processed` something done, `planned` (plan), `partial` (the time budget stopped the roll with
 * nodes left; every node started ended cleanly), `failed`.
 */
export const ACTION_RESULTS = ['clean', 'processed', 'planned', 'partial', 'failed'] as const;
export type ActionResult = (typeof ACTION_RESULTS)[number];

export type Outcome = 'rebooted' | 'reboot-skipped' | 'planned-reboot' | 'planned-skip' | 'refused' | 'failed' | 'quarantined';

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
 * evicted workloads to be available again (`startedAt`..`endedAt`), or the time budget refusing a
 * start (`startedAt` only: from then on nothing new starts). ISO instants of the runner's clock.
 */
export interface RollHold {
  kind: 'settle' | 'budget';
  startedAt: string;
  /** absent while it holds, and for a budget stop */
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
   * optional, only on a `rebooted` node: the node came back (new boot id, Ready, the config carrying the
   * desired credential) but the proof could not order containerd's start after the config write.
   * Set means the roll did not fail on it; see ProofUndecided.
   */
  proofUndecided?: ProofUndecided;
  /** plan mode only: what the credential patch would change in the node's machine config */
  configPreview?: ConfigPreview;
  /** only on a `quarantined` node: what blocked the drain and how to lift the quarantine */
  quarantine?: QuarantineNote;
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
 * - `warning`: no `verify-image`; released (verified-revision written) with a warning naming the residual risk.
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

// ---------------------------------------------------------------------------------------------
// A node's phase in this run: the one record of how far the run got with it and what it leaves.
// ---------------------------------------------------------------------------------------------

/**
 * - `read`: read, nothing written yet;
 * - `claiming`: the claim was sent and its outcome is not known (yet): the node may carry this run's
 *   claim (owner, phase=claimed, the cordon) or nothing of it. The post step reads the node to know;
 * - `claimed`: cordoned and claimed, nothing on Talos changed;
 * - `mutating`: phase=mutating is on the node, the credential patch may have been sent;
 * - `settling`: the credential patch was applied and the settle gate waits (or reads) before the
 *   drain: nothing drained, no reboot started, so a run that ends here gives the node back, as in
 *   `draining` (the annotation still says phase=mutating);
 * - `draining`: the credential patch was applied, the drain runs, no reboot started;
 * - `rebooting`: the reboot was sent; `proving`: the node is back, the proof is read;
 * - `released`: given back (verified or restored); nothing of this run is left on it;
 * - `left-fenced`: left cordoned and claimed for a person to check (Talos may have changed);
 * - `left-as-set`: another actor changed the node while this run held it: left exactly as they set it;
 * - `quarantined`: its drain timed out (`undrainable: quarantine`): the claim was given up in one patch
 *   that kept the cordon and wrote the `quarantined` annotation; nothing of the claim is left on it.
 */
export const NODE_PHASES = [
  'read',
  'claiming',
  'claimed',
  'mutating',
  'settling',
  'draining',
  'rebooting',
  'proving',
  'released',
  'left-fenced',
  'left-as-set',
  'quarantined',
] as const;
export type NodePhase = (typeof NODE_PHASES)[number];

/**
 * The values of the `<prefix>/phase` annotation a claim writes on the node (not the pipeline's NodePhase:
 * the annotation says what a person or the post step finds on the node; `mutating` from the moment the
 * credential patch may be sent).
 */
export const ANNOTATED_PHASES = ['claimed', 'mutating'] as const;
export type AnnotatedPhase = (typeof ANNOTATED_PHASES)[number];

/** A node this run still holds (or left), as handed from the main step to the post step. */
export interface HeldNode {
  node: string;
  phase: NodePhase;
  /** for `left-fenced` / `left-as-set`: the phase the node was in when the run stopped on it */
  stoppedIn?: NodePhase;
  capture: ClaimCapture;
  owner: string;
}

// Data read from the cluster and GitHub that the pure rules judge (their adapters re-export them).

/** A coordination.k8s.io/v1 Lease, as far as the run lock reads it. */
export interface LeaseState {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  /** empty when free */
  holderIdentity: string;
  leaseDurationSeconds?: number;
  /** MicroTime strings as stored (RFC 3339 with 6 fractional digits) */
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** A Kubernetes label selector (`matchLabels` and `matchExpressions`), as a PodDisruptionBudget carries it. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

/** A policy/v1 PodDisruptionBudget, as far as naming what blocked a drain needs it. */
export interface PdbState {
  namespace: string;
  name: string;
  /** undefined: the PDB has no selector (it selects nothing) */
  selector?: LabelSelector;
  status: { disruptionsAllowed: number; currentHealthy: number; desiredHealthy: number };
}

/** A pod's name and labels (what a PDB selector is matched against). */
export interface PodLabels {
  namespace: string;
  name: string;
  labels: Record<string, string>;
}

export interface EtcdMemberStatus {
  /** the NODE column (the address we asked) */
  node: string;
  memberId: string;
  learner: boolean;
  errors: string;
}

export interface EtcdAlarm {
  node: string;
  memberId: string;
  alarm: string;
}

/**
 * One entry of etcd's member list (`talosctl etcd members`, MachineService.EtcdMemberList): etcd's own
 * record of who votes, independent of the Kubernetes Nodes (docs/talos-facts.md#t18-etcd-membership).
 */
export interface EtcdMember {
  /** 16 lower-case hex digits, as `etcd status` and `etcd remove-member` write it */
  id: string;
  /** the member's name (on Talos the machine's hostname); '' while the member has not started */
  name: string;
  peerUrls: string[];
  clientUrls: string[];
  learner: boolean;
}

export type RunState = 'queued' | 'in_progress' | 'completed' | 'unknown';

export interface RunAttemptInfo {
  state: RunState;
  /** GitHub's conclusion (success, failure, cancelled, …) once completed */
  conclusion?: string;
  /** the run attempt's page, for people */
  url: string;
  /** why the state is unknown */
  error?: string;
}
