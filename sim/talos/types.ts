// Public types of the simulated Talos half of the twin.

/** Registry credential fields as Talos machine config carries them (RegistryAuthConfig / legacy auth). */
export interface AuthFields {
  username?: string;
  password?: string;
  auth?: string;
  identityToken?: string;
}

export type TalosVersion = '1.13' | '1.14';
export type NodeRole = 'control-plane' | 'worker';

export interface ClockState {
  /** node wall clock minus the real clock, in ms (positive: node ahead) */
  offsetMs: number;
  synced: boolean;
  epoch: number;
}

export interface ServiceEvent {
  state: string;
  msg: string;
  /** node wall clock, ms since the Unix epoch */
  ts: number;
}

export interface ServiceHealth {
  unknown: boolean;
  healthy: boolean;
  lastMessage: string;
}

/** A COSI resource's metadata timestamps and version, on the node clock. */
export interface CosiMeta {
  version: number;
  created: number;
  updated: number;
}

export interface SimFile {
  content: string;
  /** node wall clock, ms */
  mtimeMs: number;
  mode: string;
  label: string;
}

export interface ContainerdState {
  /** 0 while not running */
  pid: number;
  /** node clock instant of the latest launch */
  startedAtMs: number;
  /** the credential per registry host that the running containerd read at its start */
  loadedCredential: Record<string, AuthFields>;
  /** loaded by machined, so ServiceList lists it (false after a reboot until StartAllServices / cri.ServiceController) */
  listed: boolean;
  state: string;
  health: ServiceHealth;
  /** oldest first, at most 64 */
  events: ServiceEvent[];
  mountNamespace: string;
  /** COSI Services.v1alpha1.talos.dev `cri`; absent while not Running */
  serviceResource?: CosiMeta & { running: boolean; healthy: boolean; unknown: boolean };
  /** COSI ServicePIDs.runtime.talos.dev `cri`; absent while no process runs */
  servicePid?: CosiMeta & { pid: number; mountNamespace: string };
}

export interface EtcdState {
  /** 16 lower-case hex digits, as `etcd status` prints it */
  memberId: string;
  healthy: boolean;
  learner: boolean;
  alarms: Array<'NOSPACE' | 'CORRUPT'>;
  errors: string;
}

/**
 * One entry of etcd's member list. The list is the cluster's own record, kept by etcd and changed only
 * by joins, `etcd leave` and `etcd remove-member`: it is NOT derived from the machines or from the
 * Kubernetes Nodes, so it can hold a voter whose machine is gone or whose Node was deleted, a member
 * added by hand, or a learner (docs/talos-facts.md#t18-etcd-membership).
 */
export interface SimEtcdMember {
  /** 16 lower-case hex digits */
  id: string;
  /** etcd's member name, on Talos the machine's hostname; '' until the member has started */
  name: string;
  peerUrls: string[];
  clientUrls: string[];
  learner: boolean;
}

export interface MachineConfigState {
  /**
   * the config's bytes as the node stores and serves them: the text an ApplyConfiguration sent, kept
   * as sent (configloader keeps the source bytes, container.NewReadonly; the MachineConfig resource
   * serves cfg.Bytes()); the fields below are what Talos reads from it (Go's YAML: sim/talos/goYaml.ts)
   */
  text: string;
  /** the v1alpha1 document as a plain tree (strategic merge and JSON patches apply to it) */
  v1alpha1: Record<string, unknown>;
  /** RegistryAuthConfig documents by name */
  registryAuth: Record<string, AuthFields>;
  /** other multi-doc documents, kept to tell whether a patch changed anything */
  otherDocs: Array<Record<string, unknown>>;
  /** COSI version of MachineConfigs.config.talos.dev/v1alpha1 */
  version: number;
}

