// KubeSim: an in-process kube-apiserver twin that the unmodified `kubectl` binary drives over plain HTTP.
//
// Checked against the real kubectl on this machine (the Google Cloud SDK dispatcher → built-in v1.32.4),
// by __tests__/sim-kube: the dispatcher's `/version` probe (answered at once, minor "32"); legacy
// discovery with short names and pods/eviction (policy/v1 Eviction); `get` / `get -l` / `get -o json`;
// `patch --type=json|merge` and the plain strategic patch, with "patched (no change)" on no-op writes and
// the generic 422 text for a failed `test`; `cordon`/`uncordon` (SMP `unschedulable:true|null`);
// `drain --ignore-daemonsets --delete-emptydir-data` (DaemonSet GET, mirror pods skipped, eviction POSTs,
// 429 PDB retries every 5 s, deletion polling, `--timeout` failure leaving the node cordoned);
// `wait --for=condition=Ready` (list + streaming watch with fieldSelector); `get --raw /readyz`;
// `create -f` of a Lease through the minimal OpenAPI v3 and with --validate=false, 409 AlreadyExists,
// `patch`/`delete` of a Lease; a dropped connection and an injected 500 as kubectl reports them.
// Semantics follow docs/kubernetes-facts.md; deviations are listed in README.md here.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ImagePullHooks, KubeNodeHooks } from '../types.js';
import { Api } from './api.js';
import type { SimContext, SimTiming } from './context.js';
import { Faults, isMutating, type FaultAction, type FaultMatch, type WriteHookMatch } from './faults.js';
import { HttpFront, type RequestRecord } from './http.js';
import { clone } from './json.js';
import { NodeControllers, lifecycleDiff } from './nodes.js';
import { buildNamespace, buildNode, buildServiceAccount, type NodeSpecInput } from './objects.js';
import { R, longhornVolumes, resources, type ResourceDef } from './resources.js';
import { LONGHORN_NAMESPACE, LonghornController } from './longhorn.js';
import { nowTime } from './schema.js';
import { Store } from './store.js';
import { Timers } from './timers.js';
import { Watches } from './watch.js';
import { Workloads } from './workloads.js';
import { PodSeeder, type PodSpecInput } from './seedPods.js';
import type { NodeWrite } from './nodeWrites.js';
import { AppsControllers } from './apps.js';
import { isPodReady } from './objectFacts.js';
import { kubeconfigAuth, kubeTls, type KubeAuth } from './auth.js';

export type { RequestRecord } from './http.js';
export type { Taint, NodeSpecInput } from './objects.js';
export type { FaultAction, FaultMatch, WriteHookMatch } from './faults.js';
export type { PodSpecInput } from './seedPods.js';
export { outOverTime, type NodeWrite } from './nodeWrites.js';

export interface KubeSimOptions extends Partial<SimTiming> {
  imagePull?: ImagePullHooks;
  /** where the kubeconfig and the kubectl cache dir go; a fresh temp dir (removed by stop()) by default */
  dir?: string;
  /** who may call, and the kubeconfig's user for it (sim/kube/auth.ts); everyone over plain http by default */
  auth?: KubeAuth;
}

export interface PdbSpecInput {
  namespace?: string;
  name: string;
  selector: Record<string, string>;
  disruptionsAllowed: number;
}

export interface ChurnOptions {
  nodes?: string[];
  perSecond: number;
  kind?: 'status' | 'label' | 'annotation';
}

/**
 * What happened to a pod, in order, from the twin's own view: an eviction the apiserver accepted, a
 * pod becoming Ready. A test checks from it (not from what the action says) that a drain's first
 * eviction came after the pods an earlier drain evicted were Ready again.
 */
export interface PodEvent {
  at: number;
  type: 'evicted' | 'ready';
  namespace: string;
  pod: string;
  node: string;
  /** the pod's controller, `Kind/name` */
  owner?: string;
}

