// What the controllers share: the request semantics, the store, the timers and the tunable delays.
import type { Api } from './api.js';
import type { Store } from './store.js';
import type { Timers } from './timers.js';

export interface SimTiming {
  /** kubelet node-status heartbeat (and node Lease renewal) interval per node */
  heartbeatMs: number;
  /** node lifecycle controller delay before it reconciles taints (and marks a silent node Unknown) */
  taintDelayMs: number;
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
