// What the controllers share: the request semantics, the store, the timers and the tunable delays.
import type { Api } from './api.js';
import type { Store } from './store.js';
import type { Timers } from './timers.js';

export interface SimTiming {
  /** kubelet node-status heartbeat (and node Lease renewal) interval per node */
  heartbeatMs: number;
  /**
   * node lifecycle controller: from a node update to its NoSchedule tainting pass's write (the
   * nodeUpdateQueue worker, doNoScheduleTaintingPass: the condition taints and the cordon mirror)
   */
  taintDelayMs: number;
  /**
   * node lifecycle controller: its health pass (`--node-monitor-period`, 5 s), monitorNodeHealth: marks a
   * silent node Unknown, and the NoExecute not-ready/unreachable taints are written (doNoExecuteTaintingPass)
   * and lifted (markNodeAsReachable) from the Ready it observed at a pass. Default: taintDelayMs.
   */
  nodeMonitorPeriodMs: number;
  /**
   * node lifecycle controller: how long it hears nothing from a kubelet (status or node Lease) before the
   * health pass marks the node Unknown (`--node-monitor-grace-period`: 40 s, 50 s since Kubernetes 1.32).
   * Default: taintDelayMs.
   */
  nodeMonitorGraceMs: number;
  /**
   * the kubelet's `--eviction-pressure-transition-period` (5 min): how long a pressure condition stays
   * True once the pressure is gone. Default: taintDelayMs.
   */
  pressureTransitionMs: number;
  /** from nodeUp() to the kubelet's first status with the new bootID */
  bootDelayMs: number;
  /** how long Cilium's agent-not-ready taint stays after boot */
  ciliumDelayMs: number;
  /** from a pod landing on a Ready node to its images being pulled */
  pullDelayMs: number;
  /** from a pod's deletionTimestamp to its removal by the kubelet */
  terminationMs: number;
  /** from a change of a workload's pods (or spec) to its controller's status write (ReplicaSet, StatefulSet; a Deployment one more after its ReplicaSet's) */
  controllerSyncMs: number;
}

export interface SimContext {
  api: Api;
  store: Store;
  timers: Timers;
  timing: SimTiming;
}
