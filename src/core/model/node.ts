// A node as the action reads it and as its claim captures it: the fields of a Kubernetes Node the rules
// judge, the annotation keys under the user's prefix, and what the claim's fresh read recorded for the
// guard and the release. Plain data, no I/O; every value one a test can write by hand.
import type { AutoscalerMark } from './autoscalerMarks.js';

/** One taint exactly as the apiserver stores it (`timeAdded` kept, so a JSON Patch `test` can match it byte for byte). */
export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

export type Role = 'worker' | 'control-plane';

/** The fields of a Node that the action reads; built by the kubectl adapter from `kubectl get node -o json`. */
export interface NodeState {
  name: string;
  uid: string;
  resourceVersion: string;
  /** set when the node is being deleted */
  deletionTimestamp?: string;
  /** `spec.unschedulable` (absent on the server means false) */
  unschedulable: boolean;
  /** `spec.taints` as stored, in server order; empty when the key is absent */
  taints: Taint[];
  labels: Record<string, string>;
  /** `metadata.annotations`; empty when absent */
  annotations: Record<string, string>;
  /** whether `metadata.annotations` exists as a key at all: a JSON Patch `add` below a missing map fails */
  hasAnnotationsMap: boolean;
  /** every `status.addresses[type=InternalIP]` address, in order */
  internalIPs: string[];
  role: Role;
  /** status of the Ready condition; 'Unknown' when missing */
  ready: 'True' | 'False' | 'Unknown';
  /** `status.nodeInfo.bootID`; empty when missing */
  bootID: string;
}

/** Annotation keys under the user's prefix. */
export interface AnnotationKeys {
  owner: string;
  phase: string;
  wasCordoned: string;
  /** the verified marker: one JSON object mapping each registry host to its proof (src/rules/marker.ts) */
  verified: string;
  /** the old single-key marker (the revision alone, no host), read for the upgrade and removed by the next verified release (src/rules/marker.ts) */
  verifiedRevision: string;
  /** a node left cordoned because its drain timed out (`undrainable: quarantine`; src/rules/quarantine.ts) */
  quarantined: string;
  /** which run wrote which autoscaler marks (src/core/model/autoscalerMarks.ts), so every release removes only those, only while still that run's (src/rules/autoscalerMarks.ts) */
  autoscalerMarks: string;
}

export function annotationKeys(prefix: string): AnnotationKeys {
  return {
    owner: `${prefix}/owner`,
    phase: `${prefix}/phase`,
    wasCordoned: `${prefix}/was-cordoned`,
    verified: `${prefix}/verified`,
    verifiedRevision: `${prefix}/verified-revision`,
    quarantined: `${prefix}/quarantined`,
    autoscalerMarks: `${prefix}/autoscaler-marks`,
  };
}

/** What the claim captured from its fresh read; the guard and the release compare against it. */
export interface ClaimCapture {
  node: string;
  uid: string;
  internalIP: string;
  role: Role;
  wasCordoned: boolean;
  /** `spec.taints` exactly as read (the claim's `test` op compares it in order) */
  taints: Taint[];
  /** scheduling taints: all but the controller taints (src/rules/controllerTaints.ts CONTROLLER_TAINTS), as sorted `key=value:effect` strings (`taintId`) */
  schedulingTaints: string[];
  owner: string;
  /** whether `metadata.annotations` existed at the read (optional; lets a retry say "annotations map appeared") */
  hadAnnotationsMap?: boolean;
  /**
   * optional: the `quarantined` annotation exactly as the claim read it. Set, the node was cordoned at
   * the claim BECAUSE of a quarantine, and `wasCordoned` is the quarantine's record of the time before.
   */
  quarantined?: string;
  /**
   * the autoscaler marks (src/core/model/autoscalerMarks.ts) this claim wrote, recorded on the node in
   * `autoscaler-marks` by the claim itself; absent: the claim wrote none and no record. A release
   * removes exactly these, each only while it still says "true" and the record is still `marksRecord`.
   */
  autoscalerMarks?: AutoscalerMark[];
  /**
   * the exact text of the `autoscaler-marks` record this claim wrote (naming its run and the marks:
   * src/rules/autoscalerMarks.ts formatMarksRecord), or read back from the node by `recover-fences`;
   * every release `test`s it before it removes a mark. Absent: no record of this claim.
   */
  marksRecord?: string;
  /** optional: the autoscaler marks the node carried when the claim read it, with their values: someone else's, left as found and said */
  marksFound?: Partial<Record<AutoscalerMark, string>>;
}
