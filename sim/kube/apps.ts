// The apps/v1 controllers' status writers: the ReplicaSet, StatefulSet and Deployment controllers keep
// each object's status in step with its pods, as kube-controller-manager does, and as unkindly:
// - asynchronously: a status is written one controller sync (timing.controllerSyncMs) after the pods
//   changed, a Deployment's one sync after its ReplicaSet's status (it sums the ReplicaSets' statuses),
//   and observedGeneration follows a spec change only at that sync;
// - with the apps/v1 JSON shape: counts are omitempty int32s, so a zero readyReplicas or
//   availableReplicas is ABSENT from the object (ReplicaSet `replicas` and StatefulSet `replicas` and
//   `availableReplicas` are not omitempty and stay, as in k8s.io/api apps/v1 types.go);
// - availableReplicas counts only pods Ready for minReadySeconds (a re-sync is scheduled for the moment
//   a Ready pod becomes available).
// What each controller counts (kubernetes pkg/controller/replicaset/replica_set_utils.go calculateStatus,
// pkg/controller/deployment/sync.go calculateStatus, pkg/controller/statefulset/stateful_set_control.go):
// ReplicaSet: replicas = its active pods (not terminating, not Succeeded/Failed), readyReplicas = the
// Ready ones, availableReplicas = the Ready ones for minReadySeconds. Deployment: the sums over its
// ReplicaSets' statuses, updatedReplicas = the newest ReplicaSet's replicas, unavailableReplicas =
// spec.replicas - availableReplicas (not below 0), conditions Available and Progressing.
// StatefulSet: replicas = its created pods, readyReplicas = Running and Ready, availableReplicas =
// those Ready for minReadySeconds.
// Not modelled: the controllers creating pods for a scale-up (the twin's pods are seeded by tests or
// re-created after an eviction by podControllers.ts), rollouts of a new template.
import type { SimContext } from './context.js';
import { clone } from './json.js';
import { controllerOf, isTerminating } from './objectFacts.js';
import { R, type ResourceDef } from './resources.js';
import { nowTime } from './schema.js';

const isFinished = (p: any) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

function readySince(p: any): number | undefined {
  const c = (p.status?.conditions ?? []).find((x: any) => x.type === 'Ready');
  return c?.status === 'True' ? Date.parse(c.lastTransitionTime ?? '') || 0 : undefined;
}

/** Drop the omitempty zeros (and keep the fields that are not omitempty, whatever their value). */
function omitZeros(status: Record<string, unknown>, keep: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(status).filter(([k, v]) => keep.includes(k) || (v !== 0 && v !== '' && v !== undefined)));
}

const kindDefs: Record<string, ResourceDef> = { ReplicaSet: R.replicasets, StatefulSet: R.statefulsets, Deployment: R.deployments };

export class AppsControllers {
  private readonly pending = new Map<string, () => void>();

  constructor(private readonly ctx: SimContext) {
    ctx.store.onChange((e) => {
      const o = e.obj;
      if (e.def === R.pods) {
        const c = controllerOf(o);
        if (c && (c.kind === 'ReplicaSet' || c.kind === 'StatefulSet')) this.enqueue(c.kind, o.metadata.namespace, c.name);
      } else if (e.def === R.replicasets || e.def === R.statefulsets || e.def === R.deployments) {
        if (e.type === 'DELETED') return;
        // a spec change (generation bump) is observed at the next sync
        if ((o.status?.observedGeneration ?? 0) < (o.metadata.generation ?? 0)) this.enqueue(o.kind, o.metadata.namespace, o.metadata.name);
        const owner = controllerOf(o);
        if (e.def === R.replicasets && owner?.kind === 'Deployment') this.enqueue('Deployment', o.metadata.namespace, owner.name);
      }
    });
  }

  /** One sync of the controller, one controller-sync period from now (several changes meanwhile: still one). */
  private enqueue(kind: string, ns: string, name: string, delayMs = this.ctx.timing.controllerSyncMs): void {
    const key = `${kind}/${ns}/${name}`;
    if (this.pending.has(key)) return;
    const cancel = this.ctx.timers.after(delayMs, () => {
      this.pending.delete(key);
      this.sync(kind, ns, name);
    });
    this.pending.set(key, cancel);
  }

  private sync(kind: string, ns: string, name: string): void {
    const def = kindDefs[kind];
    const obj = def && this.ctx.store.get(def, ns, name);
    if (!obj) return;
    const status =
      kind === 'ReplicaSet'
        ? this.replicaSetStatus(obj)
        : kind === 'StatefulSet'
          ? this.statefulSetStatus(obj)
          : this.deploymentStatus(obj);
    if (JSON.stringify(status) === JSON.stringify(obj.status ?? {})) return;
    const next = clone(obj);
    next.status = status;
    this.ctx.api.update(def, ns, name, 'status', next);
  }

