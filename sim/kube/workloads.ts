// Pod-side actors: admission (service account, defaults), a trivial scheduler, each node's kubelet running
// pods (image pulls through the Talos half's ImagePullHooks, termination), the ReplicaSet / StatefulSet /
// DaemonSet controllers re-creating evicted pods, the disruption controller keeping PDB status, pod GC.
import type { ImagePullHooks } from '../types.js';
import { randomSuffix } from './api.js';
import type { SimContext } from './context.js';
import { clone } from './json.js';
import { containerId, defaultImageId, defaultTolerations, pauseImage, type Taint } from './objects.js';
import { isReady, type NodeControllers } from './nodes.js';
import { R } from './resources.js';
import { nowTime } from './schema.js';
import { labelSelectorIsEmpty, matchLabelSelector } from './selectors.js';
import { ApiError, failure } from './status.js';

interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}

export function tolerates(tols: Toleration[] | undefined, t: Taint): boolean {
  return (tols ?? []).some(
    (x) =>
      (!x.effect || x.effect === t.effect) &&
      (x.operator === 'Exists' ? !x.key || x.key === t.key : x.key === t.key && (x.value ?? '') === (t.value ?? '')),
  );
}

function defaultPullPolicy(image: string): string {
  if (image.includes('@')) return 'IfNotPresent';
  const last = image.split('/').pop()!;
  return !last.includes(':') || last.endsWith(':latest') ? 'Always' : 'IfNotPresent';
}

const isTerminating = (p: any) => !!p.metadata.deletionTimestamp;

function controllerOf(p: any): { kind: string; name: string; uid: string } | undefined {
  return (p.metadata.ownerReferences ?? []).find((o: any) => o.controller);
}

/** A CPU quantity in millicores: `3950m`, `2`, `0.5` (absent: 0). */
export function cpuMillis(q: unknown): number {
  if (q === undefined || q === null || q === '') return 0;
  const t = String(q);
  return t.endsWith('m') ? Number(t.slice(0, -1)) : Math.round(Number(t) * 1000);
}

/** The CPU a pod requests: the sum over its containers (init containers aside, as the twin has none). */
function podCpuMillis(p: any): number {
  return ((p.spec?.containers ?? []) as any[]).reduce((n, c) => n + cpuMillis(c.resources?.requests?.cpu), 0);
}

/**
 * The scheduler's FitError text (k8s.io/kubernetes pkg/scheduler/framework/types.go): the reasons
 * counted over the nodes and sorted, then what preemption found (nothing lower-priority to evict:
 * "No preemption victims" where resources were short, "not helpful" where a filter failed).
 */
function unschedulableMessage(total: number, reasons: string[]): string {
  const count = (xs: string[]) => {
    const m = new Map<string, number>();
    for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
    return [...m].map(([r, n]) => `${n} ${r}`).sort();
  };
  const resources = reasons.filter((r) => r.startsWith('Insufficient')).length;
  const preemption = count([
    ...Array<string>(resources).fill('No preemption victims found for incoming pod'),
    ...Array<string>(reasons.length - resources).fill('Preemption is not helpful for scheduling'),
  ]);
  return `0/${total} nodes are available: ${count(reasons).join(', ')}. preemption: 0/${total} nodes are available: ${preemption.join(', ')}.`;
}

type PullOutcome = { ok: true; imageID: string } | { ok: false; reason: string; message: string };

export class Workloads {
  pullHooks?: ImagePullHooks;
  /** node → image → imageID of what containerd holds (the pause image is always there) */
  private readonly images = new Map<string, Map<string, string>>();
  /** pod uid → the node boot generation its containers were started under */
  private readonly startedUnder = new Map<string, number>();
  private readonly starting = new Map<string, () => void>();
  private readonly replaced = new Set<string>();
  private readonly ips = new Map<string, number>();
  /** PDBs whose budget a test sets directly (addPdb / setPdbAllowed): ns/name → allowed when healthy */
  readonly pdbBudget = new Map<string, number>();
  /**
   * How long a pod whose containers just started stays not Ready (Infinity: never Ready); by default 0.
   * Set by the twin for a workload a test gave a readiness delay (KubeSim.setReadiness).
   */
  readinessDelay?: (pod: any) => number;
  private schedulePending = false;
  private readonly pdbPending = new Set<string>();

