// A Pod from `kubectl get/create pod -o json` → what the pull probe reads of it (its phase, its
// containers' states and image ids, src/pipeline/verifyImage.ts). No I/O.
import type { PodContainerStatus, PodState } from '../../types.js';
import { jsonString, type Json } from './json.js';

export function podFromJson(o: Json): PodState {
  const metadata = (o.metadata ?? {}) as Json;
  const spec = (o.spec ?? {}) as Json;
  const status = (o.status ?? {}) as Json;
  const statuses = Array.isArray(status.containerStatuses) ? (status.containerStatuses as Json[]) : [];
  return {
    namespace: jsonString(metadata.namespace),
    name: jsonString(metadata.name),
    uid: jsonString(metadata.uid),
    nodeName: jsonString(spec.nodeName),
    phase: jsonString(status.phase),
    imagePullSecrets: Array.isArray(spec.imagePullSecrets) ? (spec.imagePullSecrets as Json[]).map((s) => jsonString(s.name)) : [],
    containerStatuses: statuses.map((c): PodContainerStatus => {
      const state = (c.state ?? {}) as Json;
      const waiting = state.waiting as Json | undefined;
      const terminated = state.terminated as Json | undefined;
      return {
        name: jsonString(c.name),
        imageID: jsonString(c.imageID),
        waitingReason: waiting ? jsonString(waiting.reason) : undefined,
        waitingMessage: waiting && waiting.message ? jsonString(waiting.message) : undefined,
        terminated: terminated
          ? { exitCode: Number(terminated.exitCode ?? 0), reason: terminated.reason ? jsonString(terminated.reason) : undefined }
          : undefined,
        running: state.running !== undefined,
      };
    }),
  };
}
