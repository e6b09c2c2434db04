// The pods and workloads a test seeds (KubeSim.addPod): a pod's body (pause image, labels, the owner
// reference, a mirror pod's annotations, a DaemonSet's tolerations), its controller created on first
// use with the first pod as its template and one more replica per further pod, and the spec writes a
// test makes to those controllers.
import type { SimContext } from './context.js';
import { clone } from './json.js';
import { daemonSetTolerations, mirrorHash, pauseImage } from './objects.js';
import { R, type ResourceDef } from './resources.js';
import { nowTime } from './schema.js';

export interface PodSpecInput {
  namespace?: string;
  name: string;
  /** the node it already runs on; absent: created unbound, for the scheduler to place (or leave Pending) */
  nodeName?: string;
  /** each container's CPU request (`500m`, `3`): the scheduler fits it against the nodes' allocatable CPU */
  cpu?: string;
  /** spec.nodeSelector: the scheduler places it only on nodes with these labels */
  nodeSelector?: Record<string, string>;
  /** a Deployment's pods are its ReplicaSet's (`<name>-<hash>`, created with the Deployment) */
  owner?: { kind: 'Deployment' | 'ReplicaSet' | 'DaemonSet' | 'StatefulSet'; name: string };
  labels?: Record<string, string>;
  emptyDir?: boolean;
  mirror?: boolean;
}

const ownerDefs = { ReplicaSet: R.replicasets, DaemonSet: R.daemonsets, StatefulSet: R.statefulsets, Deployment: R.deployments } as const;