  constructor(
    private readonly ctx: SimContext,
    private readonly nodes: NodeControllers,
  ) {
    ctx.api.hooks.admitPod = (p) => this.admit(p);
    ctx.api.hooks.podTerminating = (p) => this.terminating(p);
    nodes.onNodeRunning = (n) => this.syncNode(n);
    nodes.onNodeLost = (n) => this.markNodePodsNotReady(n);
    nodes.onNodeReconnected = (n) => this.reconnected(n);
    ctx.store.onChange((e) => {
      if (e.def === R.pods) {
        const p = e.obj;
        this.schedulePdb(p.metadata.namespace);
        if (e.type === 'DELETED') {
          this.startedUnder.delete(p.metadata.uid);
          this.starting.get(p.metadata.uid)?.();
          this.starting.delete(p.metadata.uid);
          const uid = p.metadata.uid;
          ctx.timers.after(0, () => this.podGone(p, uid));
        } else if (p.spec?.nodeName && (e.type === 'ADDED' || !e.prev?.spec?.nodeName)) {
          const ref = { ns: p.metadata.namespace, name: p.metadata.name, uid: p.metadata.uid };
          ctx.timers.after(0, () => this.syncPod(ref));
        } else if (!p.spec?.nodeName && e.type === 'ADDED') {
          this.scheduleScheduler();
        }
      } else if (e.def === R.nodes) {
        this.scheduleScheduler();
      } else if (e.def === R.poddisruptionbudgets && e.type !== 'DELETED') {
        this.schedulePdb(e.obj.metadata.namespace);
      }
    });
  }

  nodeImages(node: string): Map<string, string> {
    let m = this.images.get(node);
    if (!m) {
      m = new Map([[pauseImage, defaultImageId(pauseImage)]]);
      this.images.set(node, m);
    }
    return m;
  }

  podIP(node: any): string {
    const name = node?.metadata?.name ?? '';
    const n = (this.ips.get(name) ?? 1) + 1;
    this.ips.set(name, n);
    const base = (node?.spec?.podCIDR ?? '10.244.0.0/24').split('/')[0]!.split('.').slice(0, 3).join('.');
    return `${base}.${n % 254}`;
  }

  // --- admission ---------------------------------------------------------------------------------------

