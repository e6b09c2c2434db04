// The resource types the simulated apiserver serves: names for discovery, typed schemas for normalization,
// strategic-merge list strategies, field selectors and validation.
import type { SmpMeta } from './mergepatch.js';
import type { FieldGetter } from './selectors.js';
import { any, bool, f, int, list, map, mtime, o, p, qty, str, struct, time, type Schema } from './schema.js';
import { goValue, type FieldError } from './status.js';
import { eventFields, eventSchema, validateEvent } from './events.js';

export interface ResourceDef {
  group: string;
  version: string;
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  verbs: string[];
  subresources: Record<string, { kind: string; group?: string; version?: string; verbs: string[] }>;
  schema: Schema;
  /** main-resource writes keep the stored status, /status writes keep the stored spec */
  statusSubresource: boolean;
  /** metadata.generation is set at create and bumped on spec changes */
  generation: boolean;
  /** DELETE answers with the object (pods) rather than a Status */
  returnDeleted: boolean;
  allowCreateOnUpdate: boolean;
  smp: SmpMeta;
  fields: Record<string, FieldGetter>;
  validate?: (obj: any, old: any | undefined) => FieldError[];
}

export function apiVersionOf(def: ResourceDef): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

// --- schemas -------------------------------------------------------------------------------------------

const OwnerReference = struct('OwnerReference', {
  apiVersion: f(str),
  kind: f(str),
  name: f(str),
  uid: f(str),
  controller: p(bool),
  blockOwnerDeletion: p(bool),
});

const ObjectMeta = struct('ObjectMeta', {
  name: o(str),
  generateName: o(str),
  namespace: o(str),
  selfLink: o(str),
  uid: o(str),
  resourceVersion: o(str),
  generation: o(int),
  creationTimestamp: f(time),
  deletionTimestamp: p(time),
  deletionGracePeriodSeconds: p(int),
  labels: o(map(str)),
  annotations: o(map(str)),
  ownerReferences: o(list(OwnerReference)),
  finalizers: o(list(str)),
  managedFields: o(list(any)),
});

const head = { kind: o(str), apiVersion: o(str), metadata: o(ObjectMeta) };

const Taint = struct('Taint', { key: f(str), value: o(str), effect: f(str), timeAdded: p(time) });

const NodeSchema = struct('Node', {
  ...head,
  spec: o(
    struct('NodeSpec', {
      podCIDR: o(str),
      podCIDRs: o(list(str)),
      providerID: o(str),
      unschedulable: o(bool),
      taints: o(list(Taint)),
      configSource: p(any),
      externalID: o(str),
    }),
  ),
  status: o(
    struct('NodeStatus', {
      capacity: o(map(qty)),
      allocatable: o(map(qty)),
      phase: o(str),
      conditions: o(
        list(
          struct('NodeCondition', {
            type: f(str),
            status: f(str),
            lastHeartbeatTime: o(time),
            lastTransitionTime: o(time),
            reason: o(str),
            message: o(str),
          }),
        ),
      ),
      addresses: o(list(struct('NodeAddress', { type: f(str), address: f(str) }))),
      daemonEndpoints: o(struct('NodeDaemonEndpoints', { kubeletEndpoint: o(struct('DaemonEndpoint', { Port: f(int) })) })),
      nodeInfo: o(
        struct('NodeSystemInfo', {
          machineID: f(str),
          systemUUID: f(str),
          bootID: f(str),
          kernelVersion: f(str),
          osImage: f(str),
          containerRuntimeVersion: f(str),
          kubeletVersion: f(str),
          kubeProxyVersion: f(str),
          operatingSystem: f(str),
          architecture: f(str),
          swap: p(any),
        }),
      ),
      images: o(list(struct('ContainerImage', { names: f(list(str)), sizeBytes: o(int) }))),
      volumesInUse: o(list(str)),
      volumesAttached: o(list(any)),
      config: p(any),
      runtimeHandlers: o(list(any)),
      features: p(any),
    }),
  ),
});

const LeaseSchema = struct('Lease', {
  ...head,
  spec: o(
    struct('LeaseSpec', {
      holderIdentity: p(str),
      leaseDurationSeconds: p(int),
      acquireTime: p(mtime),
      renewTime: p(mtime),
      leaseTransitions: p(int),
      strategy: p(str),
      preferredHolder: p(str),
    }),
  ),
});

