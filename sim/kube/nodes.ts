// Node-side actors: each node's kubelet (status heartbeats, node Lease renewals, reboot behaviour, memory
// pressure) and the node lifecycle controller that derives the NoSchedule/NoExecute taints from
// spec.unschedulable and the conditions, always as a separate, later, RV-locked write
// (docs/kubernetes-facts.md#k9-unschedulable-taint, docs/kubernetes-facts.md#k10-kubelet-heartbeats,
// docs/kubernetes-facts.md#k15-condition-taints). Its two loops, as in
// kubernetes:pkg/controller/nodelifecycle/node_lifecycle_controller.go (Run):
// - the NoSchedule tainting pass (doNoScheduleTaintingPass, a nodeUpdateQueue worker) runs on every node
//   update: the condition taints and the cordon mirror follow the node a moment later (taintDelayMs);
// - the health pass (monitorNodeHealth, every `--node-monitor-period`, 5 s) marks a node Unknown once it
//   has heard nothing for `--node-monitor-grace-period` (40 s; 50 s since 1.32, kubernetes#126287), and
//   from the Ready it observed queues the NoExecute not-ready/unreachable taint (doNoExecuteTaintingPass,
//   every 100 ms) or lifts it (markNodeAsReachable). So the NoExecute taint comes and goes up to a period
//   after its NoSchedule twin: an unreachable blip can still be on the node after the kubelet is back.
import { ApiError } from './status.js';
import type { SimContext } from './context.js';
import { buildNodeLease, conditionTypes, taintKeys, type Taint } from './objects.js';
import { R } from './resources.js';
import { nowMicro, nowTime } from './schema.js';

const conditionTaints: Record<string, Record<string, string>> = {
  Ready: { False: taintKeys.notReady, Unknown: taintKeys.unreachable },
  MemoryPressure: { True: 'node.kubernetes.io/memory-pressure' },
  DiskPressure: { True: 'node.kubernetes.io/disk-pressure' },
  PIDPressure: { True: 'node.kubernetes.io/pid-pressure' },
  NetworkUnavailable: { True: 'node.kubernetes.io/network-unavailable' },
};
const conditionTaintKeys = new Set(Object.values(conditionTaints).flatMap((m) => Object.values(m)));

const id = (t: Taint) => `${t.key}:${t.effect}`;

function isControlled(t: Taint): boolean {
  if (t.effect === 'NoSchedule') return t.key === taintKeys.unschedulable || conditionTaintKeys.has(t.key);
  if (t.effect === 'NoExecute') return t.key === taintKeys.notReady || t.key === taintKeys.unreachable;
  return false;
}

/** The taints the lifecycle controller wants on a node, by key:effect. */
export function desiredLifecycleTaints(node: any): Taint[] {
  const out: Taint[] = [];
  for (const c of node.status?.conditions ?? []) {
    const key = conditionTaints[c.type]?.[c.status];
    if (key) out.push({ key, effect: 'NoSchedule' });
    if (c.type === 'Ready' && key) out.push({ key, effect: 'NoExecute' });
  }
  if (node.spec?.unschedulable) out.push({ key: taintKeys.unschedulable, effect: 'NoSchedule' });
  return out;
}

/** Every controller taint the node lacks or carries in excess (a settled cluster: addNode); `effect` narrows it to one pass. */
export function lifecycleDiff(node: any, effect?: 'NoSchedule' | 'NoExecute'): { add: Taint[]; del: Taint[] } {
  const mine = (t: Taint) => effect === undefined || t.effect === effect;
  const want = desiredLifecycleTaints(node).filter(mine);
  const have = ((node.spec?.taints ?? []) as Taint[]).filter((t) => isControlled(t) && mine(t));
  return {
    add: want.filter((w) => !have.some((h) => id(h) === id(w))),
    del: have.filter((h) => !want.some((w) => id(w) === id(h))),
  };
}

