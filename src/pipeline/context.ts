// What a roll runs with: the ports (kube, talos, Lease, clock, log), the validated config, and the
// per-run state every step shares (defaults resolved once, the Talos versions read so far).
import type { KubeClient, LeaseReading, TalosClient } from '../adapters/types.js';
import { realClock, type Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import type { NodeLogs } from '../report/nodeLog.js';
import { SettleGate } from './settle.js';
import type { AnnotationKeys, DesiredCredential, HeldNode, NodeState, Reading, RollHold } from '../core/model.js';

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
  /** where the Lease is: the fence read before a mutation reads it beside the node */
  readonly ref: { namespace: string; name: string };
  /** proves the Lease is still ours (by `read`, the Lease read with the node just before, or by a renewal now); throws when it is not */
  confirm(read?: LeaseReading): Promise<void>;
  release(): Promise<{ released: boolean; message: string }>;
  stop(): void;
}

export interface RolloutDeps {
  kube: KubeClient;
  talos: TalosClient;
  config: Config;
  desired: DesiredCredential;
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
  holds: RollHold[];
  /** the settle gate: what this run's drains evicted, and the wait for it (src/pipeline/settle.ts); shared by every node's view */
  settle: SettleGate;
}

const silentLog: RolloutLog = { info: () => undefined, group: () => () => undefined };

export function makeContext(deps: RolloutDeps): RunContext {
  return {
    ...deps,
    clock: deps.clock ?? realClock,
    log: deps.log ?? silentLog,
    pollIntervalMs: deps.pollIntervalMs ?? 2000,
    relistPauseMs: deps.relistPauseMs ?? 0,
    versions: new Map(),
    absentPaths: new Map(),
    holds: [],
    settle: new SettleGate(deps.config.settleTimeoutMs ?? 0),
  };
}

/** A fence read of a node; under a run Lease, the Lease read in the same command (see beforeMutation). */
export interface FenceRead {
  node: NodeState;
  lease?: LeaseReading;
}

/** One process either way: `kubectl get node/N` alone, or with the run Lease beside it. */
export async function readNodeForMutation(ctx: Pick<RolloutDeps, 'kube' | 'lock'>, name: string): Promise<FenceRead> {
  if (!ctx.lock) return { node: await ctx.kube.getNode(name) };
  return ctx.kube.getNodeAndLease(name, ctx.lock.ref.namespace, ctx.lock.ref.name);
}

/**
 * Immediately before every mutation that moves the roll forward: a cancelled run starts nothing new,
 * and the Lease must still be ours. Before a Talos mutation, the drain, the reboot and the verified
 * release (`fresh`), that must be proven now, not taken from the lock's state cached between ticks:
 * by `read`, the Lease as read together with the node in the fence read that immediately precedes
 * the mutation (no other step in between), or else by a renewal (RunLock.confirm has the rule).
 * After a reboot that read is the last poll of the wait for Ready: the proof is read before that wait,
 * so with no verify-image nothing runs between the poll and the release (node.ts, releaseVerified).
 * The claim and the phase patch only check the cached state: they touch nothing but our own
 * annotations and the cordon, and the fresh proof before the credential patch undoes them (the claim
 * is released, nothing on Talos having changed) when the Lease was lost meanwhile.
 */
export async function beforeMutation(
  ctx: Pick<RolloutDeps, 'cancelled' | 'lock'>,
  opts: { fresh: false } | { fresh: true; read: FenceRead | undefined },
): Promise<void> {
  const cancelled = () => new CancelledError('the run was cancelled; no further mutation was started');
  if (ctx.cancelled?.()) throw cancelled();
  if (!opts.fresh) return ctx.lock?.assertHeld();
  try {
    await ctx.lock?.confirm(opts.read?.lease);
  } catch (e) {
    // A cancellation kills the renewal too: that is the cancellation, not a lost Lease.
    if (ctx.cancelled?.()) throw cancelled();
    throw e;
  }
}

export class CancelledError extends Error {
  readonly kind = 'cancelled' as const;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CancelledError';
  }
}