/**
 * A change of a workload's `status.availableReplicas` (ReplicaSet, StatefulSet, Deployment), stamped
 * when the twin's controller wrote it: a test orders it against a pod's `ready` PodEvent on the twin's
 * own clock instead of racing a poll against minReadySeconds.
 */
export interface AvailabilityChange {
  at: number;
  kind: string;
  namespace: string;
  name: string;
  /** absent when the status omits it (zero) */
  available?: number;
}

export class KubeSim implements KubeNodeHooks {
  readonly url: string;
  readonly kubeconfigPath: string;
  private readonly cacheDir: string;
  private nodeCount = 0;
  /** every write to a Node since the twin started, in store order (see NodeWrite) */
  readonly nodeWrites: NodeWrite[] = [];
  /** evictions accepted and pods becoming Ready since the twin started (see PodEvent) */
  readonly podEvents: PodEvent[] = [];
  /** every change of a workload's availableReplicas since the twin started (see AvailabilityChange) */
  readonly availabilityChanges: AvailabilityChange[] = [];
  /** readiness delays by `namespace/workload` (see setReadiness) */
  private readonly readiness = new Map<string, number>();
  /** the pods and workloads a test seeds (addPod) */
  private readonly seeder: PodSeeder;

  private constructor(
    private readonly ctx: SimContext,
    private readonly http: HttpFront,
    private readonly faults: Faults,
    private readonly nodesCtl: NodeControllers,
    private readonly workloads: Workloads,
    private readonly dir: string,
    private readonly ownDir: boolean,
    port: number,
    readonly requests: RequestRecord[],
    private readonly kinds: ResourceDef[],
    scheme: 'http' | 'https' = 'http',
  ) {
    this.url = `${scheme}://127.0.0.1:${port}`;
    this.seeder = new PodSeeder(ctx);
    this.kubeconfigPath = join(dir, 'kubeconfig');
    this.cacheDir = join(dir, 'cache');
    const podEvent = (type: PodEvent['type'], p: any) => {
      const c = (p.metadata.ownerReferences ?? []).find((o: any) => o.controller);
      this.podEvents.push({
        at: Date.now(),
        type,
        namespace: p.metadata.namespace,
        pod: p.metadata.name,
        node: p.spec?.nodeName ?? '',
        ...(c ? { owner: `${c.kind}/${c.name}` } : {}),
      });
    };
    ctx.api.hooks.podEvicted = (p) => {
      podEvent('evicted', p);
      if (p.spec?.nodeName) nodesCtl.podEvicted(p.spec.nodeName);
    };
    workloads.readinessDelay = (p) => this.readiness.get(`${p.metadata.namespace}/${this.seeder.workloadOf(p)}`) ?? 0;
    ctx.store.onChange((e) => {
      if (e.def === R.pods && e.type !== 'DELETED' && isPodReady(e.obj) && !isPodReady(e.prev)) podEvent('ready', e.obj);
      if ((e.def === R.replicasets || e.def === R.statefulsets || e.def === R.deployments) && e.type !== 'DELETED') {
        const available: number | undefined = e.obj.status?.availableReplicas;
        if (available !== e.prev?.status?.availableReplicas) {
          const m = e.obj.metadata;
          this.availabilityChanges.push({
            at: Date.now(),
            kind: e.obj.kind,
            namespace: m.namespace,
            name: m.name,
            ...(available === undefined ? {} : { available }),
          });
        }
      }
      if (e.def !== R.nodes) return;
      const o = e.obj;
      this.nodeWrites.push({
        rv: e.rv,
        at: Date.now(),
        node: o.metadata.name,
        unschedulable: !!o.spec?.unschedulable,
        annotations: { ...(o.metadata.annotations ?? {}) },
        labels: { ...(o.metadata.labels ?? {}) },
        taints: ((o.spec?.taints ?? []) as Array<{ key: string; effect: string }>).map((t) => `${t.key}:${t.effect}`),
        ready: ((o.status?.conditions ?? []) as Array<{ type: string; status: string }>).find((x) => x.type === 'Ready')?.status ?? '',
        deleted: e.type === 'DELETED',
      });
    });
  }

