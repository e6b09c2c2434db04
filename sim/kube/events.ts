// core/v1 Events as the apiserver stores and selects them (pkg/registry/core/event/strategy.go,
// pkg/apis/core/validation/events.go): the schema, the field selectors kubectl describe sends
// (involvedObject.*), the legacy validation a v1 create gets, and the columns of `kubectl get events`.
import type { FieldGetter } from './selectors.js';
import { f, int, mtime, o, p, str, struct, time, type Schema } from './schema.js';
import type { FieldError } from './status.js';

const ObjectReference = struct('ObjectReference', {
  kind: o(str),
  namespace: o(str),
  name: o(str),
  uid: o(str),
  apiVersion: o(str),
  resourceVersion: o(str),
  fieldPath: o(str),
});

/** Built by the caller with the shared ObjectMeta head (resources.ts). */
export function eventSchema(head: Record<string, import('./schema.js').Field>): Schema {
  return struct('Event', {
    ...head,
    involvedObject: f(ObjectReference),
    reason: o(str),
    message: o(str),
    source: o(struct('EventSource', { component: o(str), host: o(str) })),
    firstTimestamp: f(time),
    lastTimestamp: f(time),
    count: o(int),
    type: o(str),
    eventTime: f(mtime),
    series: p(struct('EventSeries', { count: o(int), lastObservedTime: f(mtime) })),
    action: o(str),
    related: p(ObjectReference),
    reportingComponent: f(str),
    reportingInstance: f(str),
  });
}

/** EventToSelectableFields: what `kubectl describe` and `kubectl get events --field-selector` may select on. */
export const eventFields: Record<string, FieldGetter> = {
  'metadata.name': (x) => x.metadata?.name ?? '',
  'metadata.namespace': (x) => x.metadata?.namespace ?? '',
  'involvedObject.kind': (x) => x.involvedObject?.kind ?? '',
  'involvedObject.namespace': (x) => x.involvedObject?.namespace ?? '',
  'involvedObject.name': (x) => x.involvedObject?.name ?? '',
  'involvedObject.uid': (x) => x.involvedObject?.uid ?? '',
  'involvedObject.apiVersion': (x) => x.involvedObject?.apiVersion ?? '',
  'involvedObject.resourceVersion': (x) => x.involvedObject?.resourceVersion ?? '',
  'involvedObject.fieldPath': (x) => x.involvedObject?.fieldPath ?? '',
  reason: (x) => x.reason ?? '',
  reportingComponent: (x) => x.reportingComponent ?? '',
  source: (x) => x.source?.component ?? '',
  type: (x) => x.type ?? '',
};

/**
 * legacyValidateEvent, the only validation a v1 create gets: without eventTime the Event's namespace
 * must be the involved object's, or `default` for a cluster-scoped one (a Node); with eventTime, also
 * `kube-system`, and reportingController, reportingInstance, action and reason are required.
 */
export function validateEvent(obj: any): FieldError[] {
  const errs: FieldError[] = [];
  const ns = obj.metadata?.namespace ?? '';
  const involvedNs = obj.involvedObject?.namespace ?? '';
  const mismatch = { field: 'involvedObject.namespace', message: `Invalid value: "${involvedNs}": does not match event.namespace` };
  if (!obj.eventTime) {
    if (involvedNs ? ns !== involvedNs : ns !== '' && ns !== 'default') errs.push(mismatch);
    return errs;
  }
  if (!involvedNs && ns !== 'default' && ns !== 'kube-system') errs.push(mismatch);
  for (const field of ['reportingController', 'reportingInstance', 'action', 'reason']) {
    const v = field === 'reportingController' ? obj.reportingComponent : obj[field];
    if (!v) errs.push({ field, reason: 'FieldValueRequired', message: 'Required value' });
  }
  return errs;
}
