// Each node's kubelet, as the twin runs pods: a pod bound to a node that is up and Ready is started
// (each image pulled through the Talos half's ImagePullHooks, the policy honoured, the node's image
// cache kept; a failed pull backs off and retries), restarted after a reboot, kept not Ready for a
// readiness delay, marked not Ready when its node is lost and Ready again when the kubelet reconnects;
// a terminating pod finishes after the twin's termination time.
import type { ImagePullHooks } from '../types.js';
import { defaultPullPolicy } from './admission.js';
import type { SimContext } from './context.js';
import { clone } from './json.js';
import { isPodReady, isTerminating } from './objectFacts.js';
import { containerId, defaultImageId, pauseImage } from './objects.js';
import { isReady, type NodeControllers } from './nodes.js';
import { R } from './resources.js';
import { nowTime } from './schema.js';

type PullOutcome = { ok: true; imageID: string } | { ok: false; reason: string; message: string };

export class Kubelets {
  pullHooks?: ImagePullHooks;
  /**
   * How long a pod whose containers just started stays not Ready (Infinity: never Ready); by default 0.
   * Set by the twin for a workload a test gave a readiness delay (KubeSim.setReadiness).
   */
  readinessDelay?: (pod: any) => number;
  /** node → image → imageID of what containerd holds (the pause image is always there) */
  private readonly images = new Map<string, Map<string, string>>();
  /** pod uid → the node boot generation its containers were started under */
  private readonly startedUnder = new Map<string, number>();
  private readonly starting = new Map<string, () => void>();
  private readonly ips = new Map<string, number>();

  constructor(
    private readonly ctx: SimContext,
    private readonly nodes: NodeControllers,
  ) {}

  nodeImages(node: string): Map<string, string> {
    let m = this.images.get(node);
    if (!m) {
      m = new Map([[pauseImage, defaultImageId(pauseImage)]]);
      this.images.set(node, m);
    }
    return m;
  }

  private podIP(node: any): string {
    const name = node?.metadata?.name ?? '';
    const n = (this.ips.get(name) ?? 1) + 1;
    this.ips.set(name, n);
    const base = (node?.spec?.podCIDR ?? '10.244.0.0/24').split('/')[0]!.split('.').slice(0, 3).join('.');
    return `${base}.${n % 254}`;
  }

  /** The pod is gone: forget it, and stop a start still pending. */
  podDeleted(uid: string): void {
    this.startedUnder.delete(uid);
    this.starting.get(uid)?.();
    this.starting.delete(uid);
  }

  /** The pod got a deletionTimestamp: no start any more; it finishes once its node can run the shutdown. */
  terminating(pod: any): void {
    const ref = { ns: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid };
    this.starting.get(ref.uid)?.();
    this.starting.delete(ref.uid);
    if (this.nodes.isUp(pod.spec?.nodeName)) this.finishLater(ref);
  }

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

  syncPod(ref: { ns: string; name: string; uid: string }, attempt = 0): void {
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

  /** The readiness probe of each started, not yet Ready pod that `which` selects passes now: it becomes Ready. */
  probePassesNow(which: (pod: any) => boolean): void {
    for (const p of this.ctx.store.list(R.pods)) {
      const boot = this.startedUnder.get(p.metadata.uid);
      if (boot === undefined || isTerminating(p) || !which(p)) continue;
      if (isPodReady(p)) continue;
      this.becomeReady({ ns: p.metadata.namespace, name: p.metadata.name, uid: p.metadata.uid }, boot);
    }
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
  markNodePodsNotReady(node: string): void {
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
  reconnected(node: string): void {
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

  private finishLater(ref: { ns: string; name: string; uid: string }): void {
    this.ctx.timers.after(this.ctx.timing.terminationMs, () => {
      if (!this.current(ref)) return;
      const node = this.current(ref)!.spec?.nodeName;
      if (node && !this.nodes.isUp(node)) return;
      this.ctx.store.delete(R.pods, ref.ns, ref.name);
    });
  }
}
