// The settle gate's I/O and waiting: which controllers each drain of this run evicted pods of, and the
// wait, before a drain (and, with several workers, before a start), until those of the nodes that
// finished are available again. The decisions are src/rules/settle.ts's; docs/settle.md says why.
import { formatDuration } from '../core/format.js';
import { workloadKey, workloadName, type PodOwnerReading, type WorkloadBaseline, type WorkloadRef } from '../core/workloads.js';
import {
  baselinesOf,
  mergeBaselines,
  ownersDrainWouldEvict,
  ownersOfEvicted,
  predictUnsettled,
  resolveOwners,
  uniqueRefs,
  unsettled,
  type RefBaseline,
  type Unsettled,
} from '../rules/settle.js';
import type { KubeClient } from '../adapters/types.js';
import { describeUnsettled } from '../report/settle.js';
import type { Clock } from '../core/clock.js';
import { CancelledError, SettleTimeoutError } from './errors.js';
import type { HoldRecorder, OpenHold } from './holds.js';

/** What the gate runs with, given once where the run is built (src/pipeline/context.ts makeContext). */
export interface SettleGateOptions {
  kube: Pick<KubeClient, 'listPodOwners' | 'listWorkloads'>;
  clock: Clock;
  /** settle-timeout: 0 turns the gate off */
  timeoutMs: number;
  pollIntervalMs: number;
  cancelled?: () => boolean;
  /** where each hold of starts or drains is recorded (the summary's timeline) */
  holds: HoldRecorder;
}

/** Where the gate says what it waits for: the node's log, or the run's. */
export type SettleLog = { info(message: string): void };

/**
 * The run's settle gate, shared by every node of the run: the one owner of what the drains evicted,
 * the waits for it and their holds. Off (no pod list, no wait) when settle-timeout is 0.
 */
export class SettleGate {
  /** each draining node's pods as listed just before its drain */
  private readonly podsBefore = new Map<string, PodOwnerReading[]>();
  /** the counts of the workloads of each draining node's pods, read just before its drain */
  private readonly baselineBefore = new Map<string, RefBaseline[]>();
  /** the controllers each node's drain evicted pods of */
  private readonly evicted = new Map<string, WorkloadRef[]>();
  /** controllers evicted by nodes that finished, not yet seen available again */
  private readonly pending = new Map<string, WorkloadRef>();
  /** what the pending workloads are waited back to (by workloadKey of the workload judged): their counts before the drains that evicted them */
  private readonly pendingBaselines = new Map<string, WorkloadBaseline>();

  private readonly kube: SettleGateOptions['kube'];
  private readonly clock: Clock;
  /** settle-timeout, read once here (the time budget reads it from the gate too) */
  readonly timeoutMs: number;
  private readonly pollIntervalMs: number;
  private readonly cancelled: () => boolean;
  private readonly holds: HoldRecorder;

  constructor(opts: SettleGateOptions) {
    this.kube = opts.kube;
    this.clock = opts.clock;
    this.timeoutMs = opts.timeoutMs;
    this.pollIntervalMs = opts.pollIntervalMs;
    this.cancelled = opts.cancelled ?? (() => false);
    this.holds = opts.holds;
  }

  get enabled(): boolean {
    return this.timeoutMs > 0;
  }

  /**
   * The node's pods before its drain (one `kubectl get pods -A --field-selector spec.nodeName=N`).
   * Returns the controllers a drain would evict pods of (what readBaseline reads the counts of).
   */
  async listBeforeDrain(node: string): Promise<WorkloadRef[]> {
    if (!this.enabled) return [];
    const pods = await this.kube.listPodOwners(node);
    this.podsBefore.set(node, pods);
    return ownersDrainWouldEvict(pods, node);
  }

  /**
   * The baseline: the ready and available counts of `owners` (the controllers of the node's pods), read
   * after the pod list and just before the drain (one `kubectl get deployments,replicasets,statefulsets -A`),
   * so what the drain takes away is measured from the moment it starts. Nothing to read without owners.
   */
  async readBaseline(node: string, owners: readonly WorkloadRef[]): Promise<number> {
    if (!this.enabled || owners.length === 0) return 0;
    const baselines = baselinesOf(owners, await this.kube.listWorkloads());
    this.baselineBefore.set(node, baselines);
    return baselines.length;
  }

  /** What the drain of `node` evicted (`namespace/name`), from its output; called once per drain process. */
  drained(node: string, pods: readonly string[]): void {
    if (!this.enabled) return;
    const owners = ownersOfEvicted(this.podsBefore.get(node) ?? [], new Set(pods));
    this.evicted.set(node, uniqueRefs([...(this.evicted.get(node) ?? []), ...owners]));
  }

  /** The node's run ended (whatever its end): from now on, later drains and starts wait for what it evicted. */
  finished(node: string): void {
    const baselines = this.baselineBefore.get(node) ?? [];
    for (const w of this.evicted.get(node) ?? []) {
      this.pending.set(workloadKey(w), w);
      const b = baselines.find((x) => workloadKey(x.ref) === workloadKey(w));
      if (b) this.pendingBaselines.set(b.judged, mergeBaselines(this.pendingBaselines.get(b.judged), b.baseline));
    }
    this.evicted.delete(node);
    this.podsBefore.delete(node);
    this.baselineBefore.delete(node);
  }

