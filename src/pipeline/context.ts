// What a roll runs with: the ports (kube, talos, Lease, clock, log), the validated config, and the
// per-run state every step shares (defaults resolved once, the Talos versions read so far, the
// holds and the settle gate). The fence read before each mutation is src/pipeline/fence.ts.
import type { KubeClient, LeaseReading, RebootGrace, TalosClient } from '../adapters/types.js';
import { realClock, type Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import type { NodeLogs } from '../report/nodeLog.js';
import { HoldRecorder } from './holds.js';
import { SettleGate } from './settle.js';
import { HealthGates } from './gates.js';
import type { DesiredCredential, PatchForms } from '../core/model/credential.js';
import type { AnnotationKeys } from '../core/model/node.js';
import type { HeldNode } from '../core/model/phase.js';
import type { Reading } from '../core/model/readings.js';
import { EventWriter } from './events.js';
import type { PreflightSummary } from '../core/model/preflight.js';
import type { MarkerWant } from '../rules/marker.js';
import type { SilencesClient } from '../adapters/alertmanager/silences.js';

export interface RolloutLog {
  info(message: string): void;
  /** start of a node's log group; the returned function ends it */
  group(title: string): () => void;
  /** a step starting: shown at once even while the node's group is buffered (src/report/nodeLog.ts) */
  progress?(message: string): void;
}

/** The per-node log groups of src/report/nodeLog.ts (main routes the runner's command lines through it). */
export type NodeLogsLike = Pick<NodeLogs, 'info' | 'forNode' | 'within' | 'flushAll'>;

/** What the rollout needs of src/pipeline/runLock.ts's RunLock (a narrow port, so tests can pass a fake). */
export interface RunLockLike {
  /** read-only: throws when another run holds the Lease (asked only when the first listing refuses the run) */
  checkNotHeldByAnother(): Promise<void>;
  acquire(): Promise<void>;
  /** the run whose expired Lease acquire() took over, if it did (its claims are abandoned: docs/recovery.md) */
  readonly tookOverFrom?: string;
  startRenewing(): void;
  /** throws when the lock is known lost (another holder seen by a renewal, or renewals failing past its duration) */
  assertHeld(): void;
  /** where the Lease is: the fence read before a mutation reads it beside the node; its uid once held (the run's Event names it) */
  readonly ref: { namespace: string; name: string; uid?: string };
  /** proves the Lease is still ours (by `read`, the Lease read with the node just before, or by a renewal now); throws when it is not */
  confirm(read?: LeaseReading): Promise<void>;
  release(): Promise<{ released: boolean; message: string }>;
  stop(): void;
}

/** The Talos client as the shell opens it (src/action/rollout.ts), and which path it reads through and why, one line. */
export interface OpenedTalosPort {
  client: TalosClient;
  describe: string;
}

export interface RolloutDeps {
  kube: KubeClient;
  /** the Talos client, already open (tests, fakes); else `openTalos` opens it when the run has a node to change */
  talos?: TalosClient;
  /**
   * Opens the Talos client (the API connection and its server check, or the talosctl path) once the
   * first listing selects a node to roll, before the plan or the Lease: a run with nothing to roll makes
   * no Talos call (src/pipeline/run.ts). Throws (an unusable talosconfig, a server that is not apid,
   * talosctl missing) before anything is changed.
   */
  openTalos?: () => Promise<OpenedTalosPort>;
  /**
   * The shortest reboot grace of the Talos paths `openTalos` may choose, for the time-budget check
   * before anything is read: the path is chosen only when the client is opened (src/pipeline/run.ts).
   */
  rebootGraceBeforeOpen?: RebootGrace;
  /**
   * The pre-flight check of the registry (src/pipeline/preflight.ts, as the shell runs it), once, after
   * the first listing and before the plan or the Lease: in apply only when a node is selected to roll
   * (docs/preflight.md, "When"); throws a PreflightError to stop the run, nothing changed.
   */
  preflight?: () => Promise<PreflightSummary>;
  config: Config;
  /** the registry hosts the run rolls, each with the credential the auth patch gives it (at least one) */
  desired: DesiredCredential[];
  /** the credential forms the auth patch writes (src/core/authPatch.ts): checked against each node's before its claim when Talos's merge applies the patch */
  patchForms?: PatchForms;
  /** this run's claim token */
  owner: string;
  keys: AnnotationKeys;
  clock?: Clock;
  log?: RolloutLog;
  /** interval of the post-reboot and probe polls */
  pollIntervalMs?: number;
  /** receives the nodes this run holds or left, each time one of their phases changes (the post step reads it) */
  publishHeld?: (held: HeldNode[]) => void;
  /** true once the runner was cancelled: no new step starts */
  cancelled?: () => boolean;
  /** the run-wide Lease (apply mode); acquired before the first mutation */
  lock?: RunLockLike;
  /** per-node log groups; by default built over `log` */
  nodeLogs?: NodeLogsLike;
  /** pause between the two empty listings that end a run (an autoscaler node may still register) */
  relistPauseMs?: number;
  /** the run's masking of its secrets, for the text of the Kubernetes Events it writes */
  redact?: (text: string) => string;
  /**
   * Opens the Alertmanager's silences client (`alertmanager-url` set; src/action/rollout.ts), when the
   * roll is about to start: reads `alertmanager-ca-file` and the runner's proxies, so it may throw (the
   * silence check says so as a warning: docs/alert-silence.md)
   */
  openSilences?: () => SilencesClient;
}

/** The deps with every default resolved, plus what the run accumulates. */
export interface RunContext extends Omit<RolloutDeps, 'clock' | 'log' | 'pollIntervalMs' | 'relistPauseMs' | 'talos'> {
  /** `deps.talos`, or the client `openTalos` gives once the run has a node to roll (src/pipeline/run.ts sets it before any step runs) */
  talos: TalosClient;
  clock: Clock;
  log: RolloutLog;
  pollIntervalMs: number;
  relistPauseMs: number;
  /** Talos versions read during this run, by address (see readEvidence's EvidenceHints) */
  versions: Map<string, Reading<string>>;
  /** config paths each node's latest listing showed absent, by address (see readEvidence's EvidenceHints) */
  absentPaths: Map<string, ReadonlySet<string>>;
  /** when the settle gate, a health gate, the time budget or the maintenance windows held starts back, in order (the summary's timeline); shared by every node's view */
  holds: HoldRecorder;
  /** the settle gate: what this run's drains evicted, and the wait for it (src/pipeline/settle.ts); shared by every node's view */
  settle: SettleGate;
  /** the health gates checked before each start (src/pipeline/gates.ts); undefined: none configured */
  gates?: HealthGates;
  /** the run's Kubernetes Events (src/pipeline/events.ts); shared by every node's view */
  events: EventWriter;
  /** what the verified marker must prove (src/rules/marker.ts): the hosts rolled, the revision, the verify-image */
  want: MarkerWant;
}

/**
 * Stands for the Talos client until `openTalos` gave it: the run opens it before any step that calls
 * Talos, so a call here is a bug in the run's order, said as such (never a silent no-op).
 */
const NOT_OPENED = new Proxy({} as TalosClient, {
  get: (_target, prop) =>
    prop === 'then'
      ? undefined
      : () => Promise.reject(new Error(`Talos ${String(prop)} called before the run opened its Talos client (a bug in the run's order)`)),
});

const silentLog: RolloutLog = { info: () => undefined, group: () => () => undefined };

/** The run's context, built once per run: every default resolved, the holds and the settle gate made here. */
export function makeContext(deps: RolloutDeps): RunContext {
  const clock = deps.clock ?? realClock;
  const pollIntervalMs = deps.pollIntervalMs ?? 2000;
  const holds = new HoldRecorder();
  if (!deps.talos && !deps.openTalos) throw new Error('the rollout needs a Talos client or a way to open one');
  return {
    ...deps,
    talos: deps.talos ?? NOT_OPENED,
    clock,
    log: deps.log ?? silentLog,
    pollIntervalMs,
    relistPauseMs: deps.relistPauseMs ?? 0,
    versions: new Map(),
    absentPaths: new Map(),
    holds,
    want: { hosts: deps.desired.map((d) => d.host), revision: deps.config.revision, verifyImage: deps.config.verifyImage },
    events: new EventWriter(deps.kube, deps.redact, deps.owner),
    gates:
      deps.config.storageGate || deps.config.healthGates?.length
        ? new HealthGates({
            kube: deps.kube,
            clock,
            holds,
            timeoutMs: deps.config.gateTimeoutMs,
            user: deps.config.healthGates ?? [],
            storage: !!deps.config.storageGate,
          })
        : undefined,
    settle: new SettleGate({
      kube: deps.kube,
      clock,
      timeoutMs: deps.config.settleTimeoutMs ?? 0,
      pollIntervalMs,
      cancelled: deps.cancelled,
      holds,
    }),
  };
}
