// Longhorn's volumes as the health gates see them (docs/gates.md): a Volume (longhorn.io/v1beta2,
// namespace longhorn-system) whose replica sits on a node goes `degraded` when that node goes down
// (its instance-manager, and the replica process in it, die with the machine) and back to `healthy`
// `rebuildMs` after the node is Ready again (the replica is rebuilt from the healthy ones). Where it
// comes from: longhorn-manager controller/volume_controller.go (ReconcileVolumeState: robustness is
// `degraded` while fewer healthy replicas than spec.numberOfReplicas run, `faulted` with none) and
// controller/replica_controller.go (a replica whose instance-manager is gone is marked failed, then
// rebuilt once its node is schedulable again); a rebuild takes seconds to minutes with the data size.
import type { SimContext } from './context.js';
import { longhornVolumes, R } from './resources.js';

export const LONGHORN_NAMESPACE = 'longhorn-system';

interface Tracked {
  name: string;
  replicas: string[];
  /** replicas' nodes currently down or rebuilding */
  lost: Set<string>;
}

export class LonghornController {
  private readonly volumes = new Map<string, Tracked>();
  /** when each volume turned healthy / degraded (ms since epoch), in order: what a test orders its writes against */
  readonly transitions: Array<{ at: number; volume: string; robustness: string }> = [];
  private readonly ready = new Map<string, boolean>();
  /** rebuilds held (holdRebuilds): those that finished meanwhile, done on releaseRebuilds */
  private held = false;
  private readonly heldDone: Array<() => void> = [];

  constructor(
    private readonly ctx: SimContext,
    private readonly rebuildMs: number,
  ) {
    ctx.store.onChange((e) => {
      if (e.def !== R.nodes || e.type === 'DELETED') return;
      const name = e.obj.metadata.name as string;
      const isReady = readyOf(e.obj);
      const was = this.ready.get(name);
      this.ready.set(name, isReady);
      if (was === false && isReady) this.nodeReady(name);
    });
  }

  add(name: string, replicas: string[]): void {
    this.volumes.set(name, { name, replicas, lost: new Set() });
    this.ctx.api.create(longhornVolumes, LONGHORN_NAMESPACE, {
      apiVersion: 'longhorn.io/v1beta2',
      kind: 'Volume',
      metadata: { name, namespace: LONGHORN_NAMESPACE },
      spec: { numberOfReplicas: replicas.length, frontend: 'blockdev' },
      status: {},
    });
    this.write(name, 'healthy');
  }

  /** the node's machine went down: every volume with a replica on it is degraded (faulted when none is left) */
  nodeDown(node: string): void {
    this.ready.set(node, false);
    for (const v of this.volumes.values()) {
      if (!v.replicas.includes(node)) continue;
      v.lost.add(node);
      this.write(v.name, v.lost.size >= v.replicas.length ? 'faulted' : 'degraded');
    }
  }

  private nodeReady(node: string): void {
    for (const v of this.volumes.values()) {
      if (!v.lost.has(node)) continue;
      const rebuilt = () => {
        v.lost.delete(node);
        this.write(v.name, v.lost.size === 0 ? 'healthy' : 'degraded');
      };
      this.ctx.timers.after(this.rebuildMs, () => (this.held ? this.heldDone.push(rebuilt) : rebuilt()));
    }
  }

  /**
   * Rebuilds do not finish until releaseRebuilds (those whose time came meanwhile finish then, at
   * once): a volume degraded by a reboot stays degraded for as long as a test needs it to, instead of
   * `rebuildMs` racing the action's pace on a loaded runner. A real rebuild takes seconds to minutes.
   */
  holdRebuilds(): void {
    this.held = true;
  }

  releaseRebuilds(): void {
    this.held = false;
    for (const done of this.heldDone.splice(0)) done();
  }

  private write(name: string, robustness: string): void {
    const cur = this.ctx.store.get(longhornVolumes, LONGHORN_NAMESPACE, name);
    if (!cur) return;
    cur.status = { ...(cur.status ?? {}), state: 'attached', robustness };
    this.ctx.api.update(longhornVolumes, LONGHORN_NAMESPACE, name, 'status', cur);
    this.transitions.push({ at: Date.now(), volume: name, robustness });
  }
}

function readyOf(node: any): boolean {
  return (node.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');
}
