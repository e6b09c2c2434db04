// Server-side printing (meta.k8s.io/v1 Table) for plain `kubectl get`, so the demo's tables look real.
// `-o json`/`-o yaml` never ask for it.
import { clone } from './json.js';
import type { ResourceDef } from './resources.js';

export function wantsTable(accept: string | undefined): boolean {
  return !!accept && /as=Table/.test(accept);
}

/** apimachinery util/duration.HumanDuration */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${hours / 24}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.floor(hours / 24) % 365;
    return dy === 0 ? `${Math.floor(hours / 24 / 365)}y` : `${Math.floor(hours / 24 / 365)}y${dy}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

const age = (o: any) => (o.metadata.creationTimestamp ? humanDuration(Date.now() - Date.parse(o.metadata.creationTimestamp)) : '<unknown>');

interface Column {
  name: string;
  type: string;
  format?: string;
  description: string;
  priority: number;
  cell: (o: any) => unknown;
}

const nameCol: Column = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace.',
  priority: 0,
  cell: (o) => o.metadata.name,
};
const ageCol: Column = {
  name: 'Age',
  type: 'string',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  priority: 0,
  cell: age,
};

function nodeStatus(n: any): string {
  const ready = (n.status?.conditions ?? []).find((c: any) => c.type === 'Ready');
  const parts = [ready?.status === 'True' ? 'Ready' : ready?.status === 'False' ? 'NotReady' : 'Unknown'];
  if (n.spec?.unschedulable) parts.push('SchedulingDisabled');
  return parts.join(',');
}

function nodeRoles(n: any): string {
  const roles = Object.keys(n.metadata.labels ?? {})
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice('node-role.kubernetes.io/'.length))
    .filter((r) => r);
  return roles.length ? roles.sort().join(',') : '<none>';
}

function podStatus(p: any): string {
  if (p.metadata.deletionTimestamp) return 'Terminating';
  for (const c of p.status?.containerStatuses ?? []) if (c.state?.waiting?.reason) return c.state.waiting.reason;
  return p.status?.reason ?? p.status?.phase ?? 'Unknown';
}

const since = (t: string | null | undefined) => (t ? humanDuration(Date.now() - Date.parse(t)) : '<unknown>');
/** the printer's Last Seen: the series' last observation, else lastTimestamp, else eventTime */
const eventLastSeen = (e: any) => since(e.series?.lastObservedTime ?? e.lastTimestamp ?? e.eventTime);

const columns: Record<string, Column[]> = {
  nodes: [
    nameCol,
    { name: 'Status', type: 'string', description: 'The status of the node', priority: 0, cell: nodeStatus },
    { name: 'Roles', type: 'string', description: 'The roles of the node', priority: 0, cell: nodeRoles },
    ageCol,
    {
      name: 'Version',
      type: 'string',
      description: 'Kubelet Version reported by the node.',
      priority: 0,
      cell: (n) => n.status?.nodeInfo?.kubeletVersion ?? '',
    },
    {
      name: 'Internal-IP',
      type: 'string',
      description: 'List of internal IPs.',
      priority: 1,
      cell: (n) => (n.status?.addresses ?? []).find((a: any) => a.type === 'InternalIP')?.address ?? '<none>',
    },
    {
      name: 'External-IP',
      type: 'string',
      description: 'List of external IPs.',
      priority: 1,
      cell: (n) => (n.status?.addresses ?? []).find((a: any) => a.type === 'ExternalIP')?.address ?? '<none>',
    },
    {
      name: 'OS-Image',
      type: 'string',
      description: 'OS Image reported by the node.',
      priority: 1,
      cell: (n) => n.status?.nodeInfo?.osImage ?? '',
    },
    {
      name: 'Kernel-Version',
      type: 'string',
      description: 'Kernel Version reported by the node.',
      priority: 1,
      cell: (n) => n.status?.nodeInfo?.kernelVersion ?? '',
    },
    {
      name: 'Container-Runtime',
      type: 'string',
      description: 'Container Runtime Version reported by the node.',
      priority: 1,
      cell: (n) => n.status?.nodeInfo?.containerRuntimeVersion ?? '',
    },
  ],
  deployments: [
    nameCol,
    {
      name: 'Ready',
      type: 'string',
      description: 'Number of the pod with ready state',
      priority: 0,
      cell: (d) => `${d.status?.readyReplicas ?? 0}/${d.spec?.replicas ?? 1}`,
    },
    {
      name: 'Up-to-date',
      type: 'string',
      description: 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.',
      priority: 0,
      cell: (d) => String(d.status?.updatedReplicas ?? 0),
    },
    {
      name: 'Available',
      type: 'string',
      description: 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.',
      priority: 0,
      cell: (d) => String(d.status?.availableReplicas ?? 0),
    },
    ageCol,
  ],
  statefulsets: [
    nameCol,
    {
      name: 'Ready',
      type: 'string',
      description: 'Number of the pod with ready state',
      priority: 0,
      cell: (s) => `${s.status?.readyReplicas ?? 0}/${s.spec?.replicas ?? 1}`,
    },
    ageCol,
  ],
  pods: [
    nameCol,
    {
      name: 'Ready',
      type: 'string',
      description: 'The aggregate readiness state of this pod for accepting traffic.',
      priority: 0,
      cell: (p) => `${(p.status?.containerStatuses ?? []).filter((c: any) => c.ready).length}/${(p.spec?.containers ?? []).length}`,
    },
    { name: 'Status', type: 'string', description: 'The aggregate status of the containers in this pod.', priority: 0, cell: podStatus },
    {
      name: 'Restarts',
      type: 'string',
      description: 'The number of times the containers in this pod have been restarted.',
      priority: 0,
      cell: (p) => String((p.status?.containerStatuses ?? []).reduce((a: number, c: any) => a + (c.restartCount ?? 0), 0)),
    },
    ageCol,
    { name: 'IP', type: 'string', description: 'IP address allocated to the pod.', priority: 1, cell: (p) => p.status?.podIP ?? '<none>' },
    {
      name: 'Node',
      type: 'string',
      description: 'Name of the Node where this pod is running.',
      priority: 1,
      cell: (p) => p.spec?.nodeName ?? '<none>',
    },
    { name: 'Nominated Node', type: 'string', description: 'Name of the nominated node.', priority: 1, cell: () => '<none>' },
    { name: 'Readiness Gates', type: 'string', description: 'Pod readiness gates.', priority: 1, cell: () => '<none>' },
  ],
  events: [
    {
      name: 'Last Seen',
      type: 'string',
      description: 'The time at which the most recent occurrence of this event was recorded.',
      priority: 0,
      cell: eventLastSeen,
    },
    {
      name: 'Type',
      type: 'string',
      description: 'Type of this event (Normal, Warning), new types could be added in the future',
      priority: 0,
      cell: (e) => e.type ?? '',
    },
    {
      name: 'Reason',
      type: 'string',
      description:
        "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
      priority: 0,
      cell: (e) => e.reason ?? '',
    },
    {
      name: 'Object',
      type: 'string',
      description: 'The object that this event is about.',
      priority: 0,
      cell: (e) => `${String(e.involvedObject?.kind ?? '').toLowerCase()}/${e.involvedObject?.name ?? ''}`,
    },
    {
      name: 'Subobject',
      type: 'string',
      description: 'The field of the object this event is about.',
      priority: 1,
      cell: (e) => e.involvedObject?.fieldPath ?? '',
    },
    {
      name: 'Source',
      type: 'string',
      description: 'The component reporting this event.',
      priority: 1,
      cell: (e) => e.source?.component || e.reportingComponent || '',
    },
    {
      name: 'Message',
      type: 'string',
      description: 'A human-readable description of the status of this operation.',
      priority: 0,
      cell: (e) => e.message ?? '',
    },
    {
      name: 'First Seen',
      type: 'string',
      description: 'The time at which the event was first recorded.',
      priority: 1,
      cell: (e) => since(e.firstTimestamp ?? e.eventTime),
    },
    {
      name: 'Count',
      type: 'string',
      description: 'The number of times this event has occurred.',
      priority: 1,
      cell: (e) => String(e.count ?? 1),
    },
    { ...nameCol, priority: 1 },
  ],
  leases: [
    nameCol,
    { name: 'Holder', type: 'string', description: 'The holder of the lease.', priority: 0, cell: (l) => l.spec?.holderIdentity ?? '' },
    ageCol,
  ],
};

export function toTable(def: ResourceDef, objs: any[], listMeta: Record<string, unknown>): any {
  const cols = columns[def.plural] ?? [nameCol, ageCol];
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: cols.map(({ cell: _c, ...c }) => ({ format: '', ...c })),
    rows: objs.map((o) => ({
      cells: cols.map((c) => c.cell(o)),
      object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: clone(o.metadata) },
    })),
  };
}