/** The owner reference an apps/v1 controller sets on what it creates. */
function controllerRef(owner: any): any {
  return {
    apiVersion: 'apps/v1',
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export class PodSeeder {
  constructor(private readonly ctx: SimContext) {}

  /**
   * A pod already running on `node` (no image pull), or unbound without one. Owned pods get their owner
   * object created on first use; labels default to `app: <owner or pod name>`. The container image is
   * the pause image, which every node holds.
   */
  podBody(spec: PodSpecInput, ns: string, node: any | undefined): any {
    let labels = spec.labels ?? { app: spec.owner?.name ?? spec.name };
    const container = {
      name: 'main',
      image: pauseImage,
      imagePullPolicy: 'IfNotPresent',
      ...(spec.cpu ? { resources: { requests: { cpu: spec.cpu } } } : {}),
    };
    const placement = spec.nodeSelector ? { nodeSelector: { ...spec.nodeSelector } } : {};
    const ownerReferences: any[] = [];
    if (spec.owner) {
      const owner = this.ensureOwner(ns, spec.owner.kind, spec.owner.name, labels, container, placement);
      // a ReplicaSet's pods carry its template's labels (a Deployment's: with pod-template-hash)
      if (spec.owner.kind === 'Deployment') labels = { ...owner.spec.template.metadata.labels };
      ownerReferences.push(controllerRef(owner));
    }
    const annotations: Record<string, string> = {};
    let tolerations: any[] | undefined;
    if (spec.mirror) {
      const h = mirrorHash(ns, spec.name);
      Object.assign(annotations, {
        'kubernetes.io/config.hash': h,
        'kubernetes.io/config.mirror': h,
        'kubernetes.io/config.seen': nowTime(),
        'kubernetes.io/config.source': 'file',
      });
      ownerReferences.push({ apiVersion: 'v1', kind: 'Node', name: spec.nodeName, uid: node!.metadata.uid, controller: true });
      tolerations = [{ operator: 'Exists', effect: 'NoExecute' }];
    } else if (spec.owner?.kind === 'DaemonSet') {
      tolerations = clone(daemonSetTolerations);
    }
    const body = {
      metadata: {
        name: spec.name,
        namespace: ns,
        labels,
        ...(Object.keys(annotations).length ? { annotations } : {}),
        ...(ownerReferences.length ? { ownerReferences } : {}),
      },
      spec: {
        containers: [container],
        ...(spec.nodeName !== undefined ? { nodeName: spec.nodeName } : {}),
        ...placement,
        ...(tolerations ? { tolerations } : {}),
        ...(spec.emptyDir ? { volumes: [{ name: 'cache', emptyDir: {} }] } : {}),
      },
    };
    return body;
  }

  /**
   * The pod's controller, created on first use; each further pod of it adds one to spec.replicas (a
   * spec change: its generation moves, and the controller observes it at its next sync). A Deployment
   * gets its ReplicaSet, which owns the pods. Their statuses are the controllers' (apps.ts); a
   * DaemonSet's is a fixed one (its pods are never waited for).
   */
  private ensureOwner(
    ns: string,
    kind: keyof typeof ownerDefs,
    name: string,
    labels: Record<string, string>,
    container: any,
    placement: Record<string, unknown> = {},
  ): any {
    if (kind === 'Deployment') {
      const d = this.ensureController(R.deployments, ns, name, labels, container, undefined, placement);
      const hash = d.metadata.uid.replace(/[^a-z0-9]/g, '').slice(0, 10);
      return this.ensureController(R.replicasets, ns, `${name}-${hash}`, { ...labels, 'pod-template-hash': hash }, container, d, placement);
    }
    const def = ownerDefs[kind];
    if (kind !== 'DaemonSet') return this.ensureController(def, ns, name, labels, container, undefined, placement);
    const cur = this.ctx.store.peek(def, ns, name);
    if (cur) return cur;
    const body = {
      metadata: { name, namespace: ns, labels },
      spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [container] } } },
      status: { currentNumberScheduled: 1, desiredNumberScheduled: 1, numberMisscheduled: 0, numberReady: 1, observedGeneration: 1 },
    };
    return this.ctx.api.create(def, ns, body).body;
  }

  private ensureController(
    def: ResourceDef,
    ns: string,
    name: string,
    labels: Record<string, string>,
    container: any,
    owner?: any,
    placement: Record<string, unknown> = {},
  ): any {
    const cur = this.ctx.store.peek(def, ns, name);
    if (cur) {
      this.updateSpec(def, ns, name, (o) => {
        o.spec.replicas = (o.spec.replicas ?? 1) + 1;
      });
      return this.ctx.store.peek(def, ns, name);
    }
    const body = {
      metadata: {
        name,
        namespace: ns,
        labels,
        ...(owner ? { ownerReferences: [controllerRef(owner)] } : {}),
      },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        // the pod template is the first pod's: what the controller re-creates an evicted pod from
        template: { metadata: { labels }, spec: { containers: [container], ...placement } },
        ...(def === R.statefulsets ? { serviceName: name } : {}),
      },
    };
    return this.ctx.api.create(def, ns, body).body;
  }

  /** The workload a pod belongs to: its Deployment for a Deployment's ReplicaSet, else its controller. */
  workloadOf(p: any): string {
    const c = (p.metadata.ownerReferences ?? []).find((o: any) => o.controller);
    if (!c) return p.metadata.name;
    if (c.kind === 'ReplicaSet') {
      const rs = this.ctx.store.peek(R.replicasets, p.metadata.namespace, c.name);
      const d = (rs?.metadata.ownerReferences ?? []).find((o: any) => o.controller && o.kind === 'Deployment');
      if (d) return d.name;
    }
    return c.name;
  }

  /** spec.minReadySeconds of a workload (a spec change: observed at its controller's next sync). */
  setMinReadySeconds(namespace: string, kind: 'Deployment' | 'ReplicaSet' | 'StatefulSet', name: string, seconds: number): void {
    this.updateSpec(ownerDefs[kind], namespace, name, (o) => {
      o.spec.minReadySeconds = seconds;
    });
    if (kind === 'Deployment') {
      for (const rs of this.ctx.store.list(R.replicasets, namespace)) {
        if ((rs.metadata.ownerReferences ?? []).some((o: any) => o.controller && o.kind === 'Deployment' && o.name === name))
          this.updateSpec(R.replicasets, namespace, rs.metadata.name, (o) => {
            o.spec.minReadySeconds = seconds;
          });
      }
    }
  }

  /** A spec write through the apiserver's update path: the generation moves, the status stays. */
  private updateSpec(def: ResourceDef, ns: string, name: string, fn: (obj: any) => void): void {
    const cur = this.ctx.store.get(def, ns, name);
    if (!cur) throw new Error(`${def.plural} ${ns}/${name} not found`);
    fn(cur);
    this.ctx.api.update(def, ns, name, undefined, cur);
  }

  /** A workload object as stored (status included). */
  workload(kind: 'Deployment' | 'ReplicaSet' | 'StatefulSet', namespace: string, name: string): any | undefined {
    return this.ctx.store.get(ownerDefs[kind], namespace, name);
  }
}
