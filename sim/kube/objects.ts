// Builders for the objects the twin seeds: nodes as a Talos kubelet registers them, pods as their
// controllers and kubelet leave them, namespaces, service accounts and node Leases.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { nowMicro, nowTime } from './schema.js';

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' | string;
  timeAdded?: string;
}

export interface NodeSpecInput {
  name: string;
  ip: string;
  role: 'control-plane' | 'worker';
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  taints?: Taint[];
  unschedulable?: boolean;
  bootID?: string;
  ready?: boolean;
}

export const taintKeys = {
  unschedulable: 'node.kubernetes.io/unschedulable',
  notReady: 'node.kubernetes.io/not-ready',
  unreachable: 'node.kubernetes.io/unreachable',
  ciliumAgentNotReady: 'node.cilium.io/agent-not-ready',
  controlPlane: 'node-role.kubernetes.io/control-plane',
};

export const conditionTypes = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'] as const;

const healthy: Record<string, { reason: string; message: string }> = {
  MemoryPressure: { reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available' },
  DiskPressure: { reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' },
  PIDPressure: { reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' },
  Ready: { reason: 'KubeletReady', message: 'kubelet is posting ready status' },
};

export const notReadyCondition = {
  reason: 'KubeletNotReady',
  message:
    'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized',
};

export function nodeConditions(ready: boolean, at: string): any[] {
  return conditionTypes.map((type) => {
    const ok = type === 'Ready' ? ready : true;
    const status = type === 'Ready' ? (ready ? 'True' : 'False') : 'False';
    const rm = type === 'Ready' && !ok ? notReadyCondition : healthy[type]!;
    return { type, status, lastHeartbeatTime: at, lastTransitionTime: at, reason: rm.reason, message: rm.message };
  });
}

export function buildNode(spec: NodeSpecInput, index: number): any {
  const now = nowTime();
  const cp = spec.role === 'control-plane';
  return {
    kind: 'Node',
    apiVersion: 'v1',
    metadata: {
      name: spec.name,
      labels: {
        'beta.kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': spec.name,
        'kubernetes.io/os': 'linux',
        ...(cp ? { [taintKeys.controlPlane]: '' } : {}),
        ...spec.labels,
      },
      annotations: spec.annotations ?? {
        'node.alpha.kubernetes.io/ttl': '0',
        'talos.dev/owned-labels': '[]',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
    },
    spec: {
      podCIDR: `10.244.${index}.0/24`,
      podCIDRs: [`10.244.${index}.0/24`],
      ...(spec.unschedulable ? { unschedulable: true } : {}),
      taints: spec.taints ?? (cp ? [{ key: taintKeys.controlPlane, effect: 'NoSchedule' }] : []),
    },
    status: {
      capacity: { cpu: '4', 'ephemeral-storage': '41152812Ki', 'hugepages-2Mi': '0', memory: '8148772Ki', pods: '110' },
      allocatable: { cpu: '3950m', 'ephemeral-storage': '37926431477', 'hugepages-2Mi': '0', memory: '7636772Ki', pods: '110' },
      conditions: nodeConditions(spec.ready ?? true, now),
      addresses: [
        { type: 'InternalIP', address: spec.ip },
        { type: 'Hostname', address: spec.name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: randomBytes(16).toString('hex'),
        systemUUID: randomUUID(),
        bootID: spec.bootID ?? randomUUID(),
        kernelVersion: '6.12.25-talos',
        osImage: 'Talos (v1.13.0)',
        containerRuntimeVersion: 'containerd://2.0.5',
        kubeletVersion: 'v1.32.0',
        kubeProxyVersion: '',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
    },
  };
}

export function buildNamespace(name: string): any {
  return {
    kind: 'Namespace',
    apiVersion: 'v1',
    metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };
}

export function buildServiceAccount(ns: string): any {
  return { kind: 'ServiceAccount', apiVersion: 'v1', metadata: { name: 'default', namespace: ns } };
}

export function buildNodeLease(node: any): any {
  return {
    kind: 'Lease',
    apiVersion: 'coordination.k8s.io/v1',
    metadata: {
      name: node.metadata.name,
      namespace: 'kube-node-lease',
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node.metadata.name, uid: node.metadata.uid }],
    },
    spec: { holderIdentity: node.metadata.name, leaseDurationSeconds: 40, renewTime: nowMicro() },
  };
}

export const pauseImage = 'registry.k8s.io/pause:3.10';

/** Tolerations the DefaultTolerationSeconds admission plugin adds to every pod. */
export const defaultTolerations = [
  { key: taintKeys.notReady, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  { key: taintKeys.unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
];

/** What the DaemonSet controller adds so its pods survive cordons and node trouble. */
export const daemonSetTolerations = [
  { key: taintKeys.notReady, operator: 'Exists', effect: 'NoExecute' },
  { key: taintKeys.unreachable, operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: taintKeys.unschedulable, operator: 'Exists', effect: 'NoSchedule' },
];

export function containerId(): string {
  return 'containerd://' + randomBytes(32).toString('hex');
}

export function defaultImageId(image: string): string {
  const repo = image.replace(/:[^/:]+$/, '').replace(/@.*$/, '');
  return `${repo}@sha256:${createHash('sha256').update(image).digest('hex')}`;
}

export function mirrorHash(ns: string, name: string): string {
  return createHash('md5').update(`${ns}/${name}`).digest('hex');
}
