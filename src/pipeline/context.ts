// What a roll runs with: the ports (kube, talos, Lease, clock, log), the validated config, and the
// per-run state every step shares (defaults resolved once, the Talos versions read so far, the
// holds and the settle gate). The fence read before each mutation is src/pipeline/fence.ts.
import type { KubeClient, LeaseReading, TalosClient } from '../adapters/types.js';
import { realClock, type Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import type { NodeLogs } from '../report/nodeLog.js';
import { HoldRecorder } from './holds.js';
import { SettleGate } from './settle.js';
import type { DesiredCredential } from '../core/model/credential.js';
import type { AnnotationKeys } from '../core/model/node.js';
import type { HeldNode } from '../core/model/phase.js';
import type { Reading } from '../core/model/readings.js';
import { EventWriter } from './events.js';
import type { MarkerWant } from '../rules/marker.js';

export interface RolloutLog {
  info(message: string): void;
  /** start of a node's log group; the returned function ends it */
  group(title: string): () => void;
  /** a step starting: shown at once even while the node's group is buffered (src/report/nodeLog.ts) */
  progress?(message: string): void;
}

/** The per-node log groups of src/report/nodeLog.ts (main routes the runner's command lines through it). */
export type NodeLogsLike = Pick<NodeLogs, 'info' | 'forNode' | 'within' | 'flushAll'>;

/** What the rollout needs of src/pipeline/lease.ts's RunLock (a narrow port, so tests can pass a fake). */
export interface RunLockLike {
  /** read-only: throws when another run holds the Lease */
  checkNotHeldByAnother(): Promise<void>;
  acquire(): Promise<void>;
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

export interface RolloutDeps {
  kube: KubeClient;
  talos: TalosClient;
  config: Config;
  /** the registry hosts the run rolls, each with the credential the auth patch gives it (at least one) */
  desired: DesiredCredential[];
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
}

/** The deps with every default resolved, plus what the run accumulates. */
export interface RunContext extends Omit<RolloutDeps, 'clock' | 'log' | 'pollIntervalMs' | 'relistPauseMs'> {
  clock: Clock;
  log: RolloutLog;
  pollIntervalMs: number;
  relistPauseMs: number;
  /** Talos versions read during this run, by address (see readEvidence's EvidenceHints) */
  versions: Map<string, Reading<string>>;
  /** config paths each node's latest listing showed absent, by address (see readEvidence's EvidenceHints) */
  absentPaths: Map<string, ReadonlySet<string>>;
  /** when the settle gate or the time budget held starts back, in order (the summary's timeline); shared by every node's view */
  holds: HoldRecorder;
  /** the settle gate: what this run's drains evicted, and the wait for it (src/pipeline/settle.ts); shared by every node's view */
  settle: SettleGate;
  /** the run's Kubernetes Events (src/pipeline/events.ts); shared by every node's view */
  events: EventWriter;
  /** what the verified marker must prove (src/rules/marker.ts): the hosts rolled, the revision, the verify-image */
  want: MarkerWant;
}

const silentLog: RolloutLog = { info: () => undefined, group: () => () => undefined };

/** The run's context, built once per run: every default resolved, the holds and the settle gate made here. */
export function makeContext(deps: RolloutDeps): RunContext {
  const clock = deps.clock ?? realClock;
  const pollIntervalMs = deps.pollIntervalMs ?? 2000;
  const holds = new HoldRecorder();
  return {
    ...deps,
    clock,
    log: deps.log ?? silentLog,
    pollIntervalMs,
    relistPauseMs: deps.relistPauseMs ?? 0,
    versions: new Map(),
    absentPaths: new Map(),
    holds,
    want: { hosts: deps.desired.map((d) => d.host), revision: deps.config.revision, verifyImage: deps.config.verifyImage },
    events: new EventWriter(deps.kube, deps.redact, deps.owner),
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
