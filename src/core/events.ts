// The Kubernetes Events the action writes about its decisions (core/v1 Events on each Node it
// rolled, and one on the run's Lease): the one list of their reasons, and the plain shape the
// pipeline hands the KubeClient. Reasons are stable words a person or an alert can select on
// (`kubectl get events --field-selector reason=RebootSkipped`); their meanings are in README.md
// ("Kubernetes Events"). Building them from a node's record is src/report/events.ts.

/** Every reason the action writes, in the order a node's roll reaches them; the README documents each. */
export const EVENT_REASONS = [
  'Claimed',
  'RebootSkipped',
  'Drained',
  'Rebooted',
  'Verified',
  'Quarantined',
  'Released',
  'RolloutRefused',
  'RolloutFailed',
  'RolloutSucceeded',
  'RolloutPartial',
] as const;
export type EventReason = (typeof EVENT_REASONS)[number];

/** `source.component` and `reportingComponent` of every Event: the action's name. */
export const EVENT_COMPONENT = 'registry-auth-rollout';

/** What an Event is about: a Node (cluster-scoped) or the run's Lease. */
export type EventSubject = { kind: 'Node'; name: string; uid: string } | { kind: 'Lease'; namespace: string; name: string; uid?: string };

/** One Event, as plain data: never a credential or a token in `message`, which any reader of Events sees. */
export interface RolloutEvent {
  about: EventSubject;
  reason: EventReason;
  type: 'Normal' | 'Warning';
  /** the whole text as built; its writer masks it, folds it onto one line and cuts it (src/pipeline/events.ts) */
  message: string;
  /** when it happened (ISO, the runner's clock) */
  at: string;
  /** the run that wrote it (its owner token, as on the nodes it claims): `reportingInstance`, so a reader tells two runs apart */
  run?: string;
}
