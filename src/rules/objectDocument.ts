// An object as the apiserver serves it, rebuilt from what the action reads of it, for the one judge of a
// lost write (src/rules/lostWrite.ts), which evaluates a patch's JSON Pointers on it. Only the fields a
// patch of the action tests or writes, each as the apiserver stores it: `spec.unschedulable` absent
// unless true, `spec.taints` absent when empty and each taint without its empty members
// (docs/kubernetes-facts.md#k6-omitempty), `metadata.annotations` absent when the node has no map.
import type { LeaseState } from '../core/model/cluster.js';
import type { NodeState } from '../core/model/node.js';
import { storedTaint } from './claim.js';

/** A Node as served, for the fields the action's patches test and write. */
export function nodeDocument(n: NodeState): Record<string, unknown> {
  const metadata: Record<string, unknown> = { name: n.name, uid: n.uid, labels: { ...n.labels } };
  if (n.resourceVersion) metadata.resourceVersion = n.resourceVersion;
  if (n.deletionTimestamp) metadata.deletionTimestamp = n.deletionTimestamp;
  if (n.hasAnnotationsMap) metadata.annotations = { ...n.annotations };
  const spec: Record<string, unknown> = {};
  if (n.unschedulable) spec.unschedulable = true;
  if (n.taints.length > 0) spec.taints = n.taints.map(storedTaint);
  return { metadata, spec };
}

/** A coordination.k8s.io/v1 Lease as served (an empty holder is absent). */
export function leaseDocument(l: LeaseState): Record<string, unknown> {
  const spec: Record<string, unknown> = {};
  if (l.holderIdentity) spec.holderIdentity = l.holderIdentity;
  if (l.leaseDurationSeconds !== undefined) spec.leaseDurationSeconds = l.leaseDurationSeconds;
  if (l.acquireTime) spec.acquireTime = l.acquireTime;
  if (l.renewTime) spec.renewTime = l.renewTime;
  if (l.leaseTransitions !== undefined) spec.leaseTransitions = l.leaseTransitions;
  return { metadata: { namespace: l.namespace, name: l.name, uid: l.uid, resourceVersion: l.resourceVersion }, spec };
}
