// The two ports the rollout talks through. Real implementations run kubectl/talosctl
// (kube/kubectl.ts, talos/cli/talosctl.ts, talos/api/); pipeline tests use in-memory fakes of the same interfaces.
import type { DrainPodReading, EvictionAnswer, PodOwnerReading, WorkloadStatus } from '../core/workloads.js';
import type { RolloutEvent } from '../core/events.js';
import type { EtcdAlarm, EtcdMember, EtcdMemberStatus, LeaseState, PdbState, PodLabels } from '../core/model/cluster.js';
import type { NodeState } from '../core/model/node.js';
import type { JsonPatchOp } from '../core/model/patch.js';
import type {
  CriServiceReading,
  EtcFileStatusReading,
  FileAuthReading,
  FileListing,
  Reading,
  ServicePidReading,
  TimeStatusReading,
} from '../core/model/readings.js';
import type { ConfigPreview } from '../core/model/record.js';
import type { CredentialForms } from '../core/model/credential.js';
import type { GateObject, ServedKind } from '../core/model/gates.js';

// The data the rules judge lives in core/model/cluster.ts; re-exported for the adapters' callers.
export type { EtcdAlarm, EtcdMember, EtcdMemberStatus, LeaseState } from '../core/model/cluster.js';

export interface PodContainerStatus {
  name: string;
  imageID: string;
  waitingReason?: string;
  waitingMessage?: string;
  terminated?: { exitCode: number; reason?: string };
  running?: boolean;
}

export interface PodState {
  namespace: string;
  name: string;
  uid: string;
  nodeName: string;
  phase: string;
  imagePullSecrets: string[];
  containerStatuses: PodContainerStatus[];
}

