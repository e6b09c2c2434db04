// A Pod from `kubectl get/create pod -o json` → what the pull probe reads of it (its phase, its
// containers' states and image ids, src/pipeline/verifyImage.ts). No I/O.
import type { PodContainerStatus, PodState } from '../../types.js';
import { jsonString as str, type Json } from './json.js';

export function podFromJson(o: Json): PodState {
  const metadata = (o.metadata ?? {}) as Json;
  const spec = (o.spec ?? {}) as Json;
  const status = (o.status ?? {}) as Json;
  const statuses = Array.isArray(status.containerStatuses) ? (status.containerStatuses as Json[]) : [];
  return {
    namespace: str(metadata.namespace),
    name: str(metadata.name),
    uid: str(metadata.uid),
    nodeName: str(spec.nodeName),
    phase: str(status.phase),
    imagePullSecrets: Array.isArray(spec.imagePullSecrets) ? (spec.imagePullSecrets as Json[]).map((s) => str(s.name)) : [],
    containerStatuses: statuses.map((c): PodContainerStatus => {
      const state = (c.state ?? {}) as Json;
      const waiting = state.waiting as Json | undefined;
      const terminated = state.terminated as Json | undefined;
      return {
        name: str(c.name),
        imageID: str(c.imageID),
        waitingReason: waiting ? str(waiting.reason) : undefined,
        waitingMessage: waiting && waiting.message ? str(waiting.message) : undefined,
        terminated: terminated
          ? { exitCode: Number(terminated.exitCode ?? 0), reason: terminated.reason ? str(terminated.reason) : undefined }
          : undefined,
        running: state.running !== undefined,
      };
    }),
  };
}