const NamespaceSchema = struct('Namespace', {
  ...head,
  spec: o(struct('NamespaceSpec', { finalizers: o(list(str)) })),
  status: o(struct('NamespaceStatus', { phase: o(str), conditions: o(list(any)) })),
});

const LocalObjectReference = struct('LocalObjectReference', { name: o(str) });

const ServiceAccountSchema = struct('ServiceAccount', {
  ...head,
  secrets: o(list(any)),
  imagePullSecrets: o(list(LocalObjectReference)),
  automountServiceAccountToken: p(bool),
});

/** Pods and workloads are only partly typed: the parts the twin reads are, the rest passes through. */
const openObject = (
  kind: string,
  typed: { spec?: Record<string, import('./schema.js').Field>; status?: Record<string, import('./schema.js').Field> } = {},
) =>
  struct(kind, {
    ...head,
    spec: o(struct(`${kind}Spec`, typed.spec ?? {}, true)),
    status: o(struct(`${kind}Status`, typed.status ?? {}, true)),
  });

const PodSchema = openObject('Pod', {
  spec: {
    nodeName: o(str),
    serviceAccountName: o(str),
    imagePullSecrets: o(list(LocalObjectReference)),
    containers: f(list(any)),
    terminationGracePeriodSeconds: p(int),
  },
  status: { phase: o(str), message: o(str), reason: o(str), hostIP: o(str), podIP: o(str), startTime: p(time) },
});

const PdbSchema = openObject('PodDisruptionBudget', {
  status: {
    observedGeneration: o(int),
    disruptedPods: o(map(time)),
    disruptionsAllowed: f(int),
    currentHealthy: f(int),
    desiredHealthy: f(int),
    expectedPods: f(int),
    conditions: o(list(any)),
  },
});

// --- validation ------------------------------------------------------------------------------------------

const qualifiedNameRe = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const dns1123SubdomainRe = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const qualifiedNameMsg =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/**
 * Keys already found valid: every write validates every label and annotation key of the object again
 * (a heartbeat too), nearly always the same few dozen. The check is a pure function of the key, and only
 * keys with no errors are kept (a fresh array each time for the others), bounded like schema.ts's times.
 */
const validKeys = new Set<string>();

/** validation.IsQualifiedName: `[prefix/]name` with a DNS-subdomain prefix and a ≤63-char name. */
function qualifiedNameErrors(key: string): string[] {
  if (validKeys.has(key)) return [];
  const errs = checkQualifiedName(key);
  if (errs.length === 0) {
    if (validKeys.size >= 10_000) validKeys.clear();
    validKeys.add(key);
  }
  return errs;
}

function checkQualifiedName(key: string): string[] {
  const parts = key.split('/');
  let name = key;
  const errs: string[] = [];
  if (parts.length === 2) {
    const [prefix, n] = parts as [string, string];
    name = n;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else if (!dns1123SubdomainRe.test(prefix) || prefix.length > 253)
      errs.push(
        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      );
  } else if (parts.length > 2) {
    return [
      `a qualified name ${qualifiedNameMsg.replace('name part ', '')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push('name part must be no more than 63 characters');
  else if (!qualifiedNameRe.test(name)) errs.push(qualifiedNameMsg);
  return errs;
}

function metaErrors(obj: any): FieldError[] {
  const out: FieldError[] = [];
  for (const [field, m] of [
    ['metadata.labels', obj.metadata?.labels],
    ['metadata.annotations', obj.metadata?.annotations],
  ] as const) {
    for (const [k, v] of Object.entries((m ?? {}) as Record<string, string>)) {
      for (const e of qualifiedNameErrors(k)) out.push({ field, message: `Invalid value: ${goValue(k)}: ${e}` });
      if (field === 'metadata.labels' && v !== '' && (v.length > 63 || !qualifiedNameRe.test(v))) {
        out.push({
          field,
          message: `Invalid value: ${goValue(v)}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
        });
      }
    }
  }
  return out;
}

const taintEffects = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

function validateNode(obj: any): FieldError[] {
  const errs = metaErrors(obj);
  const seen = new Set<string>();
  (obj.spec?.taints ?? []).forEach((t: any, i: number) => {
    for (const e of qualifiedNameErrors(t.key))
      errs.push({ field: `spec.taints[${i}].key`, message: `Invalid value: ${goValue(t.key)}: ${e}` });
    if (!taintEffects.includes(t.effect)) {
      errs.push(
        t.effect
          ? {
              field: `spec.taints[${i}].effect`,
              reason: 'FieldValueNotSupported',
              message: `Unsupported value: ${goValue(t.effect)}: supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`,
            }
          : { field: `spec.taints[${i}].effect`, reason: 'FieldValueRequired', message: 'Required value' },
      );
    }
    const id = `${t.key}:${t.effect}`;
    if (seen.has(id)) errs.push({ field: `spec.taints[${i}]`, reason: 'FieldValueDuplicate', message: `Duplicate value: ${goValue(id)}` });
    seen.add(id);
  });
  return errs;
}