/** Every call throws a ToolError (src/core/errors.ts) with a classified cause on failure. */
export interface KubeClient {
  /**
   * How long past its own `timeoutMs` a `drain` may run before it is ended: a margin of this client,
   * part of what one node may take (src/rules/budget.ts).
   */
  readonly drainKillGraceMs: number;
  /** every node of the cluster (the run matches `node-selector` against it: src/core/labelSelector.ts) */
  listNodes(): Promise<NodeState[]>;
  getNode(name: string): Promise<NodeState>;
  /** `kubectl patch node --type=json`; a failed `test` op throws cause 'invalid' */
  patchNode(name: string, ops: JsonPatchOp[]): Promise<NodeState>;
  /**
   * `kubectl drain --ignore-daemonsets --delete-emptydir-data --timeout`. Aborting `signal` ends the
   * drain at once (the process is killed: no eviction is sent after that) and the call rejects.
   * `evicted` is called once the process ended, success or not, with `namespace/name` of each pod it
   * evicted (src/adapters/kube/parse/drainOutput.ts): a failed drain may have evicted some.
   */
  drain(name: string, timeoutMs: number, signal?: AbortSignal, evicted?: (pods: string[]) => void): Promise<void>;
  /**
   * The pods (all namespaces), with their controllers: of one node (`--field-selector spec.nodeName`),
   * or of the whole cluster. The settle gate's input (src/rules/settle.ts).
   */
  listPodOwners(nodeName?: string): Promise<PodOwnerReading[]>;
  /**
   * plan's drain forecast, in one command (`kubectl get pods,daemonsets.apps,poddisruptionbudgets.policy -A`):
   * every pod as drain's filters read it, `namespace/name` of every DaemonSet, every PDB.
   */
  listDrainInputs(): Promise<{ pods: DrainPodReading[]; daemonSets: string[]; pdbs: PdbState[] }>;
  /**
   * Every PodDisruptionBudget (all namespaces), with its spec and status: the unsatisfiable-drain start
   * check's first read before each start (src/pipeline/startChecks/unsatisfiableDrain.ts); the pods are
   * listed (listDrainInputs) only when a budget may hold a drain for good.
   */
  listPdbs(): Promise<PdbState[]>;
  /**
   * One dry-run eviction (`dryRun=All`: the apiserver runs the PDB check and changes nothing), one
   * kubectl process: `kubectl create --raw …/pods/P/eviction?dryRun=All -f -`. Never throws: a failure
   * is an answer of kind 'error'.
   */
  evictDryRun(namespace: string, name: string): Promise<EvictionAnswer>;
  /** Every Deployment, ReplicaSet and StatefulSet with its status, in one command (all namespaces). */
  listWorkloads(): Promise<WorkloadStatus[]>;
  /**
   * Watch one node: `onChange` gets every state of it written after `sinceResourceVersion` (every
   * current state when it is ''), `undefined` when it was deleted. One streaming watch at a time,
   * re-opened where it left off when the server ends it, re-read when its history expired
   * (docs/kubernetes-facts.md#k12-watch). Resolves when `signal` aborts; rejects (ToolError) only
   * when the watch cannot be kept: the node may then have changed unseen.
   */
  watchNode(
    name: string,
    sinceResourceVersion: string,
    onChange: (node: NodeState | undefined) => void,
    signal: AbortSignal,
  ): Promise<void>;
  /** `kubectl get --raw /readyz` */
  readyz(): Promise<void>;
  /**
   * The PodDisruptionBudgets and the pods (their labels) of one namespace, in one read
   * (`kubectl get poddisruptionbudgets,pods -n NS -o json`): what names the PDB that blocked a drain.
   */
  listDisruptionBudgets(namespace: string): Promise<{ pdbs: PdbState[]; pods: PodLabels[] }>;
  createPod(manifest: Record<string, unknown>): Promise<PodState>;
  /** undefined when the pod does not exist */
  getPod(namespace: string, name: string): Promise<PodState | undefined>;
  deletePod(namespace: string, name: string): Promise<void>;
  /** undefined when the Lease does not exist */
  getLease(namespace: string, name: string): Promise<LeaseState | undefined>;
  /** create; an existing Lease throws cause 'conflict' (AlreadyExists) */
  createLease(namespace: string, name: string, spec: Record<string, unknown>): Promise<LeaseState>;
  /** `kubectl patch lease --type=json`; a failed `test` op throws cause 'invalid' */
  patchLease(namespace: string, name: string, ops: JsonPatchOp[]): Promise<LeaseState>;
  /**
   * The node and the Lease in one command (`kubectl get node/N lease/L -n NS`): a node read that
   * also proves who holds the run lock (src/pipeline/lease.ts, proveByRead). Throws as getNode does when the
   * node cannot be read; a Lease that cannot be read is reported in `lease`, never thrown.
   */
  getNodeAndLease(name: string, leaseNamespace: string, leaseName: string): Promise<{ node: NodeState; lease: LeaseReading }>;
  /**
   * Writes `events` as core/v1 Events in one command (`kubectl create -f -` of a v1 List on stdin,
   * src/adapters/kube/eventList.ts). Throws a ToolError when any of them was not written (kubectl
   * creates the others).
   */
  createEvents(events: readonly RolloutEvent[]): Promise<void>;
  /** Every kind the cluster serves, in its preferred version (`kubectl api-resources`): the health gates ask once per run. */
  servedKinds(): Promise<ServedKind[]>;
  /** Every object of `kinds`, all namespaces, in one command (`kubectl get a,b,c -A -o json`): one health-gate check. */
  listGateObjects(kinds: readonly ServedKind[]): Promise<GateObject[]>;
}

/** The Lease as read beside a node: undefined when it does not exist; `error` when it could not be read. */
export type LeaseReading = { ok: true; lease: LeaseState | undefined } | { ok: false; error: string };

/**
 * Talos is addressed by node address (the InternalIP). The batch reads take several addresses and
 * answer per address; an address whose reading failed maps to `{ok:false}` with the reason.
 */
