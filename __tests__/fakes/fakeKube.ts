// An in-memory KubeClient for pipeline tests. Node and Lease patches go through the fakes' JSON Patch
// applier (jsonPatch.ts), which follows the apiserver's semantics (docs/kubernetes-facts.md#k5-json-patch-semantics), and
// node reads go through the real parser, so the pipeline sees what kubectl would give it.
import type { RolloutEvent } from '../../src/core/events.js';
import type { KubeClient, LeaseReading, LeaseState, PodState } from '../../src/adapters/types.js';
import { nodeFromJson } from '../../src/adapters/kube/parse/nodeJson.js';
import { ToolError } from '../../src/core/errors.js';
import type { PdbState, PodLabels } from '../../src/core/model/cluster.js';
import type { NodeState, Taint } from '../../src/core/model/node.js';
import type { JsonPatchOp } from '../../src/core/model/patch.js';
import type { DrainPodReading, EvictionAnswer, PodOwnerReading, WorkloadStatus } from '../../src/core/workloads.js';
import { applyJsonPatch, normalize, PatchRejected } from '../fakes/jsonPatch.js';
import type { GateObject, ServedKind } from '../../src/core/model/gates.js';

type Json = Record<string, any>;

export interface FakeNodeSpec {
  name: string;
  ip: string;
  role?: 'worker' | 'control-plane';
  unschedulable?: boolean;
  taints?: Taint[];
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  bootID?: string;
}

export class FakeKube implements KubeClient {
  /** kubectl's margin past a drain's timeout (src/adapters/kube/kubectl.ts), as the time budget counts it */
  readonly drainKillGraceMs = 60_000;
  readonly nodes = new Map<string, Json>();
  readonly calls: Array<{ method: string; name?: string; ops?: JsonPatchOp[] }> = [];
  private rv = 100;
  private uidSeq = 0;
  /** runs just before a node patch is applied (after the pipeline's read): inject a concurrent write */
  beforePatch?: (name: string, ops: JsonPatchOp[]) => void;
  drainError?: ToolError;
  /** a drain failure for one node only (checked after drainError) */
  drainErrorFor?: (name: string) => ToolError | undefined;
  /** what listDisruptionBudgets answers, by namespace (none: an empty namespace) */
  readonly disruptionBudgets = new Map<string, { pdbs: PdbState[]; pods: PodLabels[] }>();
  /**
   * Stands in for the drain's work (the evictions): the drain returns when it resolves, and rejects
   * at once when its signal is aborted (kubectl killed). It must itself stop evicting once aborted.
   */
  drainBody?: (name: string, signal: AbortSignal) => Promise<void>;
  /** when set, every watch of a node fails with it right after it started (the watch cannot be kept) */
  watchError?: ToolError;
  /** the watches opened so far */
  watchCount = 0;
  private readonly watchers = new Set<{ name: string; onChange: (n: NodeState | undefined) => void }>();
  /** what the kubelet reports for the verify pod's image pull on a node */
  pull: (node: string) => { ok: true } | { ok: false; reason: string } = () => ({ ok: true });
  injectPullSecrets = false;
  readonly pods = new Map<string, PodState>();
  /** the pods the settle gate lists (listPodOwners), with their controllers */
  podOwners: PodOwnerReading[] = [];
  /** what listWorkloads answers at each call (the controllers' statuses as the settle gate polls them) */
  workloads: () => WorkloadStatus[] = () => [];
  /** the kinds the cluster serves (servedKinds): by default the core and storage.k8s.io storage kinds */
  served: ServedKind[] = [
    { resource: 'persistentvolumes', group: '', version: 'v1', kind: 'PersistentVolume', namespaced: false },
    { resource: 'persistentvolumeclaims', group: '', version: 'v1', kind: 'PersistentVolumeClaim', namespaced: true },
    { resource: 'volumeattachments', group: 'storage.k8s.io', version: 'v1', kind: 'VolumeAttachment', namespaced: false },
  ];
  /** what listGateObjects answers at each call (before filtering by the kinds asked) */
  gateObjects: () => GateObject[] = () => [];
  /** when set, listGateObjects fails with it */
  gateListError?: ToolError;
  /** `namespace/name` of the pods a drain of the node evicts: by default, its pods in podOwners */
  drainEvicts?: (name: string) => string[];