export interface SimTalosNode {
  name: string;
  ip: string;
  role: NodeRole;
  version: TalosVersion;
  bootID: string;
  /** node clock instant of the current boot */
  bootedAtMs: number;
  /** false while the machine is rebooting (unreachable) */
  up: boolean;
  /** node clock instant the current boot began to answer (apid up); 0 for the boot the node was created in */
  answeredAtMs: number;
  clock: ClockState;
  machineConfig: MachineConfigState;
  /** the effective machine-config registry auth per host (what the CRI files render); read-only view */
  readonly auth: Record<string, AuthFields>;
  /** path → file, for the paths the sim renders (the CRI conf.d files) */
  files: Map<string, SimFile>;
  /** EtcFileStatuses.files.talos.dev by id (`cri/conf.d/cri.toml`) */
  etcFileStatus: Map<string, CosiMeta & { specVersion: string }>;
  containerd: ContainerdState;
  /** undefined on workers */
  etcd?: EtcdState;
  /** normalized image refs present in the CRI containerd namespace */
  images: Set<string>;
}

export interface CommandRecord {
  argv: string[];
  nodes: string[];
  /** top-level command name: service, ls, read, get, patch, reboot, etcd, image, version ('' if unparsed) */
  command: string;
  /** full command path below talosctl, e.g. `etcd status`, `image pull` */
  path: string;
  mutating: boolean;
  exitCode: number;
  /** real clock, ms, when the sim received the call */
  at: number;
  /** `api`: a mutation sent over the Talos API (no talosctl ran; argv is empty, exitCode the gRPC code) */
  via?: 'api';
}

export type FailAction =
  | { unavailable: true }
  | { stderr: string; exitCode: number }
  /**
   * stderr computed from the call, e.g. an error that echoes the patch file it was given (the
   * contents of every `--patch-file`, in order), as a failing `patch machineconfig` may.
   */
  | { stderrFrom: (call: { args: string[]; patches: string[] }) => string; exitCode: number };

export interface FailMatch {
  /** top-level name (`service`, `ls`, `reboot`…) or full path (`etcd status`) */
  command: string;
  node?: string;
  count?: number;
}

export interface AddNodeSpec {
  name: string;
  ip: string;
  role: NodeRole;
  version?: TalosVersion;
  credential: Record<string, AuthFields>;
  /**
   * where the config carries `credential`: the legacy `machine.registries.config.<host>.auth` map
   * (default), a RegistryAuthConfig document, or both at once, the document carrying `credential`
   * (it wins: Talos merges documents over the legacy map) and the legacy map `staleLegacyCredential`
   */
  credentialForm?: 'legacy' | 'document' | 'both';
  /** with credentialForm `both`: what the shadowed legacy map still holds; default SIM_STALE_LEGACY for each host */
  staleLegacyCredential?: Record<string, AuthFields>;
  loadedCredential?: Record<string, AuthFields>;
  bootedAgoMs?: number;
  configWrittenAgoMs?: number;
  criStartedAgoMs?: number;
  /** cri's health checks held from the start, until TalosSim.releaseCriHealth (see holdCriHealth) */
  criHealthHeld?: boolean;
  clock?: { offsetMs?: number; synced?: boolean; epoch?: number };
  eventsWithoutStart?: boolean;
  /** the initial boot's launch − cri.toml write (overrides the drawn and the sim-wide pinned gap) */
  bootGapMs?: number;
  /** fault mode (≤1.13): at the initial boot containerd launched before cri.toml was written, reading the placeholder */
  criFirst?: boolean;
  /** fault mode (1.14): after each reboot cri is restarted once more just after the node is up (see CriRestartAfterBoot) */
  criRestartAfterBoot?: CriRestartAfterBoot;
}

/**
 * A Talos 1.14 node whose base-spec.json is rendered once more `afterUpMs` after it is back from a
 * reboot (counted from the launch of the boot's containerd, before its first health check), so cri.ServiceController stops and starts cri again while the node is already up (and soon
 * Ready): the new containerd has health "?" for the first second, then fails its first
 * `failingChecks` health checks (one every 5 s) before the next one succeeds.
 */
export interface CriRestartAfterBoot {
  afterUpMs: number;
  failingChecks?: number;
}