/**
 * How long a Talos client's `reboot` may run past its `timeoutMs`, for the time budget
 * (src/rules/budget.ts): `withBootIdMs` when the pipeline read the boot id before it (that read has its
 * own bound, the pipeline's), `withoutBootIdMs` when the role may not read it (that read was refused at
 * once, so its bound was not spent). A margin of each path: the two paths end a reboot differently.
 */
export interface RebootGrace {
  withBootIdMs: number;
  withoutBootIdMs: number;
}

export interface TalosClient {
  /** see RebootGrace: this path's own margins past a reboot's `timeoutMs` */
  readonly rebootGrace: RebootGrace;
  version(addresses: string[]): Promise<Map<string, Reading<string>>>;
  criService(addresses: string[]): Promise<Map<string, Reading<CriServiceReading>>>;
  /** undefined value: the node does not offer ServicePIDs (Talos < 1.13) */
  servicePids(addresses: string[]): Promise<Map<string, Reading<ServicePidReading> | undefined>>;
  /** `ls -l` of each path on each address; a missing file is `{ok:true, value:{exists:false}}` */
  listFiles(addresses: string[], paths: string[]): Promise<Map<string, Map<string, Reading<FileListing>>>>;
  /** `get etcfilestatus` for each path (`/etc/cri/conf.d/cri.toml` → id `cri/conf.d/cri.toml`) */
  etcFileStatus(addresses: string[], paths: string[]): Promise<Map<string, Map<string, Reading<EtcFileStatusReading>>>>;
  timeStatus(addresses: string[]): Promise<Map<string, Reading<TimeStatusReading>>>;
  /** `talosctl read PATH` parsed as CRI TOML; one address (talosctl refuses several) */
  readAuth(address: string, path: string): Promise<Reading<FileAuthReading>>;
  /**
   * Applies the run's auth patch (the one the client was opened with): `patch machineconfig
   * --mode=no-reboot --patch-file F`, or over the API ApplyConfiguration (talos/api/applyConfig.ts);
   * throws ToolError
   */
  patchMachineConfig(address: string): Promise<void>;
  /**
   * The kernel's boot id (`/proc/sys/kernel/random/boot_id`, trimmed), one read within `timeoutMs`:
   * over the API `Read`, or `talosctl read`. Throws ToolError (`forbidden`: the role may not Read).
   */
  bootId(address: string, timeoutMs: number): Promise<string>;
  /**
   * Reboots and resolves when the node answers with a boot id other than `bootBefore` (read just before
   * with bootId), within `timeoutMs` of the Reboot's answer: over the API MachineService.Reboot and the
   * boot id (talos/api/reboot.ts), or `talosctl reboot --wait --timeout`, whose own read of the boot id
   * before it answers at once after ours. `bootBefore` undefined (the role may not read it): through
   * talosctl, which follows the reboot by its event stream.
   */
  reboot(address: string, timeoutMs: number, bootBefore?: string): Promise<void>;
  /**
   * plan mode: what the credential patch would change in one node's machine config, from the action's
   * own change list (the config is read, nothing is applied, not even as a dry run: docs/plan.md). API
   * path only: absent on the CLI path, where talosctl applies the patch with Talos's own merge. Throws
   * ToolError.
   */
  previewCredentialPatch?(address: string): Promise<ConfigPreview>;
  /**
   * Which credential forms the node's machine config carries (by host, no value), read before a patch
   * that talosctl applies with Talos's own merge. Absent on a client that writes the credential itself
   * in every form the node carries (the API path with a credential-form patch), where no form can be
   * left shadowed. The config's secrets are registered for masking as it is read. Throws ToolError.
   */
  readCredentialForms?(address: string): Promise<CredentialForms>;
  etcdStatus(address: string): Promise<EtcdMemberStatus[]>;
  etcdAlarms(address: string): Promise<EtcdAlarm[]>;
  /** etcd's member list as the etcd at `address` holds it (its local copy: QueryLocal) */
  etcdMembers(address: string): Promise<EtcdMember[]>;
}
