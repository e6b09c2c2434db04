// The settle gate's I/O and waiting: which controllers each drain of this run evicted pods of, and the
// wait, before a drain (and, with several workers, before a start), until those of the nodes that
// finished are available again. The decisions are src/rules/settle.ts's; docs/settle.md says why.
import { RolloutError } from '../core/errors.js';
import { formatDuration } from '../core/format.js';
import type { RollHold } from '../core/model.js';
import { workloadKey, workloadName, type PodOwnerReading, type WorkloadBaseline, type WorkloadRef } from '../core/workloads.js';
import {
  baselinesOf,
  mergeBaselines,
  ownersDrainWouldEvict,
  ownersOfEvicted,
  resolveOwners,
  uniqueRefs,
  unsettled,
  type RefBaseline,
  type Unsettled,
} from '../rules/settle.js';
import type { KubeClient } from '../adapters/types.js';
import type { Clock } from '../core/clock.js';

/**
 * What the gate needs of the run context (a narrow port: src/pipeline/context.ts holds the gate, so
 * this file does not import it back).
 */
export interface SettleContext {
  kube: KubeClient;
  clock: Clock;
  log: { info(message: string): void };
  holds: RollHold[];
  pollIntervalMs: number;
  cancelled?: () => boolean;
  settle: SettleGate;
}

/** The gate timed out: the workloads still not available, each with why. */
export class SettleTimeoutError extends RolloutError {
  constructor(
    node: string,
    readonly unsettled: readonly Unsettled[],
    timeoutMs: number,
    held: 'drain' | 'start',
  ) {
    const reason = `settle gate: ${unsettled.map((u) => `${workloadName(u.workload)} (${u.why})`).join('; ')} did not become available again (as before its drain) within settle-timeout ${formatDuration(timeoutMs)}; the ${held} was not started`;
    super(
      node,
      reason,
      held === 'drain'
        ? `The node was released and was not drained or rebooted. Check why the workloads named do not become available (kubectl describe), then rerun; settle-timeout: 0 turns the wait off.`
        : `No further node was started. Check why the workloads named do not become available (kubectl describe), then rerun; settle-timeout: 0 turns the wait off.`,
    );
    this.name = 'SettleTimeoutError';
    this.reason = reason;
  }

  /** the message without the node's name in front */
  readonly reason: string;
}

/** One line naming what the gate waits for. */
export function describeUnsettled(list: readonly Unsettled[]): string {
  return list.map((u) => `${workloadName(u.workload)}: ${u.why}`).join('; ');
}

/**
 * The run's settle gate, shared by every node of the run. Off (no pod list, no wait) when
 * settle-timeout is 0.
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

  constructor(private readonly timeoutMs: number) {}

  get enabled(): boolean {
    return this.timeoutMs > 0;
  }

  /**
   * The node's pods before its drain (one `kubectl get pods -A --field-selector spec.nodeName=N`).
   * Returns the controllers a drain would evict pods of (what readBaseline reads the counts of).
   */
  async listBeforeDrain(ctx: SettleContext, node: string): Promise<WorkloadRef[]> {
    if (!this.enabled) return [];
    const pods = await ctx.kube.listPodOwners(node);
    this.podsBefore.set(node, pods);
    return ownersDrainWouldEvict(pods, node);
  }

  /**
   * The baseline: the ready and available counts of `owners` (the controllers of the node's pods), read
   * after the pod list and just before the drain (one `kubectl get deployments,replicasets,statefulsets -A`),
   * so what the drain takes away is measured from the moment it starts. Nothing to read without owners.
   */
  async readBaseline(ctx: SettleContext, node: string, owners: readonly WorkloadRef[]): Promise<number> {
    if (!this.enabled || owners.length === 0) return 0;
    const baselines = baselinesOf(owners, await ctx.kube.listWorkloads());
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
  async check(ctx: SettleContext): Promise<Unsettled[]> {
    if (!this.waiting) return [];
    const refs = [...this.pending.values()];
    const statuses = await ctx.kube.listWorkloads();
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

  private startHold?: { startMs: number; hold?: RollHold; said: string };

  /**
   * The scheduler's side, with several workers: one check before new starts. True: start `next` now.
   * Logs and records the hold as wait() does; throws SettleTimeoutError once starts were held longer
   * than settle-timeout.
   */
  async mayStart(ctx: SettleContext, next: string): Promise<boolean> {
    const left = await this.check(ctx);
    const now = ctx.clock.now();
    if (left.length === 0) {
      if (this.startHold?.hold) {
        this.startHold.hold.endedAt = new Date(now).toISOString();
        ctx.log.info(`settle gate: available again after ${formatDuration(now - this.startHold.startMs)}; starts go on`);
      }
      this.startHold = undefined;
      return true;
    }
    const h = (this.startHold ??= { startMs: now, said: '' });
    const line = describeUnsettled(left);
    if (!h.hold) {
      h.hold = { kind: 'settle', startedAt: new Date(now).toISOString(), detail: line, node: next };
      ctx.holds.push(h.hold);
    }
    if (line !== h.said) {
      h.said = h.hold.detail = line;
      ctx.log.info(`settle gate: new starts (next: ${next}) wait for ${line}`);
    }
    if (now >= h.startMs + this.timeoutMs) {
      h.hold.endedAt = new Date(now).toISOString();
      throw new SettleTimeoutError(next, left, this.timeoutMs, 'start');
    }
    return false;
  }

  /**
   * Before `node`'s drain (or start, `held`): poll every pollIntervalMs until nothing is pending, logging
   * what it waits for (once, then on change), recorded as a RollHold. Throws SettleTimeoutError after
   * settle-timeout.
   */
  async wait(ctx: SettleContext, node: string, held: 'drain' | 'start'): Promise<void> {
    if (!this.waiting) return;
    const startMs = ctx.clock.now();
    let hold: RollHold | undefined;
    let said = '';
    try {
      for (;;) {
        const left = await this.check(ctx);
        if (left.length === 0) {
          if (hold)
            ctx.log.info(`settle gate: available again after ${formatDuration(ctx.clock.now() - startMs)}; ${node}'s ${held} goes on`);
          return;
        }
        const line = describeUnsettled(left);
        if (!hold) {
          hold = { kind: 'settle', startedAt: new Date(startMs).toISOString(), detail: line, node };
          ctx.holds.push(hold);
        }
        if (line !== said) {
          said = line;
          hold.detail = line;
          ctx.log.info(`settle gate: ${node}'s ${held} waits for ${line}`);
        }
        if (ctx.cancelled?.()) return;
        if (ctx.clock.now() + ctx.pollIntervalMs > startMs + this.timeoutMs) throw new SettleTimeoutError(node, left, this.timeoutMs, held);
        await ctx.clock.sleep(ctx.pollIntervalMs);
      }
    } finally {
      if (hold) hold.endedAt = new Date(ctx.clock.now()).toISOString();
    }
  }
}

/**
 * Plan mode: the workloads a roll of `nodes` (those it would drain) would wait for, from ONE pod list
 * of the whole cluster and one status list, whatever the number of nodes. Empty when the gate is off.
 */
export async function predictSettleWaits(ctx: SettleContext, nodes: readonly string[]): Promise<string[]> {
  if (!ctx.settle.enabled || nodes.length === 0) return [];
  const [pods, statuses] = await Promise.all([ctx.kube.listPodOwners(), ctx.kube.listWorkloads()]);
  const refs = uniqueRefs(nodes.flatMap((n) => ownersDrainWouldEvict(pods, n)));
  return resolveOwners(refs, statuses).map(workloadName);
}