function validateLease(obj: any): FieldError[] {
  const errs = metaErrors(obj);
  const s = obj.spec ?? {};
  if (s.leaseDurationSeconds !== undefined && s.leaseDurationSeconds <= 0) {
    errs.push({ field: 'spec.leaseDurationSeconds', message: `Invalid value: ${s.leaseDurationSeconds}: must be greater than 0` });
  }
  if (s.leaseTransitions !== undefined && s.leaseTransitions < 0) {
    errs.push({ field: 'spec.leaseTransitions', message: `Invalid value: ${s.leaseTransitions}: must be greater than or equal to 0` });
  }
  return errs;
}

function validatePod(obj: any, old: any | undefined): FieldError[] {
  const errs = metaErrors(obj);
  const containers = obj.spec?.containers;
  if (!Array.isArray(containers) || containers.length === 0)
    errs.push({ field: 'spec.containers', reason: 'FieldValueRequired', message: 'Required value' });
  else
    containers.forEach((c: any, i: number) => {
      if (!c?.name) errs.push({ field: `spec.containers[${i}].name`, reason: 'FieldValueRequired', message: 'Required value' });
      if (!c?.image && !old) errs.push({ field: `spec.containers[${i}].image`, reason: 'FieldValueRequired', message: 'Required value' });
    });
  if (old) {
    // Pod specs are immutable apart from images, activeDeadlineSeconds and added tolerations.
    const strip = (s: any) => {
      const c = structuredClone(s ?? {});
      delete c.activeDeadlineSeconds;
      delete c.tolerations;
      for (const k of ['containers', 'initContainers']) for (const x of c[k] ?? []) delete x.image;
      return JSON.stringify(c, Object.keys(c).sort());
    };
    if (strip(obj.spec) !== strip(old.spec)) {
      errs.push({
        field: 'spec',
        reason: 'FieldValueForbidden',
        message:
          'Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
      });
    }
  }
  return errs;
}

// --- definitions ---------------------------------------------------------------------------------------

const metaSmp: SmpMeta = {
  'metadata.ownerReferences': { strategy: 'merge', key: 'uid' },
  'metadata.finalizers': { strategy: 'merge' },
};

const byName: Record<string, FieldGetter> = { 'metadata.name': (x) => x.metadata?.name ?? '' };
const byNameNs: Record<string, FieldGetter> = { ...byName, 'metadata.namespace': (x) => x.metadata?.namespace ?? '' };

const allVerbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

function def(d: Partial<ResourceDef> & Pick<ResourceDef, 'group' | 'plural' | 'singular' | 'kind' | 'namespaced' | 'schema'>): ResourceDef {
  return {
    version: 'v1',
    verbs: allVerbs,
    subresources: {},
    statusSubresource: false,
    generation: false,
    returnDeleted: false,
    allowCreateOnUpdate: false,
    smp: metaSmp,
    fields: d.namespaced ? byNameNs : byName,
    ...d,
  };
}

