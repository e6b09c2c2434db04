// The controllers that re-create a pod: the ReplicaSet controller creates a replacement as soon as a
// pod is terminating (it stops counting it), the StatefulSet and DaemonSet controllers once it is gone
// (a StatefulSet's under the same name, a DaemonSet's on the same node); and PodGC, which deletes the
// pods bound to a node that no longer exists. No scale-up, no rollout of a new template.
import { randomSuffix } from './api.js';
import type { SimContext } from './context.js';
import { clone } from './json.js';
import { controllerOf } from './objectFacts.js';
import { R } from './resources.js';
import { ApiError } from './status.js';

export class PodControllers {
  private readonly replaced = new Set<string>();

  constructor(private readonly ctx: SimContext) {}

  /** A pod became terminating: a ReplicaSet's is replaced at once. */
  terminating(pod: any): void {
    const owner = controllerOf(pod);
    if (owner?.kind === 'ReplicaSet') this.ctx.timers.after(10, () => this.replace(pod));
  }

  podGone(pod: any, uid: string): void {
    const owner = controllerOf(pod);
    if (!owner) return;
    if (['ReplicaSet', 'StatefulSet', 'DaemonSet'].includes(owner.kind)) this.replace(pod, uid);
  }

  /** Creates the owner's replacement for `old` (once per old pod). */
  private replace(old: any, uid: string = old.metadata.uid): void {
    if (this.replaced.has(uid)) return;
    this.replaced.add(uid);
    const owner = controllerOf(old);
    if (!owner) return;
    const def = ({ ReplicaSet: R.replicasets, StatefulSet: R.statefulsets, DaemonSet: R.daemonsets } as const)[owner.kind as 'ReplicaSet'];
    const ns = old.metadata.namespace;
    const ctl = def && this.ctx.store.peek(def, ns, owner.name);
    if (!ctl || ctl.metadata.uid !== owner.uid) return;
    const template = ctl.spec?.template;
    const spec = clone(template?.spec ?? old.spec);
    delete spec.nodeName;
    spec.volumes = (spec.volumes ?? []).filter((v: any) => !String(v.name).startsWith('kube-api-access-'));
    for (const c of spec.containers ?? [])
      c.volumeMounts = (c.volumeMounts ?? []).filter((m: any) => !String(m.name).startsWith('kube-api-access-'));
    if (!spec.volumes.length) delete spec.volumes;
    let name: string;
    if (owner.kind === 'StatefulSet') name = old.metadata.name;
    else name = `${owner.name}-${randomSuffix()}`;
    if (owner.kind === 'DaemonSet') {
      if (!this.ctx.store.peek(R.nodes, '', old.spec?.nodeName)) return;
      spec.nodeName = old.spec.nodeName;
    }
    if (this.ctx.store.peek(R.pods, ns, name)) return;
    const body = {
      metadata: {
        name,
        namespace: ns,
        labels: clone(template?.metadata?.labels ?? old.metadata.labels),
        ownerReferences: clone(old.metadata.ownerReferences),
      },
      spec,
    };
    try {
      this.ctx.api.create(R.pods, ns, body);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
    }
  }

  /** PodGC: pods bound to a node that no longer exists are force-deleted. */
  collectOrphans(): void {
    for (const p of this.ctx.store.list(R.pods)) {
      if (p.spec?.nodeName && !this.ctx.store.peek(R.nodes, '', p.spec.nodeName))
        this.ctx.store.delete(R.pods, p.metadata.namespace, p.metadata.name);
    }
  }
}