export function isReady(node: any): boolean {
  return (node?.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');
}

interface Kubelet {
  up: boolean;
  /** cut off from the apiserver (kubeletDisconnect) while the machine and its pods keep running */
  disconnected?: boolean;
  /** the conditions as the kubelet last posted them: what it posts again when it reconnects */
  reported?: Array<{ type: string; status: string; reason?: string; message?: string }>;
  /** bumps on every boot; pods started under an older generation are restarted */
  boot: number;
  lastBeatSec: number;
  /** when the controller last heard from it (a status or a node Lease renewal), ms: what its grace period counts from */
  heardAtMs: number;
  /** under memory pressure (kubeletMemoryPressure): relieved by an eviction from the node, or after reliefMs */
  pressure?: { relievedOnEviction: boolean; cancel: () => void };
  stopBeat: () => void;
  cancel: Array<() => void>;
}

export class NodeControllers {
  private readonly kubelets = new Map<string, Kubelet>();
  private readonly pending = new Map<string, () => void>();
  private readonly pendingHealth = new Map<string, () => void>();
  /** nodes whose NoExecute tainting waits for the test (holdNoExecutePass), and those a pass came for meanwhile */
  private readonly heldNoExecute = new Set<string>();
  private readonly deferredNoExecute = new Set<string>();
  /** called when a node's kubelet is up and the node is Ready again (pods may start) */
  onNodeRunning: (name: string) => void = () => {};
  /** called when a disconnected kubelet reaches the apiserver again (it re-posts its pods' statuses) */
  onNodeReconnected: (name: string) => void = () => {};
  /** called when the lifecycle controller has marked a silent node Unknown */
  onNodeLost: (name: string) => void = () => {};

  constructor(private readonly ctx: SimContext) {
    ctx.store.onChange((e) => {
      if (e.def !== R.nodes || e.type === 'DELETED') return;
      this.scheduleReconcile(e.obj.metadata.name);
      if (isReady(e.obj) && !isReady(e.prev) && this.isUp(e.obj.metadata.name)) {
        const name = e.obj.metadata.name;
        ctx.timers.after(0, () => this.onNodeRunning(name));
      }
    });
  }

  lastHeardAt(name: string): number | undefined {
    return this.kubelets.get(name)?.heardAtMs;
  }

  isUp(name: string): boolean {
    return this.kubelets.get(name)?.up ?? false;
  }

  bootGeneration(name: string): number {
    return this.kubelets.get(name)?.boot ?? 0;
  }

  /** A registered node: its kubelet starts heartbeating and owns a Lease in kube-node-lease. */
  register(name: string): void {
    this.unregister(name, false);
    const k: Kubelet = {
      up: true,
      boot: 1,
      lastBeatSec: Math.floor(Date.now() / 1000),
      heardAtMs: Date.now(),
      stopBeat: () => {},
      cancel: [],
    };
    this.kubelets.set(name, k);
    this.ensureLease(name);
    this.startHeartbeat(name, k);
  }

  unregister(name: string, deleteLease = true): void {
    const k = this.kubelets.get(name);
    if (k) {
      k.stopBeat();
      k.pressure?.cancel();
      for (const c of k.cancel) c();
      this.kubelets.delete(name);
    }
    this.pending.get(name)?.();
    this.pending.delete(name);
    this.pendingHealth.get(name)?.();
    this.pendingHealth.delete(name);
    if (deleteLease && this.ctx.store.peek(R.leases, 'kube-node-lease', name)) this.ctx.store.delete(R.leases, 'kube-node-lease', name);
  }

  private ensureLease(name: string): void {
    const { store, api } = this.ctx;
    const node = store.peek(R.nodes, '', name);
    if (!node) return;
    const cur = store.peek(R.leases, 'kube-node-lease', name);
    if (cur) store.delete(R.leases, 'kube-node-lease', name);
    api.create(R.leases, 'kube-node-lease', buildNodeLease(node));
  }

  private startHeartbeat(name: string, k: Kubelet): void {
    k.stopBeat();
    k.stopBeat = this.ctx.timers.every(this.ctx.timing.heartbeatMs, () => this.heartbeat(name));
  }

  /** Kubelet status PATCH as sent by kubelet_node_status.go: $setElementOrder plus fresh heartbeat times. */
  heartbeat(name: string, evenIfDown = false): void {
    const k = this.kubelets.get(name);
    const node = this.ctx.store.peek(R.nodes, '', name);
    if (!k || !node || (!k.up && !evenIfDown)) return;
    // metav1.Time has whole seconds; never reuse one so every heartbeat really is a write (RV bump).
    k.lastBeatSec = Math.max(Math.floor(Date.now() / 1000), k.lastBeatSec + 1);
    const at = nowTime(k.lastBeatSec * 1000);
    const types = (node.status?.conditions ?? []).map((c: any) => c.type) as string[];
    const patch = {
      status: {
        [`$setElementOrder/conditions`]: types.map((type) => ({ type })),
        conditions: types.map((type) => ({ lastHeartbeatTime: at, type })),
      },
    };
    this.ctx.api.patch(R.nodes, '', name, 'status', 'strategic', JSON.stringify(patch));
    this.renewLease(name);
  }

  /**
   * The kubelet's eviction manager finds memory short (kubelet:pkg/kubelet/eviction/eviction_manager.go):
   * its next status reports MemoryPressure=True (nodestatus MemoryPressureCondition), and the controller
   * taints the node `memory-pressure:NoSchedule` a moment later. The pressure is relieved by the first
   * pod evicted from the node (a drain frees the memory; the twin's kubelet evicts nothing itself) or,
   * with `reliefMs`, after that long; the condition turns False `pressureTransitionMs` after the relief
   * (`--eviction-pressure-transition-period`), and the controller lifts the taint.
   */
  memoryPressure(name: string, opts: { reliefMs?: number } = {}): void {
    const k = this.kubelets.get(name);
    if (!k) throw new Error(`node ${name} has no kubelet`);
    k.pressure?.cancel();
    this.setCondition(name, 'MemoryPressure', 'True', 'KubeletHasInsufficientMemory', 'kubelet has insufficient memory available');
    const pressure = { relievedOnEviction: true, cancel: () => {} };
    k.pressure = pressure;
    if (opts.reliefMs !== undefined) pressure.cancel = this.ctx.timers.after(opts.reliefMs, () => this.relieve(name));
  }

  /** A pod was evicted from the node: memory under pressure is relieved. */
  podEvicted(name: string): void {
    if (this.kubelets.get(name)?.pressure?.relievedOnEviction) this.relieve(name);
  }

  private relieve(name: string): void {
    const k = this.kubelets.get(name);
    if (!k?.pressure) return;
    k.pressure.cancel();
    k.pressure.relievedOnEviction = false;
    k.pressure.cancel = this.ctx.timers.after(this.ctx.timing.pressureTransitionMs, () => {
      k.pressure = undefined;
      if (!this.ctx.store.peek(R.nodes, '', name)) return;
      this.setCondition(name, 'MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available');
    });
  }

  private renewLease(name: string): void {
    const k = this.kubelets.get(name);
    if (k) k.heardAtMs = Date.now();
    // a new top level and spec over the stored Lease, not a deep copy: the update only decodes it
    const lease = this.ctx.store.peek(R.leases, 'kube-node-lease', name);
    if (!lease) return;
    const renewed = { ...lease, spec: { ...lease.spec, renewTime: nowMicro() } };
    this.ctx.api.update(R.leases, 'kube-node-lease', name, undefined, renewed);
  }

  scheduleReconcile(name: string): void {
    if (this.pending.has(name)) return;
    const cancel = this.ctx.timers.after(this.ctx.timing.taintDelayMs, () => {
      this.pending.delete(name);
      this.reconcile(name);
    });
    this.pending.set(name, cancel);
  }

  /**
   * The NoSchedule tainting pass (doNoScheduleTaintingPass): SwapNodeControllerTaint, add the missing
   * taints, then remove the stale ones, each an RV-locked SMP. A NoExecute taint to write or lift waits
   * for the next health pass.
   */
  reconcile(name: string): void {
    if (this.swap(name, 'NoSchedule')) this.scheduleReconcile(name);
    const node = this.ctx.store.peek(R.nodes, '', name);
    const { add, del } = lifecycleDiff(node ?? {}, 'NoExecute');
    if (node && (add.length || del.length)) this.scheduleHealthPass(name);
  }

  /** The controller's taints of one effect swapped to what the node's conditions want; true: a conflict, try again. */
  private swap(name: string, effect: 'NoSchedule' | 'NoExecute'): boolean {
    const { add, del } = lifecycleDiff(this.ctx.store.peek(R.nodes, '', name) ?? {}, effect);
    try {
      if (add.length) this.writeTaints(name, (ts) => [...ts, ...add.map((t) => ({ ...t, timeAdded: nowTime() }))]);
      if (del.length) this.writeTaints(name, (ts) => ts.filter((t) => !del.some((d) => id(d) === id(t))));
    } catch (e) {
      if (e instanceof ApiError && e.code === 409) return true;
      if (!(e instanceof ApiError && e.code === 404)) throw e;
    }
    return false;
  }

  /** ms until the controller's next health pass strictly after now (the passes run every nodeMonitorPeriodMs). */
  private untilNextPass(atLeastMs = 0): number {
    const period = Math.max(1, this.ctx.timing.nodeMonitorPeriodMs);
    const from = Date.now() + atLeastMs;
    return Math.floor(from / period) * period + period - Date.now();
  }

  /** The next health pass writes or lifts the node's NoExecute taint from the Ready it then observes. */
  private scheduleHealthPass(name: string): void {
    if (this.pendingHealth.has(name)) return;
    const cancel = this.ctx.timers.after(this.untilNextPass(), () => {
      this.pendingHealth.delete(name);
      if (this.heldNoExecute.has(name)) {
        this.deferredNoExecute.add(name);
        return;
      }
      if (this.swap(name, 'NoExecute')) this.scheduleHealthPass(name);
    });
    this.pendingHealth.set(name, cancel);
  }

  /**
   * The controller's NoExecute tainting of the node is late: the health passes write or lift nothing
   * of it until releaseNoExecutePass, whose next pass catches up. The NoSchedule pass goes on.
   */
  holdNoExecutePass(name: string): void {
    this.heldNoExecute.add(name);
  }

  releaseNoExecutePass(name: string): void {
    this.heldNoExecute.delete(name);
    if (this.deferredNoExecute.delete(name)) this.scheduleHealthPass(name);
  }

  /** PatchNodeTaints: the complete new list plus metadata.resourceVersion, so a concurrent write makes it retry. */
  writeTaints(name: string, fn: (taints: Taint[]) => Taint[]): void {
    const node = this.ctx.store.peek(R.nodes, '', name);
    if (!node) return;
    const next = fn([...(node.spec?.taints ?? [])]);
    const patch = { metadata: { resourceVersion: node.metadata.resourceVersion }, spec: { taints: next.length ? next : null } };
    this.ctx.api.patch(R.nodes, '', name, undefined, 'strategic', JSON.stringify(patch));
  }

  /**
   * The machine went down: heartbeats stop; the first health pass once the controller has heard nothing
   * for nodeMonitorGraceMs (counted from the last status or Lease renewal, tryUpdateNodeHealth) marks the
   * node Unknown and its pods not Ready (MarkPodsNotReady); its taints follow (reconcile).
   */
  down(name: string): void {
    const k = this.kubelets.get(name);
    if (!k) return;
    k.up = false;
    k.stopBeat();
    for (const c of k.cancel.splice(0)) c();
    const boot = k.boot;
    const silentFor = Date.now() - k.heardAtMs;
    k.cancel.push(
      this.ctx.timers.after(this.untilNextPass(Math.max(0, this.ctx.timing.nodeMonitorGraceMs - silentFor)), () => {
        if (k.up || k.boot !== boot) return;
        const node = this.ctx.store.get(R.nodes, '', name);
        if (!node) return;
        const at = nowTime();
        for (const c of node.status?.conditions ?? []) {
          if (c.status !== 'Unknown') c.lastTransitionTime = at;
          c.status = 'Unknown';
          c.reason = 'NodeStatusUnknown';
          c.message = 'Kubelet stopped posting node status.';
        }
        this.ctx.api.update(R.nodes, '', name, 'status', node);
        this.onNodeLost(name);
      }),
    );
  }

  /**
   * The kubelet loses the apiserver (a network blip, a partition): to the API it is exactly a machine
   * gone silent (down: heartbeats stop, after the controller's grace period the conditions turn
   * Unknown, the pods are marked not Ready, and the lifecycle controller adds `unreachable`
   * NoSchedule and NoExecute), but the machine, its boot and its containers go on; pods deleted
   * meanwhile stay Terminating, as the kubelet cannot see the deletion.
   */
  disconnect(name: string): void {
    const k = this.kubelets.get(name);
    const node = this.ctx.store.peek(R.nodes, '', name);
    if (!k || !k.up || !node) return;
    k.reported = ((node.status?.conditions ?? []) as any[]).map((c) => ({
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
    }));
    k.disconnected = true;
    this.down(name);
  }

  /**
   * The kubelet reaches the apiserver again, same boot: it posts its node status (the conditions as it
   * last saw them, fresh heartbeat times), so Ready is True again and the lifecycle controller removes
   * the taints it added; then it re-posts its pods' statuses (onNodeReconnected).
   */
  reconnect(name: string): void {
    const k = this.kubelets.get(name);
    if (!k || !k.disconnected) return;
    for (const c of k.cancel.splice(0)) c(); // a blip shorter than the grace period is never marked Unknown
    const node = this.ctx.store.get(R.nodes, '', name);
    if (!node) return;
    const at = nowTime();
    k.lastBeatSec = Math.max(Math.floor(Date.now() / 1000), k.lastBeatSec + 1);
    for (const c of node.status?.conditions ?? []) {
      const was = k.reported?.find((r) => r.type === c.type);
      if (!was) continue;
      if (c.status !== was.status) c.lastTransitionTime = at;
      c.status = was.status;
      c.reason = was.reason;
      c.message = was.message;
      c.lastHeartbeatTime = nowTime(k.lastBeatSec * 1000);
    }
    k.up = true;
    k.disconnected = false;
    k.reported = undefined;
    this.ctx.api.update(R.nodes, '', name, 'status', node);
    this.renewLease(name);
    this.startHeartbeat(name, k);
    this.onNodeReconnected(name);
  }

  /**
   * A condition as its writer reports it: the kubelet (MemoryPressure, DiskPressure, PIDPressure,
   * Ready) or the network plugin (NetworkUnavailable, added when the node has none). The lifecycle
   * controller turns it into its taint one reconcile later (conditionTaints).
   */
  setCondition(name: string, type: string, status: 'True' | 'False', reason: string, message = ''): void {
    const node = this.ctx.store.get(R.nodes, '', name);
    if (!node) throw new Error(`node ${name} not found`);
    const conditions = (node.status.conditions ??= []) as any[];
    const at = nowTime();
    let c = conditions.find((x) => x.type === type);
    if (!c) {
      c = { type };
      conditions.push(c);
    }
    if (c.status !== status) c.lastTransitionTime = at;
    Object.assign(c, { status, reason, message, lastHeartbeatTime: at });
    this.ctx.api.update(R.nodes, '', name, 'status', node);
  }

  /**
   * The machine booted with a new boot id: after bootDelayMs Cilium's agent-not-ready taint appears and the
   * kubelet reports the new bootID with Ready=True; ciliumDelayMs later the taint goes; the lifecycle
   * controller clears not-ready/unreachable on its own schedule.
   */
  up(name: string, bootID: string): void {
    const k = this.kubelets.get(name);
    if (!k) return;
    k.up = false;
    k.disconnected = false;
    k.reported = undefined;
    k.pressure?.cancel(); // a fresh boot reports no pressure
    k.pressure = undefined;
    k.stopBeat();
    for (const c of k.cancel.splice(0)) c();
    k.boot += 1;
    const boot = k.boot;
    const { timers, timing, store, api } = this.ctx;
    k.cancel.push(
      timers.after(timing.bootDelayMs, () => {
        if (k.boot !== boot || !store.peek(R.nodes, '', name)) return;
        this.writeTaints(name, (ts) =>
          ts.some((t) => t.key === taintKeys.ciliumAgentNotReady)
            ? ts
            : [...ts, { key: taintKeys.ciliumAgentNotReady, effect: 'NoSchedule', timeAdded: nowTime() }],
        );
        const node = store.get(R.nodes, '', name)!;
        const at = nowTime();
        k.lastBeatSec = Math.max(Math.floor(Date.now() / 1000), k.lastBeatSec + 1);
        node.status.nodeInfo.bootID = bootID;
        const fresh = new Map(conditionTypes.map((t) => [t, t === 'Ready' ? 'True' : 'False']));
        const reasons: Record<string, [string, string]> = {
          MemoryPressure: ['KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
          DiskPressure: ['KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
          PIDPressure: ['KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
          Ready: ['KubeletReady', 'kubelet is posting ready status'],
        };
        for (const c of node.status.conditions ?? []) {
          const want = fresh.get(c.type);
          if (!want) continue;
          if (c.status !== want) c.lastTransitionTime = at;
          c.status = want;
          c.lastHeartbeatTime = nowTime(k.lastBeatSec * 1000);
          [c.reason, c.message] = reasons[c.type]!;
        }
        k.up = true;
        api.update(R.nodes, '', name, 'status', node);
        this.renewLease(name);
        this.startHeartbeat(name, k);
        this.onNodeRunning(name);
      }),
    );
    k.cancel.push(
      timers.after(timing.bootDelayMs + timing.ciliumDelayMs, () => {
        if (k.boot !== boot) return;
        this.writeTaints(name, (ts) => ts.filter((t) => t.key !== taintKeys.ciliumAgentNotReady));
      }),
    );
  }
}