  static async start(opts: KubeSimOptions = {}): Promise<KubeSim> {
    const timing: SimTiming = {
      heartbeatMs: opts.heartbeatMs ?? 1000,
      taintDelayMs: opts.taintDelayMs ?? 100,
      nodeMonitorPeriodMs: opts.nodeMonitorPeriodMs ?? opts.taintDelayMs ?? 100,
      nodeMonitorGraceMs: opts.nodeMonitorGraceMs ?? opts.taintDelayMs ?? 100,
      pressureTransitionMs: opts.pressureTransitionMs ?? opts.taintDelayMs ?? 100,
      bootDelayMs: opts.bootDelayMs ?? 100,
      ciliumDelayMs: opts.ciliumDelayMs ?? 300,
      pullDelayMs: opts.pullDelayMs ?? 200,
      terminationMs: opts.terminationMs ?? 100,
      controllerSyncMs: opts.controllerSyncMs ?? 100,
    };
    const store = new Store();
    const api = new Api(store);
    const timers = new Timers();
    const ctx: SimContext = { api, store, timers, timing };
    const faults = new Faults();
    const watches = new Watches(store);
    const nodesCtl = new NodeControllers(ctx);
    const workloads = new Workloads(ctx, nodesCtl);
    new AppsControllers(ctx);
    workloads.pullHooks = opts.imagePull;
    const log: RequestRecord[] = [];
    const kinds: ResourceDef[] = [...resources];
    // every auth form over TLS: kubectl sends a kubeconfig's user credentials only to an https server
    // (client-go tools/clientcmd client_config.go: "only try to read the auth information if we are secure")
    const tls = opts.auth ? kubeTls() : undefined;
    const http = new HttpFront(api, watches, faults, log, kinds, opts.auth, tls);
    const port = await http.listen();
    const ownDir = !opts.dir;
    const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'kube-sim-'));
    mkdirSync(join(dir, 'cache'), { recursive: true });
    const sim = new KubeSim(ctx, http, faults, nodesCtl, workloads, dir, ownDir, port, log, kinds, tls ? 'https' : 'http');
    const access = kubeconfigAuth(opts.auth, tls, dir);
    for (const ns of ['default', 'kube-node-lease', 'kube-public', 'kube-system']) sim.addNamespace(ns);
    writeFileSync(
      sim.kubeconfigPath,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: sim',
        '  cluster:',
        `    server: ${sim.url}`,
        ...access.cluster,
        'contexts:',
        '- name: sim',
        '  context:',
        '    cluster: sim',
        '    user: sim',
        'current-context: sim',
        'users:',
        '- name: sim',
        ...access.user,
        '',
      ].join('\n'),
    );
    return sim;
  }

  /** KUBECONFIG plus a per-instance KUBECACHEDIR, so discovery caches never leak between instances. */
  env(): Record<string, string> {
    return { KUBECONFIG: this.kubeconfigPath, KUBECACHEDIR: this.cacheDir };
  }

  async stop(): Promise<void> {
    this.ctx.timers.clearAll();
    this.faults.clear();
    await this.http.close();
    if (this.ownDir) rmSync(this.dir, { recursive: true, force: true });
  }

  setImagePullHooks(h: ImagePullHooks): void {
    this.workloads.pullHooks = h;
  }

  // --- namespaces and service accounts -------------------------------------------------------------

  addNamespace(name: string): void {
    if (this.ctx.store.peek(R.namespaces, '', name)) return;
    this.ctx.api.create(R.namespaces, '', buildNamespace(name));
    this.ctx.api.create(R.serviceaccounts, name, buildServiceAccount(name));
  }

  /** Configures the namespace's default ServiceAccount with pull secrets; pod admission then injects them. */
  setServiceAccountPullSecrets(namespace: string, names: string[]): void {
    this.addNamespace(namespace);
    const sa = this.ctx.store.get(R.serviceaccounts, namespace, 'default')!;
    sa.imagePullSecrets = names.map((name) => ({ name }));
    this.ctx.api.update(R.serviceaccounts, namespace, 'default', undefined, sa);
  }

  // --- nodes -----------------------------------------------------------------------------------------

  /**
   * Registers a node with its kubelet running. Control planes get the control-plane NoSchedule taint unless
   * `taints` is given; default annotations unless `annotations` is given ({} means none). The lifecycle
   * taints the node already deserves (a cordon, NotReady) are present from the start, as in a settled cluster.
   */
  addNode(spec: NodeSpecInput): void {
    if (this.ctx.store.peek(R.nodes, '', spec.name)) throw new Error(`node ${spec.name} already exists`);
    const obj = buildNode(spec, ++this.nodeCount);
    const { add } = lifecycleDiff(obj);
    obj.spec.taints = [...obj.spec.taints, ...add.map((t) => ({ ...t, timeAdded: nowTime() }))];
    this.ctx.api.create(R.nodes, '', obj);
    this.nodesCtl.register(spec.name);
  }

  node(name: string): any | undefined {
    return this.ctx.store.get(R.nodes, '', name);
  }

  nodes(): any[] {
    return this.ctx.store.list(R.nodes).map(clone);
  }

  /** A write by another actor: fn edits a copy, which is normalized and stored (RV bump and MODIFIED if it changed). */
  mutateNode(name: string, fn: (obj: any) => void): void {
    this.mutate(R.nodes, '', name, fn);
  }

  private mutate(def: ResourceDef, ns: string, name: string, fn: (obj: any) => void): void {
    const cur = this.ctx.store.get(def, ns, name);
    if (!cur) throw new Error(`${def.plural} ${ns ? ns + '/' : ''}${name} not found`);
    fn(cur);
    const { obj } = this.ctx.api.decode(def, cur, 'body', 'Ignore');
    if (obj.metadata.name !== name) throw new Error('mutateNode: the name cannot change');
    if (def.namespaced) obj.metadata.namespace = ns;
    this.ctx.store.update(def, obj);
  }

  /** Same name, new uid: the node object was deleted and the kubelet registered it again. */
  replaceNode(name: string): void {
    const cur = this.ctx.store.get(R.nodes, '', name);
    if (!cur) throw new Error(`node ${name} not found`);
    this.nodesCtl.unregister(name);
    this.ctx.store.delete(R.nodes, '', name);
    delete cur.metadata.uid;
    delete cur.metadata.resourceVersion;
    delete cur.metadata.creationTimestamp;
    this.ctx.api.create(R.nodes, '', cur);
    this.nodesCtl.register(name);
  }

  deleteNode(name: string): void {
    if (!this.ctx.store.peek(R.nodes, '', name)) throw new Error(`node ${name} not found`);
    this.nodesCtl.unregister(name);
    this.ctx.store.delete(R.nodes, '', name);
    this.ctx.timers.after(this.ctx.timing.terminationMs, () => this.workloads.collectOrphans());
  }

  /** One kubelet-style status heartbeat PATCH on `name` right now (an RV bump with no meaningful change). */
  heartbeat(name: string): void {
    if (!this.ctx.store.peek(R.nodes, '', name)) throw new Error(`node ${name} not found`);
    this.nodesCtl.heartbeat(name, true);
  }

  nodeDown(name: string): void {
    this.nodesCtl.down(name);
    this.longhorn?.nodeDown(name);
  }

  /** Longhorn's controller once installLonghorn ran (its volumes' robustness over reboots: sim/kube/longhorn.ts) */
  longhorn?: LonghornController;

  /**
   * Serve a kind through a CustomResourceDefinition from now on (discovery, `kubectl get <plural>.<group>`):
   * build it with `crdKind` (sim/kube/resources.ts). Install before the first kubectl call, as a cluster
   * has its CRDs before a run (kubectl caches discovery).
   */
  installCrd(def: ResourceDef): void {
    if (!this.kinds.includes(def)) this.kinds.push(def);
  }

  /**
   * Longhorn installed: its Volume CRD served and its controller running; a volume's replica on a node
   * that reboots degrades it until `rebuildMs` after the node is Ready again (default 20 s, as a small
   * volume's replica rebuild; tests pass less).
   */
  installLonghorn(opts: { rebuildMs?: number } = {}): LonghornController {
    this.installCrd(longhornVolumes);
    this.addNamespace(LONGHORN_NAMESPACE);
    this.longhorn ??= new LonghornController(this.ctx, opts.rebuildMs ?? 20_000);
    return this.longhorn;
  }

  /** Create any object of a served kind (a PV, a PVC, a custom resource), its status included as given. */
  createObject(def: ResourceDef, namespace: string, obj: Record<string, unknown>): void {
    if (def.namespaced) this.addNamespace(namespace);
    const status = obj.status;
    this.ctx.api.create(def, def.namespaced ? namespace : '', obj);
    if (status !== undefined && def.statusSubresource) this.setStatus(def, namespace, String((obj.metadata as any).name), status);
  }

  /** Write an object's status, as its controller would (through /status when the kind has it). */
  setStatus(def: ResourceDef, namespace: string, name: string, status: unknown): void {
    const ns = def.namespaced ? namespace : '';
    const cur = this.ctx.store.get(def, ns, name);
    if (!cur) throw new Error(`${def.plural} ${namespace}/${name} not found`);
    cur.status = status;
    this.ctx.api.update(def, ns, name, def.statusSubresource ? 'status' : undefined, cur);
  }

  nodeUp(name: string, bootID: string): void {
    this.nodesCtl.up(name, bootID);
  }

  /**
   * A network blip between the node's kubelet and the apiserver, the machine running on: at the first
   * health pass `nodeMonitorGraceMs` after the kubelet was last heard (40-50 s in a real cluster) the node
   * is Unknown; the lifecycle controller adds `node.kubernetes.io/unreachable` NoSchedule a moment later
   * and NoExecute at the next health pass. kubeletReconnect ends it: Ready again, the NoSchedule taint
   * lifted a moment later, the NoExecute one at the next health pass (up to `nodeMonitorPeriodMs`).
   */
  kubeletDisconnect(name: string): void {
    if (!this.ctx.store.peek(R.nodes, '', name)) throw new Error(`node ${name} not found`);
    this.nodesCtl.disconnect(name);
  }

  kubeletReconnect(name: string): void {
    this.nodesCtl.reconnect(name);
  }

  /** When the lifecycle controller last heard from the node's kubelet (ms since epoch): what its grace period counts from. */
  kubeletLastHeardAt(name: string): number | undefined {
    return this.nodesCtl.lastHeardAt(name);
  }

  /**
   * The lifecycle controller's NoExecute not-ready/unreachable taint of the node stays as it is (neither
   * written nor lifted) until releaseNoExecutePass, whose next health pass catches up; the NoSchedule
   * taints go on following the node. A real controller lifts it at its next health pass, up to
   * `--node-monitor-period` (5 s) after the kubelet is back: a test that needs the taint still on at a
   * moment of the action's (the guard after a drain) holds it there instead of racing that period
   * against the action's pace on a loaded runner.
   */
  holdNoExecutePass(name: string): void {
    this.nodesCtl.holdNoExecutePass(name);
  }

  releaseNoExecutePass(name: string): void {
    this.nodesCtl.releaseNoExecutePass(name);
  }

  /**
   * The node's kubelet reports MemoryPressure=True (the controller adds `memory-pressure:NoSchedule`);
   * relieved by the first pod evicted from the node (a drain) or after `reliefMs`, it reports False
   * `pressureTransitionMs` later and the controller lifts the taint (NodeControllers.memoryPressure).
   */
  kubeletMemoryPressure(name: string, opts: { reliefMs?: number } = {}): void {
    if (!this.ctx.store.peek(R.nodes, '', name)) throw new Error(`node ${name} not found`);
    this.nodesCtl.memoryPressure(name, opts);
  }

  /**
   * A node condition as the kubelet (MemoryPressure, DiskPressure, PIDPressure) or the network plugin
   * (NetworkUnavailable) reports it; the lifecycle controller adds or removes its taint one reconcile later.
   */
  setNodeCondition(
    name: string,
    type: 'MemoryPressure' | 'DiskPressure' | 'PIDPressure' | 'NetworkUnavailable',
    status: 'True' | 'False',
  ): void {
    const reasons: Record<string, [string, string]> = {
      MemoryPressure: ['KubeletHasInsufficientMemory', 'KubeletHasSufficientMemory'],
      DiskPressure: ['KubeletHasDiskPressure', 'KubeletHasNoDiskPressure'],
      PIDPressure: ['KubeletHasInsufficientPID', 'KubeletHasSufficientPID'],
      NetworkUnavailable: ['NetworkUnavailable', 'CiliumIsUp'],
    };
    const [bad, good] = reasons[type]!;
    this.nodesCtl.setCondition(name, type, status, status === 'True' ? bad : good);
  }

  // --- workloads -------------------------------------------------------------------------------------

  /**
   * A pod already running on `nodeName` (no image pull). Owned pods get their owner object created on
   * first use; labels default to `app: <owner or pod name>`. The container image is the pause image,
   * which every node holds.
   */
  addPod(spec: PodSpecInput): void {
    const ns = spec.namespace ?? 'default';
    this.addNamespace(ns);
    const node = spec.nodeName === undefined ? undefined : this.ctx.store.peek(R.nodes, '', spec.nodeName);
    if (spec.nodeName !== undefined && !node) throw new Error(`node ${spec.nodeName} not found`);
    if (!node && (spec.mirror || spec.owner?.kind === 'DaemonSet')) throw new Error('a mirror or DaemonSet pod needs its nodeName');
    const created = this.ctx.api.create(R.pods, ns, this.seeder.podBody(spec, ns, node)).body;
    // a pod given a node already runs there; one without is the scheduler's (placed, or Pending while nothing fits)
    if (node) this.workloads.seedRunning(created);
  }

  /**
   * Pods of the workload (a Deployment, a ReplicaSet or a StatefulSet by name) that start from now on
   * (those re-created after an eviction) become Ready `delayMs` after their containers started, or
   * never ('never'); 0 restores at once. Pods already Ready stay Ready.
   */
  setReadiness(namespace: string, workload: string, delay: number | 'never'): void {
    this.readiness.set(`${namespace}/${workload}`, delay === 'never' ? Infinity : delay);
  }

  /**
   * The workload's readiness probe passes from now on: its pods started and not yet Ready become Ready
   * at once, and those that start later are Ready as they start. A test holds a replacement not Ready
   * ('never') until the moment it is about, instead of racing a delay against the action's own pace.
   */
  readyNow(namespace: string, workload: string): void {
    this.readiness.set(`${namespace}/${workload}`, 0);
    this.workloads.probePassesNow((p) => p.metadata.namespace === namespace && this.seeder.workloadOf(p) === workload);
  }

  /** spec.minReadySeconds of a workload (a spec change: observed at its controller's next sync). */
  setMinReadySeconds(namespace: string, kind: 'Deployment' | 'ReplicaSet' | 'StatefulSet', name: string, seconds: number): void {
    this.seeder.setMinReadySeconds(namespace, kind, name, seconds);
  }

  /** A workload object as stored (status included). */
  workload(kind: 'Deployment' | 'ReplicaSet' | 'StatefulSet', namespace: string, name: string): any | undefined {
    return this.seeder.workload(kind, namespace, name);
  }

  pods(): any[] {
    return this.ctx.store.list(R.pods).map(clone);
  }

  /** Every stored core/v1 Event, in every namespace. */
  events(): any[] {
    return this.ctx.store.list(R.events).map(clone);
  }

  /** A PDB whose budget the test sets: `disruptionsAllowed` while its pods are healthy, minus evictions in flight. */
  addPdb(spec: PdbSpecInput): void {
    const ns = spec.namespace ?? 'default';
    this.addNamespace(ns);
    this.ctx.api.create(R.poddisruptionbudgets, ns, {
      metadata: { name: spec.name, namespace: ns },
      spec: { selector: { matchLabels: spec.selector }, maxUnavailable: spec.disruptionsAllowed },
    });
    this.workloads.pdbBudget.set(`${ns}/${spec.name}`, spec.disruptionsAllowed);
    this.workloads.recomputePdbs(ns);
  }

  /**
   * A PDB as a user writes it (`spec.minAvailable`): its status follows its pods' readiness, recomputed
   * by the disruption controller (sim/kube/disruption.ts, after Kubernetes'
   * pkg/controller/disruption/disruption.go), so an eviction waits until enough of them are Ready.
   */
  addPdbMinAvailable(spec: { namespace?: string; name: string; selector: Record<string, string>; minAvailable: number | string }): void {
    const ns = spec.namespace ?? 'default';
    this.addNamespace(ns);
    this.ctx.api.create(R.poddisruptionbudgets, ns, {
      metadata: { name: spec.name, namespace: ns },
      spec: { selector: { matchLabels: spec.selector }, minAvailable: spec.minAvailable },
    });
    this.workloads.recomputePdbs(ns);
  }

  setPdbAllowed(namespace: string, name: string, disruptionsAllowed: number): void {
    if (!this.ctx.store.peek(R.poddisruptionbudgets, namespace, name))
      throw new Error(`poddisruptionbudget ${namespace}/${name} not found`);
    this.workloads.pdbBudget.set(`${namespace}/${name}`, disruptionsAllowed);
    this.workloads.recomputePdbs(namespace);
  }

  pdb(namespace: string, name: string): any | undefined {
    return this.ctx.store.get(R.poddisruptionbudgets, namespace, name);
  }

  lease(namespace: string, name: string): any | undefined {
    return this.ctx.store.get(R.leases, namespace, name);
  }

  /**
   * Another actor (a person, another run) overwrites the Lease's holder, as a JSON Patch through the
   * API would, at once: a test that must order the theft against the action's next request calls it
   * from a write hook instead of sending an HTTP request that a loaded machine may deliver late.
   */
  setLeaseHolder(namespace: string, name: string, holder: string): void {
    this.ctx.api.patch(
      R.leases,
      namespace,
      name,
      undefined,
      'json',
      JSON.stringify([{ op: 'replace', path: '/spec/holderIdentity', value: holder }]),
    );
  }

  /** Current global resourceVersion (what a list would report). */
  get resourceVersion(): string {
    return String(this.ctx.store.revision);
  }

  // --- churn and faults ------------------------------------------------------------------------------

  /**
   * Unrelated writers: kubelet-style status PATCHes (kind 'status', the default), or label / annotation
   * writes by "another controller", at `perSecond` across the given nodes (all by default), round robin.
   */
  startChurn(opts: ChurnOptions): () => void {
    const kind = opts.kind ?? 'status';
    let i = 0;
    const stop = this.ctx.timers.every(Math.max(1, Math.round(1000 / opts.perSecond)), () => {
      const names = opts.nodes ?? this.ctx.store.list(R.nodes).map((n) => n.metadata.name);
      if (!names.length) return;
      const name = names[i++ % names.length]!;
      if (!this.ctx.store.peek(R.nodes, '', name)) return;
      if (kind === 'status') {
        this.nodesCtl.heartbeat(name, true);
        return;
      }
      const field = kind === 'label' ? 'labels' : 'annotations';
      this.ctx.api.patch(
        R.nodes,
        '',
        name,
        undefined,
        'strategic',
        JSON.stringify({ metadata: { [field]: { 'sim.kube/churn': String(i) } } }),
      );
    });
    return stop;
  }

  failNext(match: FaultMatch, action: FaultAction): void {
    this.faults.failNext(match, action);
  }

  beforeWrite(match: WriteHookMatch, fn: () => void): void {
    this.faults.beforeWrite(match, fn);
  }

  mutatingRequests(): RequestRecord[] {
    return this.requests.filter((r) => isMutating(r.method));
  }
}
