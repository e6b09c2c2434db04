// Pod-side actors, wired to the store's changes and to the node controllers: admission (service account,
// defaults; admission.ts), the scheduler (scheduler.ts), each node's kubelet running pods (kubelet.ts),
// the ReplicaSet / StatefulSet / DaemonSet controllers re-creating evicted pods and pod GC
// (podControllers.ts), the disruption controller keeping PDB status (disruption.ts).
import type { ImagePullHooks } from '../types.js';
import { admit } from './admission.js';
import type { SimContext } from './context.js';
import { DisruptionController } from './disruption.js';
import { Kubelets } from './kubelet.js';
import type { NodeControllers } from './nodes.js';
import { PodControllers } from './podControllers.js';
import { R } from './resources.js';
import { Scheduler } from './scheduler.js';

export class Workloads {
  private readonly scheduler: Scheduler;
  private readonly kubelets: Kubelets;
  private readonly controllers: PodControllers;
  private readonly disruption: DisruptionController;

  constructor(ctx: SimContext, nodes: NodeControllers) {
    this.scheduler = new Scheduler(ctx);
    this.kubelets = new Kubelets(ctx, nodes);
    this.controllers = new PodControllers(ctx);
    this.disruption = new DisruptionController(ctx);
    ctx.api.hooks.admitPod = (p) => admit(ctx.store, p);
    ctx.api.hooks.podTerminating = (p) => {
      this.kubelets.terminating(p);
      this.controllers.terminating(p);
    };
    nodes.onNodeRunning = (n) => this.kubelets.syncNode(n);
    nodes.onNodeLost = (n) => this.kubelets.markNodePodsNotReady(n);
    nodes.onNodeReconnected = (n) => this.kubelets.reconnected(n);
    ctx.store.onChange((e) => {
      if (e.def === R.pods) {
        const p = e.obj;
        this.disruption.schedulePdb(p.metadata.namespace);
        if (e.type === 'DELETED') {
          this.kubelets.podDeleted(p.metadata.uid);
          const uid = p.metadata.uid;
          ctx.timers.after(0, () => this.controllers.podGone(p, uid));
        } else if (p.spec?.nodeName && (e.type === 'ADDED' || !e.prev?.spec?.nodeName)) {
          const ref = { ns: p.metadata.namespace, name: p.metadata.name, uid: p.metadata.uid };
          ctx.timers.after(0, () => this.kubelets.syncPod(ref));
        } else if (!p.spec?.nodeName && e.type === 'ADDED') {
          this.scheduler.kick();
        }
      } else if (e.def === R.nodes) {
        this.scheduler.kick();
      } else if (e.def === R.poddisruptionbudgets && e.type !== 'DELETED') {
        this.disruption.schedulePdb(e.obj.metadata.namespace);
      }
    });
  }

  /** How each kubelet pulls an image (the Talos half's containerd); none: every pull succeeds. */
  set pullHooks(hooks: ImagePullHooks | undefined) {
    this.kubelets.pullHooks = hooks;
  }

  /** See Kubelets.readinessDelay. */
  set readinessDelay(delay: ((pod: any) => number) | undefined) {
    this.kubelets.readinessDelay = delay;
  }

  /** See Kubelets.probePassesNow. */
  probePassesNow(which: (pod: any) => boolean): void {
    this.kubelets.probePassesNow(which);
  }

  /** PDBs whose budget a test sets directly (addPdb / setPdbAllowed): ns/name → allowed when healthy */
  get pdbBudget(): Map<string, number> {
    return this.disruption.pdbBudget;
  }

  recomputePdbs(ns: string): void {
    this.disruption.recomputePdbs(ns);
  }

  /** A pod seeded by the test as already running: no pull, its containers count as started under this boot. */
  seedRunning(pod: any): void {
    this.kubelets.seedRunning(pod);
  }

  /** PodGC: pods bound to a node that no longer exists are force-deleted. */
  collectOrphans(): void {
    this.controllers.collectOrphans();
  }
}