  addNode(spec: FakeNodeSpec): void {
    const labels: Record<string, string> = { 'kubernetes.io/hostname': spec.name, ...spec.labels };
    if (spec.role === 'control-plane') labels['node-role.kubernetes.io/control-plane'] = '';
    this.nodes.set(
      spec.name,
      normalize({
        kind: 'Node',
        apiVersion: 'v1',
        metadata: {
          name: spec.name,
          uid: `uid-${spec.name}-${++this.uidSeq}`,
          resourceVersion: String(++this.rv),
          labels,
          annotations: spec.annotations ?? {},
        },
        spec: { unschedulable: spec.unschedulable ?? false, taints: spec.taints ?? [] },
        status: {
          addresses: [
            { type: 'InternalIP', address: spec.ip },
            { type: 'Hostname', address: spec.name },
          ],
          conditions: [{ type: 'Ready', status: 'True' }],
          nodeInfo: { bootID: spec.bootID ?? `boot-${spec.name}-1` },
        },
      }),
    );
  }

  /** a write by another actor: bumps the resourceVersion like any real write */
  mutate(name: string, fn: (o: Json) => void): void {
    const o = structuredClone(this.nodes.get(name)!);
    fn(o);
    o.metadata.resourceVersion = String(++this.rv);
    this.nodes.set(name, normalize(o));
    this.notify(name);
  }

  /** the node object is deleted (a watch sees DELETED) */
  remove(name: string): void {
    this.nodes.delete(name);
    this.notify(name);
  }

  /** Watchers hear of a write after the writer's synchronous code, as from a stream. */
  private notify(name: string): void {
    const o = this.nodes.get(name);
    const state = o ? nodeFromJson(structuredClone(o)) : undefined;
    for (const w of this.watchers) if (w.name === name) queueMicrotask(() => w.onChange(state));
  }

  replace(name: string): void {
    this.mutate(name, (o) => {
      o.metadata.uid = `uid-${name}-${++this.uidSeq}`;
    });
  }

  raw(name: string): Json {
    return structuredClone(this.nodes.get(name)!);
  }

  state(name: string): NodeState {
    return nodeFromJson(this.nodes.get(name));
  }

  async listNodes(): Promise<NodeState[]> {
    this.calls.push({ method: 'listNodes' });
    const all = [...this.nodes.values()];
    return all.map((o) => nodeFromJson(structuredClone(o)));
  }

  async getNode(name: string): Promise<NodeState> {
    this.calls.push({ method: 'getNode', name });
    const o = this.nodes.get(name);
    if (!o)
      throw new ToolError({
        tool: 'kubectl',
        command: `kubectl get node ${name}`,
        kind: 'not-found',
        exitCode: 1,
        stderr: `Error from server (NotFound): nodes "${name}" not found`,
      });
    return nodeFromJson(structuredClone(o));
  }

  async patchNode(name: string, ops: JsonPatchOp[]): Promise<NodeState> {
    this.calls.push({ method: 'patchNode', name, ops });
    this.beforePatch?.(name, ops);
    const o = this.nodes.get(name)!;
    let next: Json;
    try {
      next = applyJsonPatch(o, ops) as Json;
    } catch (e) {
      if (!(e instanceof PatchRejected)) throw e;
      throw patchInvalid(`kubectl patch node ${name} --type=json`, name);
    }
    if (JSON.stringify(next) !== JSON.stringify(o)) {
      next.metadata.resourceVersion = String(++this.rv);
      this.nodes.set(name, next);
      this.notify(name);
    }
    return nodeFromJson(structuredClone(this.nodes.get(name)));
  }

  /** the DaemonSets listDrainInputs says exist (`namespace/name`) */
  daemonSets: string[] = [];
  /** every PDB listDrainInputs answers (all namespaces) */
  allPdbs: PdbState[] = [];
  /** what a dry-run eviction answers, by `namespace/name` (allowed by default) */
  evictionAnswer: (pod: string) => EvictionAnswer = () => ({ kind: 'allowed' });

  async listDrainInputs(): Promise<{ pods: DrainPodReading[]; daemonSets: string[]; pdbs: PdbState[] }> {
    this.calls.push({ method: 'listDrainInputs' });
    const pods = this.podOwners.map((p) => ({ emptyDir: false, labels: {}, controllerApiVersion: 'apps/v1', ...p }) as DrainPodReading);
    return structuredClone({ pods, daemonSets: this.daemonSets, pdbs: this.allPdbs });
  }