export const resources: ResourceDef[] = [
  def({
    group: '',
    plural: 'namespaces',
    singular: 'namespace',
    kind: 'Namespace',
    namespaced: false,
    shortNames: ['ns'],
    schema: NamespaceSchema,
    statusSubresource: true,
    subresources: { status: { kind: 'Namespace', verbs: ['get', 'patch', 'update'] } },
    fields: { ...byName, 'status.phase': (x) => x.status?.phase ?? '' },
    validate: (x) => metaErrors(x),
  }),
  def({
    group: '',
    plural: 'nodes',
    singular: 'node',
    kind: 'Node',
    namespaced: false,
    shortNames: ['no'],
    schema: NodeSchema,
    statusSubresource: true,
    subresources: { status: { kind: 'Node', verbs: ['get', 'patch', 'update'] } },
    smp: {
      ...metaSmp,
      'spec.podCIDRs': { strategy: 'merge' },
      'status.conditions': { strategy: 'merge', key: 'type' },
      'status.addresses': { strategy: 'merge', key: 'type' },
      'status.volumesAttached': { strategy: 'merge', key: 'name' },
    },
    fields: { ...byName, 'spec.unschedulable': (x) => String(x.spec?.unschedulable ?? false) },
    validate: validateNode,
  }),
  def({
    group: '',
    plural: 'pods',
    singular: 'pod',
    kind: 'Pod',
    namespaced: true,
    shortNames: ['po'],
    schema: PodSchema,
    statusSubresource: true,
    returnDeleted: true,
    subresources: {
      eviction: { kind: 'Eviction', group: 'policy', version: 'v1', verbs: ['create'] },
      status: { kind: 'Pod', verbs: ['get', 'patch', 'update'] },
    },
    smp: {
      ...metaSmp,
      'spec.containers': { strategy: 'merge', key: 'name' },
      'spec.initContainers': { strategy: 'merge', key: 'name' },
      'spec.containers.env': { strategy: 'merge', key: 'name' },
      'spec.containers.ports': { strategy: 'merge', key: 'containerPort' },
      'spec.containers.volumeMounts': { strategy: 'merge', key: 'mountPath' },
      'spec.volumes': { strategy: 'merge', key: 'name' },
      'spec.imagePullSecrets': { strategy: 'merge', key: 'name' },
      'status.conditions': { strategy: 'merge', key: 'type' },
      'status.podIPs': { strategy: 'merge', key: 'ip' },
    },
    fields: {
      ...byNameNs,
      'spec.nodeName': (x) => x.spec?.nodeName ?? '',
      'spec.restartPolicy': (x) => x.spec?.restartPolicy ?? '',
      'spec.schedulerName': (x) => x.spec?.schedulerName ?? '',
      'spec.serviceAccountName': (x) => x.spec?.serviceAccountName ?? '',
      'spec.hostNetwork': (x) => String(x.spec?.hostNetwork ?? false),
      'status.phase': (x) => x.status?.phase ?? '',
      'status.podIP': (x) => x.status?.podIP ?? '',
      'status.nominatedNodeName': (x) => x.status?.nominatedNodeName ?? '',
    },
    validate: validatePod,
  }),
  def({
    group: '',
    plural: 'serviceaccounts',
    singular: 'serviceaccount',
    kind: 'ServiceAccount',
    namespaced: true,
    shortNames: ['sa'],
    schema: ServiceAccountSchema,
    validate: (x) => metaErrors(x),
  }),
  def({
    group: 'apps',
    plural: 'daemonsets',
    singular: 'daemonset',
    kind: 'DaemonSet',
    namespaced: true,
    shortNames: ['ds'],
    schema: openObject('DaemonSet'),
    statusSubresource: true,
    generation: true,
    subresources: { status: { kind: 'DaemonSet', verbs: ['get', 'patch', 'update'] } },
  }),
  def({
    group: 'apps',
    plural: 'deployments',
    singular: 'deployment',
    kind: 'Deployment',
    namespaced: true,
    shortNames: ['deploy'],
    schema: openObject('Deployment'),
    statusSubresource: true,
    generation: true,
    subresources: { status: { kind: 'Deployment', verbs: ['get', 'patch', 'update'] } },
  }),
  def({
    group: 'apps',
    plural: 'replicasets',
    singular: 'replicaset',
    kind: 'ReplicaSet',
    namespaced: true,
    shortNames: ['rs'],
    schema: openObject('ReplicaSet'),
    statusSubresource: true,
    generation: true,
    subresources: { status: { kind: 'ReplicaSet', verbs: ['get', 'patch', 'update'] } },
  }),
  def({
    group: 'apps',
    plural: 'statefulsets',
    singular: 'statefulset',
    kind: 'StatefulSet',
    namespaced: true,
    shortNames: ['sts'],
    schema: openObject('StatefulSet'),
    statusSubresource: true,
    generation: true,
    subresources: { status: { kind: 'StatefulSet', verbs: ['get', 'patch', 'update'] } },
  }),
  def({
    group: 'coordination.k8s.io',
    plural: 'leases',
    singular: 'lease',
    kind: 'Lease',
    namespaced: true,
    schema: LeaseSchema,
    allowCreateOnUpdate: true,
    validate: validateLease,
  }),
  def({
    group: '',
    plural: 'events',
    singular: 'event',
    kind: 'Event',
    namespaced: true,
    shortNames: ['ev'],
    schema: eventSchema(head),
    allowCreateOnUpdate: true,
    fields: eventFields,
    validate: (x) => [...metaErrors(x), ...validateEvent(x)],
  }),
  def({
    group: 'policy',
    plural: 'poddisruptionbudgets',
    singular: 'poddisruptionbudget',
    kind: 'PodDisruptionBudget',
    namespaced: true,
    shortNames: ['pdb'],
    schema: PdbSchema,
    statusSubresource: true,
    generation: true,
    subresources: { status: { kind: 'PodDisruptionBudget', verbs: ['get', 'patch', 'update'] } },
    validate: (x) => metaErrors(x),
  }),
];