  private podsOf(owner: any): any[] {
    return this.ctx.store.list(R.pods, owner.metadata.namespace).filter((p) => controllerOf(p)?.uid === owner.metadata.uid);
  }

  /** Ready for minReadySeconds; a Ready pod not yet available gets a re-sync at the moment it will be. */
  private available(owner: any, pods: any[]): number {
    const minMs = (owner.spec?.minReadySeconds ?? 0) * 1000;
    const now = Date.now();
    let n = 0;
    for (const p of pods) {
      const since = readySince(p);
      if (since === undefined) continue;
      if (now - since >= minMs) n++;
      else this.enqueue(owner.kind, owner.metadata.namespace, owner.metadata.name, since + minMs - now + 1);
    }
    return n;
  }

  private replicaSetStatus(rs: any): Record<string, unknown> {
    const active = this.podsOf(rs).filter((p) => !isTerminating(p) && !isFinished(p));
    const ready = active.filter((p) => readySince(p) !== undefined);
    return omitZeros(
      {
        replicas: active.length,
        fullyLabeledReplicas: active.length,
        readyReplicas: ready.length,
        availableReplicas: this.available(rs, ready),
        observedGeneration: rs.metadata.generation ?? 1,
      },
      ['replicas'],
    );
  }

  private statefulSetStatus(sts: any): Record<string, unknown> {
    const pods = this.podsOf(sts).filter((p) => !!p.status?.phase);
    const ready = pods.filter((p) => p.status?.phase === 'Running' && readySince(p) !== undefined);
    const revision = `${sts.metadata.name}-${sts.metadata.uid.slice(0, 10)}`;
    return omitZeros(
      {
        observedGeneration: sts.metadata.generation ?? 1,
        replicas: pods.length,
        readyReplicas: ready.length,
        currentReplicas: pods.length,
        updatedReplicas: pods.length,
        currentRevision: revision,
        updateRevision: revision,
        collisionCount: 0,
        availableReplicas: this.available(sts, ready),
      },
      ['replicas', 'availableReplicas', 'collisionCount'],
    );
  }

  private deploymentStatus(d: any): Record<string, unknown> {
    const ns = d.metadata.namespace;
    const rss = this.ctx.store.list(R.replicasets, ns).filter((rs) => controllerOf(rs)?.uid === d.metadata.uid);
    const newest = [...rss].sort((a, b) => (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''))[0];
    const sum = (f: string) => rss.reduce((n, rs) => n + (rs.status?.[f] ?? 0), 0);
    const want = d.spec?.replicas ?? 1;
    const replicas = sum('replicas');
    const updated = newest?.status?.replicas ?? 0;
    const available = sum('availableReplicas');
    // the default RollingUpdate maxUnavailable is 25%, rounded down
    const maxUnavailable = Math.floor(want * 0.25);
    const complete = updated === want && replicas === want && available === want;
    const prev = new Map(((d.status?.conditions ?? []) as any[]).map((c) => [c.type, c]));
    const cond = (type: string, ok: boolean, reason: string, message: string) => {
      const before = prev.get(type);
      const now = nowTime();
      const same = before?.status === (ok ? 'True' : 'False');
      return {
        type,
        status: ok ? 'True' : 'False',
        lastUpdateTime: same && before.reason === reason ? before.lastUpdateTime : now,
        lastTransitionTime: same ? before.lastTransitionTime : now,
        reason,
        message,
      };
    };
    const availableOk = available >= want - maxUnavailable;
    const rsName = newest?.metadata.name ?? d.metadata.name;
    return omitZeros(
      {
        observedGeneration: d.metadata.generation ?? 1,
        replicas,
        updatedReplicas: updated,
        readyReplicas: sum('readyReplicas'),
        availableReplicas: available,
        unavailableReplicas: Math.max(0, want - available),
        conditions: [
          availableOk
            ? cond('Available', true, 'MinimumReplicasAvailable', 'Deployment has minimum availability.')
            : cond('Available', false, 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.'),
          complete
            ? cond('Progressing', true, 'NewReplicaSetAvailable', `ReplicaSet "${rsName}" has successfully progressed.`)
            : cond('Progressing', true, 'ReplicaSetUpdated', `ReplicaSet "${rsName}" is progressing.`),
        ],
      },
      [],
    );
  }
}