  async listPdbs(): Promise<PdbState[]> {
    this.calls.push({ method: 'listPdbs' });
    return structuredClone(this.allPdbs);
  }

  async evictDryRun(namespace: string, name: string): Promise<EvictionAnswer> {
    this.calls.push({ method: 'evictDryRun', name: `${namespace}/${name}` });
    return this.evictionAnswer(`${namespace}/${name}`);
  }

  async listDisruptionBudgets(namespace: string): Promise<{ pdbs: PdbState[]; pods: PodLabels[] }> {
    this.calls.push({ method: 'listDisruptionBudgets', name: namespace });
    return structuredClone(this.disruptionBudgets.get(namespace) ?? { pdbs: [], pods: [] });
  }

  async drain(name: string, _timeoutMs: number, signal?: AbortSignal, evicted?: (pods: string[]) => void): Promise<void> {
    this.calls.push({ method: 'drain', name });
    evicted?.(this.drainEvicts?.(name) ?? this.podOwners.filter((p) => p.nodeName === name).map((p) => `${p.namespace}/${p.name}`));
    if (this.drainError) throw this.drainError;
    const own = this.drainErrorFor?.(name);
    if (own) throw own;
    if (!this.drainBody) return;
    const stop = signal ?? new AbortController().signal;
    const killed = new Promise<never>((_, reject) => {
      const fail = () =>
        reject(
          new ToolError({
            tool: 'kubectl',
            command: `kubectl drain ${name}`,
            kind: 'unknown',
            exitCode: null,
            stderr: 'killed',
            node: name,
          }),
        );
      if (stop.aborted) fail();
      else stop.addEventListener('abort', fail, { once: true });
    });
    await Promise.race([this.drainBody(name, stop), killed]);
  }

  async listPodOwners(nodeName?: string): Promise<PodOwnerReading[]> {
    this.calls.push({ method: 'listPodOwners', name: nodeName });
    return structuredClone(this.podOwners.filter((p) => !nodeName || p.nodeName === nodeName));
  }

  async listWorkloads(): Promise<WorkloadStatus[]> {
    this.calls.push({ method: 'listWorkloads' });
    return structuredClone(this.workloads());
  }

  // Like the real watch: every write after `since` is delivered; the fake keeps no history, so a node
  // written since is delivered once as it is now.
  async watchNode(name: string, since: string, onChange: (n: NodeState | undefined) => void, signal: AbortSignal): Promise<void> {
    this.watchCount++;
    const w = { name, onChange };
    this.watchers.add(w);
    try {
      const now = this.nodes.get(name);
      if (!now || now.metadata.resourceVersion !== since) this.notify(name);
      await new Promise<void>((resolve, reject) => {
        if (this.watchError) {
          const e = this.watchError;
          queueMicrotask(() => reject(e));
        }
        if (signal.aborted) resolve();
        else signal.addEventListener('abort', () => resolve(), { once: true });
      });
    } finally {
      this.watchers.delete(w);
    }
  }

  async readyz(): Promise<void> {
    this.calls.push({ method: 'readyz' });
  }

  async createPod(manifest: Record<string, unknown>): Promise<PodState> {
    this.calls.push({ method: 'createPod' });
    const m = manifest as Json;
    const pod: PodState = {
      namespace: m.metadata.namespace,
      name: m.metadata.name,
      uid: `pod-${this.pods.size}`,
      nodeName: m.spec.nodeName,
      phase: 'Pending',
      imagePullSecrets: this.injectPullSecrets ? ['sa-secret'] : [],
      containerStatuses: [],
    };
    this.pods.set(`${pod.namespace}/${pod.name}`, pod);
    return structuredClone(pod);
  }

  async getPod(namespace: string, name: string): Promise<PodState | undefined> {
    this.calls.push({ method: 'getPod' });
    const pod = this.pods.get(`${namespace}/${name}`);
    if (!pod) return undefined;
    const r = this.pull(pod.nodeName);
    pod.containerStatuses = [
      r.ok
        ? { name: 'verify', imageID: 'registry.example/app@sha256:abc', running: true }
        : { name: 'verify', imageID: '', waitingReason: 'ErrImagePull', waitingMessage: r.reason },
    ];
    return structuredClone(pod);
  }

  async deletePod(namespace: string, name: string): Promise<void> {
    this.calls.push({ method: 'deletePod' });
    this.pods.delete(`${namespace}/${name}`);
  }