  /** Something of a finished node is not known to be available again: a check is needed. */
  get waiting(): boolean {
    return this.enabled && this.pending.size > 0;
  }

  /**
   * One check (one `kubectl get deployments,replicasets,statefulsets -A`): what is still not available.
   * Controllers seen available leave the pending set: a later disruption of them is a later node's to report.
   */
  async check(): Promise<Unsettled[]> {
    if (!this.waiting) return [];
    const refs = [...this.pending.values()];
    const statuses = await this.kube.listWorkloads();
    const left = unsettled(refs, statuses, this.pendingBaselines);
    const stillKeys = new Set(left.map((u) => workloadKey(u.workload)));
    // a ReplicaSet is judged as its Deployment: keep the ref while the workload it is judged as is waited for
    for (const r of refs) {
      const judged = workloadKey(resolveOwners([r], statuses)[0]);
      if (stillKeys.has(judged)) continue;
      this.pending.delete(workloadKey(r));
      // back to its baseline: a later drain measures its own
      this.pendingBaselines.delete(judged);
    }
    return left;
  }

  /** the hold of starts going on (several workers), across the scheduler's checks */
  private startHold?: { startMs: number; hold: OpenHold };

  /**
   * The start check's side (src/pipeline/startChecks/settle.ts), with several workers: one check before
   * new starts. Empty: start `next` now; else what it still waits for. Logs and records the hold as
   * wait() does; throws SettleTimeoutError once starts were held longer than settle-timeout.
   */
  async mayStart(log: SettleLog, next: string): Promise<readonly Unsettled[]> {
    const left = await this.check();
    const now = this.clock.now();
    if (left.length === 0) {
      if (this.startHold) {
        this.startHold.hold.end(now);
        log.info(`settle gate: available again after ${formatDuration(now - this.startHold.startMs)}; starts go on`);
      }
      this.startHold = undefined;
      return left;
    }
    const line = describeUnsettled(left);
    if (!this.startHold) {
      this.startHold = { startMs: now, hold: this.holds.start('settle', now, line, next) };
      log.info(`settle gate: new starts (next: ${next}) wait for ${line}`);
    } else if (this.startHold.hold.says(line)) {
      log.info(`settle gate: new starts (next: ${next}) wait for ${line}`);
    }
    if (now >= this.startHold.startMs + this.timeoutMs) {
      this.startHold.hold.end(now);
      throw new SettleTimeoutError(next, left, this.timeoutMs, 'start');
    }
    return left;
  }

  /**
   * Before `node`'s drain (or start, `held`): poll every pollIntervalMs until nothing is pending, logging
   * what it waits for (once, then on change), recorded as a hold. Throws SettleTimeoutError after
   * settle-timeout.
   */
  async wait(log: SettleLog, node: string, held: 'drain' | 'start'): Promise<void> {
    if (!this.waiting) return;
    const startMs = this.clock.now();
    let hold: OpenHold | undefined;
    try {
      for (;;) {
        const left = await this.check();
        if (left.length === 0) {
          if (hold) log.info(`settle gate: available again after ${formatDuration(this.clock.now() - startMs)}; ${node}'s ${held} goes on`);
          return;
        }
        const line = describeUnsettled(left);
        if (!hold) {
          hold = this.holds.start('settle', startMs, line, node);
          log.info(`settle gate: ${node}'s ${held} waits for ${line}`);
        } else if (hold.says(line)) {
          log.info(`settle gate: ${node}'s ${held} waits for ${line}`);
        }
        // ended here, not by a read failing: the channel outlives a cancellation (for the releases)
        if (this.cancelled()) throw new CancelledError('the run was cancelled');
        if (this.clock.now() + this.pollIntervalMs > startMs + this.timeoutMs)
          throw new SettleTimeoutError(node, left, this.timeoutMs, held);
        await this.clock.sleep(this.pollIntervalMs);
      }
    } finally {
      hold?.end(this.clock.now());
    }
  }

  /**
   * Plan mode: the workloads a roll of `nodes` (those it would drain) would wait for, from ONE pod list
   * of the whole cluster and one status list, whatever the number of nodes, judged by the gate's own
   * rule (`predictUnsettled`: a terminating pod is no live replica, scaled to 0 is settled). Empty when
   * the gate is off. `listed`: the pods already listed (the drain forecast's list), so they are not
   * listed again.
   */
  async predictWaits(nodes: readonly string[], listed?: readonly PodOwnerReading[]): Promise<string[]> {
    if (!this.enabled || nodes.length === 0) return [];
    const [pods, statuses] = await Promise.all([listed ?? this.kube.listPodOwners(), this.kube.listWorkloads()]);
    return predictUnsettled(pods, statuses, nodes).map((u) => workloadName(u.workload));
  }
}