// Storage kinds every Kubernetes cluster serves (the health gates' storage gate reads them:
// docs/gates.md); typed loosely like the workloads, their status as the real controllers write it.
resources.push(
  def({
    group: '',
    plural: 'persistentvolumes',
    singular: 'persistentvolume',
    kind: 'PersistentVolume',
    namespaced: false,
    shortNames: ['pv'],
    schema: openObject('PersistentVolume'),
    statusSubresource: true,
    subresources: { status: { kind: 'PersistentVolume', verbs: ['get', 'patch', 'update'] } },
    validate: (x) => metaErrors(x),
  }),
  def({
    group: '',
    plural: 'persistentvolumeclaims',
    singular: 'persistentvolumeclaim',
    kind: 'PersistentVolumeClaim',
    namespaced: true,
    shortNames: ['pvc'],
    schema: openObject('PersistentVolumeClaim'),
    statusSubresource: true,
    subresources: { status: { kind: 'PersistentVolumeClaim', verbs: ['get', 'patch', 'update'] } },
    validate: (x) => metaErrors(x),
  }),
  def({
    group: 'storage.k8s.io',
    plural: 'volumeattachments',
    singular: 'volumeattachment',
    kind: 'VolumeAttachment',
    namespaced: false,
    schema: openObject('VolumeAttachment'),
    statusSubresource: true,
    subresources: { status: { kind: 'VolumeAttachment', verbs: ['get', 'patch', 'update'] } },
    validate: (x) => metaErrors(x),
  }),
);

/**
 * A kind served through a CustomResourceDefinition (the twin serves it once a test installs it:
 * KubeSim.installCrd): apiextensions-apiserver serves it like a built-in kind in discovery, with a
 * /status subresource when the CRD declares one; unknown fields pass through (preserved, as with
 * `x-kubernetes-preserve-unknown-fields`).
 */
export function crdKind(d: {
  group: string;
  version: string;
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
}): ResourceDef {
  return def({
    ...d,
    schema: openObject(d.kind),
    statusSubresource: true,
    generation: true,
    subresources: { status: { kind: d.kind, verbs: ['get', 'patch', 'update'] } },
    validate: (x) => metaErrors(x),
  });
}

/** Longhorn's Volume (longhorn-manager k8s/pkg/apis/longhorn/v1beta2/volume.go; the CRD from deploy/longhorn.yaml). */
export const longhornVolumes = crdKind({
  group: 'longhorn.io',
  version: 'v1beta2',
  plural: 'volumes',
  singular: 'volume',
  kind: 'Volume',
  namespaced: true,
  shortNames: ['lhv'],
});

/**
 * A custom resource of a user's own, for the health gates' CEL examples (tests, bench, demo): a database
 * cluster whose operator writes `status.ready`. Not a real project's CRD; the shape any operator's is.
 */
export const exampleDbClusters = crdKind({
  group: 'example.com',
  version: 'v1',
  plural: 'dbclusters',
  singular: 'dbcluster',
  kind: 'DbCluster',
  namespaced: true,
});

export const R = Object.fromEntries(resources.map((r) => [r.plural, r])) as Record<
  | 'namespaces'
  | 'nodes'
  | 'pods'
  | 'serviceaccounts'
  | 'daemonsets'
  | 'deployments'
  | 'replicasets'
  | 'statefulsets'
  | 'leases'
  | 'events'
  | 'poddisruptionbudgets'
  | 'persistentvolumes'
  | 'persistentvolumeclaims'
  | 'volumeattachments',
  ResourceDef
>;

export function findResource(
  group: string,
  version: string,
  plural: string,
  all: readonly ResourceDef[] = resources,
): ResourceDef | undefined {
  return all.find((r) => r.group === group && r.version === version && r.plural === plural);
}

export const groups = [...new Set(resources.map((r) => r.group))];