  readonly leases = new Map<string, Json>();

  private leaseState(o: Json): LeaseState {
    return {
      namespace: o.metadata.namespace,
      name: o.metadata.name,
      uid: o.metadata.uid,
      resourceVersion: o.metadata.resourceVersion,
      holderIdentity: o.spec.holderIdentity ?? '',
      leaseDurationSeconds: o.spec.leaseDurationSeconds,
      acquireTime: o.spec.acquireTime,
      renewTime: o.spec.renewTime,
      leaseTransitions: o.spec.leaseTransitions,
    };
  }

  async getLease(namespace: string, name: string): Promise<LeaseState | undefined> {
    this.calls.push({ method: 'getLease', name });
    const o = this.leases.get(`${namespace}/${name}`);
    return o ? this.leaseState(o) : undefined;
  }

  // kubectl sends the two GETs of `get node/N lease/L` one after the other: recorded as the two reads.
  async getNodeAndLease(name: string, leaseNamespace: string, leaseName: string): Promise<{ node: NodeState; lease: LeaseReading }> {
    const node = await this.getNode(name);
    return { node, lease: { ok: true, lease: await this.getLease(leaseNamespace, leaseName) } };
  }

  async createLease(namespace: string, name: string, spec: Record<string, unknown>): Promise<LeaseState> {
    this.calls.push({ method: 'createLease', name });
    if (this.leases.has(`${namespace}/${name}`)) {
      throw new ToolError({
        tool: 'kubectl',
        command: 'kubectl create lease',
        kind: 'conflict',
        exitCode: 1,
        stderr: `Error from server (AlreadyExists): leases.coordination.k8s.io "${name}" already exists`,
      });
    }
    const o = normalize({ metadata: { namespace, name, uid: `lease-${++this.uidSeq}`, resourceVersion: String(++this.rv) }, spec });
    this.leases.set(`${namespace}/${name}`, o);
    return this.leaseState(o);
  }

  async patchLease(namespace: string, name: string, ops: JsonPatchOp[]): Promise<LeaseState> {
    this.calls.push({ method: 'patchLease', name, ops });
    const o = this.leases.get(`${namespace}/${name}`);
    if (!o)
      throw new ToolError({
        tool: 'kubectl',
        command: 'kubectl patch lease',
        kind: 'not-found',
        exitCode: 1,
        stderr: 'Error from server (NotFound)',
      });
    let next: Json;
    try {
      next = applyJsonPatch(o, ops) as Json;
    } catch {
      throw patchInvalid('kubectl patch lease');
    }
    next.metadata.resourceVersion = String(++this.rv);
    this.leases.set(`${namespace}/${name}`, next);
    return this.leaseState(next);
  }

  mutatingCalls(): string[] {
    return this.calls
      .filter((c) => ['patchNode', 'drain', 'createPod', 'deletePod', 'createLease', 'patchLease'].includes(c.method))
      .map((c) => `${c.method} ${c.name ?? ''}`.trim());
  }

  podCount(): number {
    return this.pods.size;
  }

  /** every Event written, in order (kept out of `calls`: the pipeline tests count the roll's own calls) */
  readonly events: RolloutEvent[] = [];
  /** when set, every createEvents fails with it (RBAC without `create` on events) */
  eventsError?: ToolError;

  async servedKinds(): Promise<ServedKind[]> {
    this.calls.push({ method: 'servedKinds' });
    return this.served;
  }

  async listGateObjects(kinds: readonly ServedKind[]): Promise<GateObject[]> {
    this.calls.push({ method: 'listGateObjects', name: kinds.map((k) => k.resource).join(',') });
    if (this.gateListError) throw this.gateListError;
    return this.gateObjects().filter((o) => kinds.some((k) => k.group === o.group && k.kind === o.kind));
  }

  async createEvents(events: readonly RolloutEvent[]): Promise<void> {
    if (this.eventsError) throw this.eventsError;
    this.events.push(...events);
  }
}

/** What kubectl reports when the apiserver refuses a JSON Patch (a failed `test`, a bad path): a 422. */
function patchInvalid(command: string, node?: string): ToolError {
  return new ToolError({
    tool: 'kubectl',
    command,
    kind: 'invalid',
    exitCode: 1,
    stderr: 'The request is invalid: the server rejected our request due to an error in our request',
    ...(node === undefined ? {} : { node }),
  });
}
