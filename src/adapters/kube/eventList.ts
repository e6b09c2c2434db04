// The core/v1 Events of one batch as one v1 List, for one `kubectl create -f -` (docs/kubernetes-facts.md#k16-events).
// Legacy-form Events, as the kubelet writes a Node's (no eventTime, so the v1 API's loose validation):
// a Node's go to namespace `default` with an involvedObject of kind Node, its name and uid and no
// namespace, which is what `kubectl describe node` selects on; the Lease's go to the Lease's namespace.
import { EVENT_COMPONENT, type RolloutEvent } from '../../core/events.js';

/** A name per Event that sorts in time order (the kubelet's `<object>.<hex nanoseconds>`), unique within the batch. */
function eventName(e: RolloutEvent, i: number): string {
  const nanos = BigInt(Date.parse(e.at)) * 1_000_000n + BigInt(i);
  return `${e.about.name}.${nanos.toString(16)}`;
}

/** metav1.Time: whole seconds. */
function seconds(iso: string): string {
  return new Date(Math.floor(Date.parse(iso) / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export function eventList(events: readonly RolloutEvent[]): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: events.map((e, i) => {
      const about = e.about;
      const involvedObject =
        about.kind === 'Node'
          ? { apiVersion: 'v1', kind: 'Node', name: about.name, uid: about.uid }
          : {
              apiVersion: 'coordination.k8s.io/v1',
              kind: 'Lease',
              namespace: about.namespace,
              name: about.name,
              ...(about.uid ? { uid: about.uid } : {}),
            };
      return {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: eventName(e, i), namespace: about.kind === 'Node' ? 'default' : about.namespace },
        involvedObject,
        reason: e.reason,
        message: e.message,
        type: e.type,
        source: { component: EVENT_COMPONENT },
        reportingComponent: EVENT_COMPONENT,
        // the run's owner token, within the 128 characters the API server allows a reportingInstance
        ...(e.run && e.run.length <= 128 ? { reportingInstance: e.run } : {}),
        firstTimestamp: seconds(e.at),
        lastTimestamp: seconds(e.at),
        count: 1,
      };
    }),
  };
}
