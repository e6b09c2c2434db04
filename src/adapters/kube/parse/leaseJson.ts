// A Lease from `kubectl get/create/patch lease -o json` (coordination.k8s.io/v1) → the fields the
// run Lease's rules read (src/rules/lease.ts). Text already parsed as JSON in, a LeaseState out; no I/O.
import type { LeaseState } from '../../../core/model/cluster.js';
import { jsonString, type Json } from './json.js';

export function leaseFromJson(o: Json): LeaseState {
  const metadata = (o.metadata ?? {}) as Json;
  const spec = (o.spec ?? {}) as Json;
  const lease: LeaseState = {
    namespace: jsonString(metadata.namespace),
    name: jsonString(metadata.name),
    uid: jsonString(metadata.uid),
    resourceVersion: jsonString(metadata.resourceVersion),
    holderIdentity: typeof spec.holderIdentity === 'string' ? spec.holderIdentity : '',
  };
  if (typeof spec.leaseDurationSeconds === 'number') lease.leaseDurationSeconds = spec.leaseDurationSeconds;
  if (typeof spec.acquireTime === 'string') lease.acquireTime = spec.acquireTime;
  if (typeof spec.renewTime === 'string') lease.renewTime = spec.renewTime;
  if (typeof spec.leaseTransitions === 'number') lease.leaseTransitions = spec.leaseTransitions;
  return lease;
}