  private admit(pod: any): void {
    const ns = pod.metadata.namespace;
    const spec = (pod.spec ??= {});
    spec.serviceAccountName ||= 'default';
    spec.serviceAccount = spec.serviceAccountName;
    const sa = this.ctx.store.peek(R.serviceaccounts, ns, spec.serviceAccountName);
    if (!sa) {
      throw new ApiError(
        failure(
          403,
          'Forbidden',
          `pods "${pod.metadata.name}" is forbidden: error looking up service account ${ns}/${spec.serviceAccountName}: serviceaccount "${spec.serviceAccountName}" not found`,
          {
            name: pod.metadata.name,
            kind: 'pods',
          },
        ),
      );
    }
    // The ServiceAccount admission plugin: a pod without pull secrets inherits its service account's.
    if (!(spec.imagePullSecrets ?? []).length && (sa.imagePullSecrets ?? []).length) spec.imagePullSecrets = clone(sa.imagePullSecrets);
    if (spec.automountServiceAccountToken !== false && sa.automountServiceAccountToken !== false) {
      const vol = `kube-api-access-${randomSuffix()}`;
      spec.volumes = [
        ...(spec.volumes ?? []),
        {
          name: vol,
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
            ],
          },
        },
      ];
      for (const c of spec.containers ?? []) {
        c.volumeMounts = [
          ...(c.volumeMounts ?? []),
          { name: vol, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
        ];
      }
    }
    for (const c of spec.containers ?? []) {
      if (typeof c.image === 'string') c.imagePullPolicy ??= defaultPullPolicy(c.image);
      c.terminationMessagePath ??= '/dev/termination-log';
      c.terminationMessagePolicy ??= 'File';
      c.resources ??= {};
    }
    spec.restartPolicy ??= 'Always';
    spec.dnsPolicy ??= 'ClusterFirst';
    spec.schedulerName ??= 'default-scheduler';
    spec.terminationGracePeriodSeconds ??= 30;
    spec.securityContext ??= {};
    spec.enableServiceLinks ??= true;
    spec.priority ??= 0;
    spec.preemptionPolicy ??= 'PreemptLowerPriority';
    const tols: Toleration[] = (spec.tolerations ??= []);
    for (const d of defaultTolerations) {
      if (
        !tols.some(
          (t) =>
            (t.operator === 'Exists' && !t.key && (!t.effect || t.effect === d.effect)) ||
            (t.key === d.key && (!t.effect || t.effect === d.effect)),
        )
      )
        tols.push(clone(d));
    }
  }

  // --- scheduler ---------------------------------------------------------------------------------------

  private scheduleScheduler(): void {
    if (this.schedulePending) return;
    this.schedulePending = true;
    this.ctx.timers.after(30, () => {
      this.schedulePending = false;
      this.schedule();
    });
  }

  /**
   * Why `pod` cannot go to `node`, as the default scheduler's first failing filter says it
   * (NodeUnschedulable, TaintToleration, NodeAffinity for spec.nodeSelector, NodeResourcesFit for CPU
   * requests against status.allocatable), or undefined when it fits. A NotReady node carries the
   * not-ready taint for the scheduler; the twin judges Ready itself, so it names that taint.
   */
  private unfit(pod: any, node: any, cpuUsed: number): string | undefined {
    if (node.spec?.unschedulable) return 'node(s) were unschedulable';
    if (!isReady(node)) return 'node(s) had untolerated taint {node.kubernetes.io/not-ready: }';
    const taint = ((node.spec?.taints ?? []) as Taint[]).find(
      (t) => t.effect !== 'PreferNoSchedule' && !tolerates(pod.spec.tolerations, t),
    );
    if (taint) return `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`;
    const labels = node.metadata.labels ?? {};
    if (Object.entries((pod.spec.nodeSelector ?? {}) as Record<string, string>).some(([k, v]) => labels[k] !== v)) {
      return "node(s) didn't match Pod's node affinity/selector";
    }
    const request = podCpuMillis(pod);
    if (request > 0 && cpuUsed + request > cpuMillis(node.status?.allocatable?.cpu)) return 'Insufficient cpu';
    return undefined;
  }

  private schedule(): void {
    const { store } = this.ctx;
    const pending = store.list(R.pods).filter((p) => !p.spec?.nodeName && !isTerminating(p));
    if (!pending.length) return;
    const nodes = store.list(R.nodes);
    const load = new Map<string, number>();
    // what the scheduler counts as taken on a node: every pod bound to it that has not finished, terminating ones included
    const cpuUsed = new Map<string, number>();
    for (const p of store.list(R.pods)) {
      if (!p.spec?.nodeName) continue;
      load.set(p.spec.nodeName, (load.get(p.spec.nodeName) ?? 0) + 1);
      if (p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed')
        cpuUsed.set(p.spec.nodeName, (cpuUsed.get(p.spec.nodeName) ?? 0) + podCpuMillis(p));
    }
    for (const p of pending) {
      const why = new Map<string, string>();
      for (const n of nodes) {
        const r = this.unfit(p, n, cpuUsed.get(n.metadata.name) ?? 0);
        if (r) why.set(n.metadata.name, r);
      }
      const fits = nodes.filter((n) => !why.has(n.metadata.name));
      const pod = clone(p);
      if (!fits.length) {
        const message = unschedulableMessage(nodes.length, [...why.values()]);
        const cond = (pod.status?.conditions ?? []).find((c: any) => c.type === 'PodScheduled');
        if (cond?.status === 'False' && cond.message === message) continue;
        pod.status = {
          ...(pod.status ?? {}),
          phase: 'Pending',
          conditions: [{ type: 'PodScheduled', status: 'False', lastTransitionTime: nowTime(), reason: 'Unschedulable', message }],
        };
        store.update(R.pods, pod);
        continue;
      }
      fits.sort(
        (a, b) => (load.get(a.metadata.name) ?? 0) - (load.get(b.metadata.name) ?? 0) || a.metadata.name.localeCompare(b.metadata.name),
      );
      const node = fits[0]!;
      load.set(node.metadata.name, (load.get(node.metadata.name) ?? 0) + 1);
      cpuUsed.set(node.metadata.name, (cpuUsed.get(node.metadata.name) ?? 0) + podCpuMillis(p));
      // A binding: the one way spec.nodeName is set after creation.
      pod.spec.nodeName = node.metadata.name;
      pod.status = {
        ...(pod.status ?? {}),
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: nowTime() }],
      };
      store.update(R.pods, pod);
    }
  }

  // --- kubelet: running pods ------------------------------------------------------------------------

  /** Starts (or, after a reboot, restarts) the pods bound to a node that is up and Ready; finishes terminating ones. */
  syncNode(node: string): void {
    for (const p of this.ctx.store.list(R.pods)) {
      if (p.spec?.nodeName !== node) continue;
      const ref = { ns: p.metadata.namespace, name: p.metadata.name, uid: p.metadata.uid };
      if (isTerminating(p)) this.finishLater(ref);
      else this.syncPod(ref);
    }
  }

  private current(ref: { ns: string; name: string; uid: string }): any | undefined {
    const p = this.ctx.store.get(R.pods, ref.ns, ref.name);
    return p && p.metadata.uid === ref.uid ? p : undefined;
  }

  private syncPod(ref: { ns: string; name: string; uid: string }, attempt = 0): void {
    const p = this.current(ref);
    if (!p || isTerminating(p)) return;
    const nodeName = p.spec.nodeName;
    const node = this.ctx.store.peek(R.nodes, '', nodeName);
    if (!node || !this.nodes.isUp(nodeName) || !isReady(node)) return;
    const boot = this.nodes.bootGeneration(nodeName);
    if (this.startedUnder.get(ref.uid) === boot) return;
    if (this.starting.has(ref.uid) && attempt === 0) return;
    this.starting.get(ref.uid)?.();
    const cancel = this.ctx.timers.after(this.ctx.timing.pullDelayMs, () => {
      this.starting.delete(ref.uid);
      this.startContainers(ref, boot, attempt);
    });
    this.starting.set(ref.uid, cancel);
  }

  private pull(node: string, c: any): PullOutcome {
    const cache = this.nodeImages(node);
    const policy = c.imagePullPolicy ?? defaultPullPolicy(c.image);
    const cached = cache.get(c.image);
    if (policy === 'Never') {
      return cached
        ? { ok: true, imageID: cached }
        : { ok: false, reason: 'ErrImageNeverPull', message: `Container image "${c.image}" is not present with pull policy of Never` };
    }
    if (policy === 'IfNotPresent' && cached) return { ok: true, imageID: cached };
    const r = this.pullHooks ? this.pullHooks.pull(node, c.image) : { ok: true as const, imageID: defaultImageId(c.image) };
    if (!r.ok) return { ok: false, reason: 'ErrImagePull', message: `Failed to pull image "${c.image}": ${r.error}` };
    cache.set(c.image, r.imageID);
    return { ok: true, imageID: r.imageID };
  }

  private startContainers(ref: { ns: string; name: string; uid: string }, boot: number, attempt: number): void {
    const p = this.current(ref);
    if (!p || isTerminating(p)) return;
    const nodeName = p.spec.nodeName;
    const node = this.ctx.store.peek(R.nodes, '', nodeName);
    if (!node || !this.nodes.isUp(nodeName) || this.nodes.bootGeneration(nodeName) !== boot) return;
    const now = nowTime();
    const prev = new Map(((p.status?.containerStatuses ?? []) as any[]).map((s) => [s.name, s]));
    const outcomes = (p.spec.containers ?? []).map((c: any) => ({ c, r: this.pull(nodeName, c) }));
    const statuses = outcomes.map(({ c, r }: { c: any; r: PullOutcome }) => {
      const before = prev.get(c.name);
      const wasStarted = !!before?.containerID;
      if (r.ok) {
        return {
          name: c.name,
          state: { running: { startedAt: now } },
          ...(wasStarted
            ? {
                lastState: {
                  terminated: {
                    exitCode: 255,
                    reason: 'Unknown',
                    startedAt: before.state?.running?.startedAt ?? now,
                    finishedAt: now,
                    containerID: before.containerID,
                  },
                },
              }
            : { lastState: {} }),
          ready: true,
          restartCount: (before?.restartCount ?? 0) + (wasStarted ? 1 : 0),
          image: c.image,
          imageID: r.imageID,
          containerID: containerId(),
          started: true,
        };
      }
      return {
        name: c.name,
        state: { waiting: { reason: r.reason, message: r.message } },
        lastState: before?.lastState ?? {},
        ready: false,
        restartCount: before?.restartCount ?? 0,
        image: c.image,
        imageID: before?.imageID ?? '',
        started: false,
      };
    });
    const allUp = outcomes.every((o: { r: PullOutcome }) => o.r.ok);
    // a readiness probe that passes only after a while (or never): Running, not Ready
    const notReadyFor = allUp ? (this.readinessDelay?.(p) ?? 0) : 0;
    if (notReadyFor > 0) for (const st of statuses) st.ready = false;
    p.status = this.composeStatus(p, node, statuses, allUp, now, allUp && notReadyFor <= 0);
    this.ctx.api.update(R.pods, ref.ns, ref.name, 'status', p);
    if (allUp) {
      this.startedUnder.set(ref.uid, boot);
      if (notReadyFor > 0 && Number.isFinite(notReadyFor)) this.ctx.timers.after(notReadyFor, () => this.becomeReady(ref, boot));
      return;
    }
    // ErrImagePull, then ImagePullBackOff, then another pull after a doubling back-off (scaled down from 10 s … 5 min).
    const backoff = Math.min(1000 * 2 ** attempt, 5000);
    this.ctx.timers.after(Math.min(300, backoff / 2), () => {
      const q = this.current(ref);
      if (!q || isTerminating(q)) return;
      let changed = false;
      for (const s of q.status?.containerStatuses ?? []) {
        if (s.state?.waiting?.reason === 'ErrImagePull') {
          const img = (q.spec.containers ?? []).find((c: any) => c.name === s.name)?.image ?? s.image;
          s.state.waiting = { reason: 'ImagePullBackOff', message: `Back-off pulling image "${img}"` };
          changed = true;
        }
      }
      if (changed) this.ctx.api.update(R.pods, ref.ns, ref.name, 'status', q);
    });
    const cancel = this.ctx.timers.after(backoff, () => {
      this.starting.delete(ref.uid);
      this.startContainers(ref, boot, attempt + 1);
    });
    this.starting.set(ref.uid, cancel);
  }

  /** The readiness probe passed: the containers and the pod become Ready (unless it was restarted or is going). */
  private becomeReady(ref: { ns: string; name: string; uid: string }, boot: number): void {
    const p = this.current(ref);
    if (!p || isTerminating(p) || this.startedUnder.get(ref.uid) !== boot) return;
    const now = nowTime();
    for (const st of p.status?.containerStatuses ?? []) st.ready = true;
    for (const c of p.status?.conditions ?? []) {
      if (c.type !== 'Ready' && c.type !== 'ContainersReady') continue;
      c.status = 'True';
      c.lastTransitionTime = now;
      delete c.reason;
      delete c.message;
    }
    this.ctx.api.update(R.pods, ref.ns, ref.name, 'status', p);
  }

  private composeStatus(p: any, node: any, statuses: any[], allUp: boolean, now: string, ready = allUp): any {
    const notReady = statuses.filter((s: any) => !s.ready).map((s: any) => s.name);
    const cond = (type: string, ok: boolean) => ({
      type,
      status: ok ? 'True' : 'False',
      lastTransitionTime: now,
      ...(ok ? {} : { reason: 'ContainersNotReady', message: `containers with unready status: [${notReady.join(' ')}]` }),
    });
    const ip = p.status?.podIP ?? this.podIP(node);
    const hostIP = (node?.status?.addresses ?? []).find((a: any) => a.type === 'InternalIP')?.address;
    return {
      phase: allUp ? 'Running' : 'Pending',
      conditions: [
        { type: 'PodReadyToStartContainers', status: 'True', lastTransitionTime: now },
        { type: 'Initialized', status: 'True', lastTransitionTime: now },
        cond('Ready', ready),
        cond('ContainersReady', ready),
        { type: 'PodScheduled', status: 'True', lastTransitionTime: p.metadata.creationTimestamp ?? now },
      ],
      ...(hostIP ? { hostIP, hostIPs: [{ ip: hostIP }] } : {}),
      podIP: ip,
      podIPs: [{ ip }],
      startTime: p.status?.startTime ?? now,
      containerStatuses: statuses,
      qosClass: p.status?.qosClass ?? 'BestEffort',
    };
  }

  /** A pod seeded by the test as already running: no pull, its containers count as started under this boot. */
  seedRunning(pod: any): void {
    const nodeName = pod.spec.nodeName;
    const node = this.ctx.store.peek(R.nodes, '', nodeName);
    const now = nowTime();
    const cache = this.nodeImages(nodeName);
    const statuses = (pod.spec.containers ?? []).map((c: any) => {
      const imageID = cache.get(c.image) ?? defaultImageId(c.image);
      cache.set(c.image, imageID);
      return {
        name: c.name,
        state: { running: { startedAt: now } },
        lastState: {},
        ready: true,
        restartCount: 0,
        image: c.image,
        imageID,
        containerID: containerId(),
        started: true,
      };
    });
    const p = clone(pod);
    p.status = this.composeStatus(p, node, statuses, true, now);
    this.startedUnder.set(p.metadata.uid, this.nodes.bootGeneration(nodeName));
    this.ctx.store.update(R.pods, p);
  }

  /** The node controller's MarkPodsNotReady once a node stops reporting. */
  private markNodePodsNotReady(node: string): void {
    for (const p0 of this.ctx.store.list(R.pods)) {
      if (p0.spec?.nodeName !== node || isTerminating(p0)) continue;
      const p = clone(p0);
      let changed = false;
      for (const c of p.status?.conditions ?? []) {
        if (c.type === 'Ready' && c.status !== 'False') {
          c.status = 'False';
          c.lastTransitionTime = nowTime();
          changed = true;
        }
      }
      if (changed) this.ctx.api.update(R.pods, p.metadata.namespace, p.metadata.name, 'status', p);
    }
  }

  /**
   * A kubelet back from a disconnection, same boot: its status manager posts each pod's status again,
   * so a pod whose containers are all ready is Ready again (the controller had marked it not Ready),
   * and pods deleted meanwhile finish terminating.
   */
  private reconnected(node: string): void {
    for (const p0 of this.ctx.store.list(R.pods)) {
      if (p0.spec?.nodeName !== node) continue;
      if (isTerminating(p0)) {
        this.finishLater({ ns: p0.metadata.namespace, name: p0.metadata.name, uid: p0.metadata.uid });
        continue;
      }
      const statuses = (p0.status?.containerStatuses ?? []) as any[];
      if (!statuses.length || !statuses.every((s) => s.ready)) continue;
      const p = clone(p0);
      let changed = false;
      for (const c of p.status?.conditions ?? []) {
        if ((c.type === 'Ready' || c.type === 'ContainersReady') && c.status !== 'True') {
          c.status = 'True';
          c.lastTransitionTime = nowTime();
          changed = true;
        }
      }
      if (changed) this.ctx.api.update(R.pods, p.metadata.namespace, p.metadata.name, 'status', p);
    }
  }

  // --- deletion, replacement, GC -----------------------------------------------------------------

  private terminating(pod: any): void {
    const ref = { ns: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid };
    this.starting.get(ref.uid)?.();
    this.starting.delete(ref.uid);
    if (this.nodes.isUp(pod.spec?.nodeName)) this.finishLater(ref);
    // The ReplicaSet controller stops counting a terminating pod and creates its replacement at once.
    const owner = controllerOf(pod);
    if (owner?.kind === 'ReplicaSet') this.ctx.timers.after(10, () => this.replace(pod));
  }

  private finishLater(ref: { ns: string; name: string; uid: string }): void {
    this.ctx.timers.after(this.ctx.timing.terminationMs, () => {
      if (!this.current(ref)) return;
      const node = this.current(ref)!.spec?.nodeName;
      if (node && !this.nodes.isUp(node)) return;
      this.ctx.store.delete(R.pods, ref.ns, ref.name);
    });
  }

  private podGone(pod: any, uid: string): void {
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

  // --- disruption controller ---------------------------------------------------------------------

  private schedulePdb(ns: string): void {
    if (this.pdbPending.has(ns)) return;
    this.pdbPending.add(ns);
    this.ctx.timers.after(0, () => {
      this.pdbPending.delete(ns);
      this.recomputePdbs(ns);
    });
  }

  /**
   * Budgets set by a test hold while the pods are healthy; each eviction in flight (its pod still
   * terminating) uses one up. Budgets created through the API follow minAvailable / maxUnavailable.
   */
  recomputePdbs(ns: string): void {
    const { store } = this.ctx;
    const pods = store.list(R.pods, ns);
    for (const b of store.list(R.poddisruptionbudgets, ns)) {
      const sel = b.spec?.selector;
      const matching = labelSelectorIsEmpty(sel) ? [] : pods.filter((p) => matchLabelSelector(sel, p.metadata.labels));
      const live = matching.filter((p) => !isTerminating(p));
      const healthy = live.filter((p) => (p.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True')).length;
      const existing = new Set(pods.map((p) => p.metadata.name));
      const disrupted = Object.fromEntries(
        Object.entries((b.status?.disruptedPods ?? {}) as Record<string, string>).filter(([n]) => existing.has(n)),
      );
      const terminatingNames = new Set(pods.filter(isTerminating).map((p) => p.metadata.name));
      const key = `${ns}/${b.metadata.name}`;
      let allowed: number;
      let desired: number;
      const budget = this.pdbBudget.get(key);
      if (budget !== undefined) {
        allowed = Math.max(0, budget - Object.keys(disrupted).length);
        desired = Math.max(0, healthy - allowed);
      } else {
        const expected = live.length;
        const pct = (v: unknown) =>
          typeof v === 'string' && v.endsWith('%') ? Math.ceil((Number(v.slice(0, -1)) / 100) * expected) : Number(v ?? 0);
        desired =
          b.spec?.minAvailable !== undefined
            ? pct(b.spec.minAvailable)
            : b.spec?.maxUnavailable !== undefined
              ? Math.max(0, expected - pct(b.spec.maxUnavailable))
              : 0;
        // A terminating pod already counts as unhealthy; only evictions not yet visible as deletions count again.
        allowed = Math.max(0, healthy - desired - Object.keys(disrupted).filter((n) => !terminatingNames.has(n)).length);
      }
      const next = clone(b);
      const prevCond = (b.status?.conditions ?? [])[0];
      const condStatus = allowed > 0 ? 'True' : 'False';
      next.status = {
        ...(Object.keys(disrupted).length ? { disruptedPods: disrupted } : {}),
        observedGeneration: b.metadata.generation ?? 1,
        disruptionsAllowed: allowed,
        currentHealthy: healthy,
        desiredHealthy: desired,
        expectedPods: live.length,
        conditions: [
          {
            type: 'DisruptionAllowed',
            status: condStatus,
            observedGeneration: b.metadata.generation ?? 1,
            lastTransitionTime: prevCond?.status === condStatus ? prevCond.lastTransitionTime : nowTime(),
            reason: allowed > 0 ? 'SufficientPods' : 'InsufficientPods',
            message: '',
          },
        ],
      };
      store.update(R.poddisruptionbudgets, next);
    }
  }
}
