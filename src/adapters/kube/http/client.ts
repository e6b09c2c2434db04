// KubeClient over the run's one channel (channel.ts): every read and write is a request to the API
// server, none a process. It hands the answers to the same parsers the kubectl client used (parse/)
// and classifies failures once (status.ts). It never decides anything.
import { ToolError } from '../../../core/errors.js';
import type { PdbState, PodLabels } from '../../../core/model/cluster.js';
import type { GateObject, ServedKind } from '../../../core/model/gates.js';
import type { NodeState } from '../../../core/model/node.js';
import type { JsonPatchOp } from '../../../core/model/patch.js';
import type { RolloutEvent } from '../../../core/events.js';
import type { DrainPodReading, EvictionAnswer, PodOwnerReading, WorkloadStatus } from '../../../core/workloads.js';
import { ParseError } from '../../parseError.js';
import type { KubeClient, LeaseReading, LeaseState, PodState } from '../../types.js';
import { eventList } from '../eventList.js';
import { gateObjectsFromList } from '../parse/gateReads.js';
import { drainInputsFromList } from '../parse/drainInputs.js';
import type { Json } from '../parse/json.js';
import { leaseFromJson } from '../parse/leaseJson.js';
import { nodeFromJson } from '../parse/nodeJson.js';
import { parsePdbsAndPods } from '../parse/pdbJson.js';
import { podFromJson } from '../parse/podJson.js';
import { podOwnersFromList, workloadsFromList } from '../parse/workloadJson.js';
import { KubeChannel, type ChannelOptions } from './channel.js';
import { servedKindsFromDiscovery } from './discovery.js';
import { drainHttp, type DrainTiming } from './drain.js';
import { KubeHttp, type KubeRequest, type Method } from './request.js';
import { watchNodeHttp } from './watch.js';

export interface HttpKubeOptions extends ChannelOptions {
  /** how long one watch request lasts before it is re-opened (`timeoutSeconds`); 300 by default */
  watchSeconds?: number;
  /** tests: the drain's retry and poll intervals (kubectl's by default) */
  drainTiming?: DrainTiming;
}

/** a call on one object */
const CALL_MS = 30_000;
/** a list across every namespace, which may take longer */
const LIST_MS = 60_000;
/** the `/readyz` probe: a short answer, asked again by its wait */
const READYZ_MS = 10_000;

/**
 * How long past its own `timeoutMs` a drain may run: it ends its requests at its deadline itself, so
 * only the answers in flight then (aborted at once) are left. Part of what one node may take
 * (src/rules/budget.ts).
 */
export const HTTP_DRAIN_GRACE_MS = 5_000;

const JSON_PATCH = 'application/json-patch+json';

const seg = encodeURIComponent;
const leasePath = (ns: string, name?: string) =>
  `/apis/coordination.k8s.io/v1/namespaces/${seg(ns)}/leases${name === undefined ? '' : `/${seg(name)}`}`;
const podsPath = (ns: string, name?: string) => `/api/v1/namespaces/${seg(ns)}/pods${name === undefined ? '' : `/${seg(name)}`}`;

/** A List's items with the `kind` and `apiVersion` the API server leaves off each (kubectl adds them): the parsers tell kinds apart by them. */
function typedItems(list: unknown, kind: string, apiVersion: string): Json[] {
  const items = (list as Json | undefined)?.items;
  if (items === null || items === undefined) return [];
  if (!Array.isArray(items)) throw new ParseError(`${kind}List`, 'items is not an array');
  return items.map((i: Json) => ({ ...i, kind, apiVersion }));
}

const asList = (items: Json[]) => ({ apiVersion: 'v1', kind: 'List', items });

export class HttpKube implements KubeClient {
  readonly drainKillGraceMs = HTTP_DRAIN_GRACE_MS;
  readonly channel: KubeChannel;
  readonly http: KubeHttp;
  private readonly watchSeconds: number;
  private readonly drainTiming?: DrainTiming;

  constructor(opts: HttpKubeOptions) {
    this.channel = new KubeChannel(opts);
    this.http = new KubeHttp(this.channel);
    this.watchSeconds = opts.watchSeconds ?? 300;
    this.drainTiming = opts.drainTiming;
  }

  /** Stops the channel's proxy and removes its socket; call once the run is over. */
  close(): Promise<void> {
    return this.channel.close();
  }

  private get<T = Json>(path: string, op: string, opts: { node?: string; timeoutMs?: number } = {}): Promise<T> {
    return this.http.json<T>({ method: 'GET', path, op, node: opts.node, timeoutMs: opts.timeoutMs ?? CALL_MS });
  }

  private write<T = Json>(
    method: Method,
    path: string,
    body: unknown,
    op: string,
    opts: { node?: string; contentType?: string } = {},
  ): Promise<T> {
    return this.http.json<T>({ method, path, body, op, node: opts.node, contentType: opts.contentType, timeoutMs: CALL_MS });
  }

  /** `parse` over an answer: a format it does not read is cause 'unparseable', naming the request. */
  private parsed<T>(what: string, raw: unknown, parse: (raw: unknown) => T, node?: string): T {
    try {
      return parse(raw);
    } catch (e) {
      if (!(e instanceof ParseError || (e instanceof Error && e.name === 'NodeParseError'))) throw e;
      throw new ToolError({ tool: 'kube-api', command: what, kind: 'unparseable', exitCode: null, stderr: e.message, node });
    }
  }

  async listNodes(): Promise<NodeState[]> {
    const list = await this.get('/api/v1/nodes', 'list', { timeoutMs: LIST_MS });
    const items = Array.isArray(list?.items) ? (list.items as Json[]) : [];
    return items.map((i) => this.parsed('GET /api/v1/nodes', i, nodeFromJson));
  }

  async getNode(name: string): Promise<NodeState> {
    const path = `/api/v1/nodes/${seg(name)}`;
    return this.parsed(`GET ${path}`, await this.get(path, 'read', { node: name }), nodeFromJson, name);
  }

  async getNodeAndLease(name: string, leaseNamespace: string, leaseName: string): Promise<{ node: NodeState; lease: LeaseReading }> {
    // two requests at once on the one channel: the node (its failure is the call's), the Lease (reported)
    const [node, lease] = await Promise.all([
      this.getNode(name),
      this.getLease(leaseNamespace, leaseName).then(
        (l): LeaseReading => ({ ok: true, lease: l }),
        (e: unknown): LeaseReading => ({ ok: false, error: e instanceof Error ? e.message : String(e) }),
      ),
    ]);
    return { node, lease };
  }

  async patchNode(name: string, ops: JsonPatchOp[]): Promise<NodeState> {
    const path = `/api/v1/nodes/${seg(name)}`;
    const res = await this.write('PATCH', path, ops, 'patch', { node: name, contentType: JSON_PATCH });
    return this.parsed(`PATCH ${path}`, res, nodeFromJson, name);
  }

  drain(name: string, timeoutMs: number, signal?: AbortSignal, evicted?: (pods: string[]) => void): Promise<void> {
    // The run's cancellation ends a drain at once: the channel outlives it (for the step's releases),
    // and a drain would otherwise go on evicting.
    const run = this.channel.runSignal;
    return drainHttp(this.http, name, timeoutMs, signal ? AbortSignal.any([signal, run]) : run, evicted, this.drainTiming);
  }

  async listPodOwners(nodeName?: string): Promise<PodOwnerReading[]> {
    const path = nodeName
      ? `/api/v1/pods?${new URLSearchParams({ fieldSelector: `spec.nodeName=${nodeName}` }).toString()}`
      : '/api/v1/pods';
    const list = await this.get(path, 'settle', { node: nodeName, timeoutMs: LIST_MS });
    return this.parsed(`GET ${path}`, asList(typedItems(list, 'Pod', 'v1')), podOwnersFromList, nodeName);
  }

  async listDrainInputs(): Promise<{ pods: DrainPodReading[]; daemonSets: string[]; pdbs: PdbState[] }> {
    const [pods, ds, pdbs] = await Promise.all([
      this.get('/api/v1/pods', 'forecast', { timeoutMs: LIST_MS }),
      this.get('/apis/apps/v1/daemonsets', 'forecast', { timeoutMs: LIST_MS }),
      this.get('/apis/policy/v1/poddisruptionbudgets', 'forecast', { timeoutMs: LIST_MS }),
    ]);
    const items = [
      ...typedItems(pods, 'Pod', 'v1'),
      ...typedItems(ds, 'DaemonSet', 'apps/v1'),
      ...typedItems(pdbs, 'PodDisruptionBudget', 'policy/v1'),
    ];
    return this.parsed('GET pods, daemonsets, poddisruptionbudgets', asList(items), drainInputsFromList);
  }

  async listPdbs(): Promise<PdbState[]> {
    const list = await this.get('/apis/policy/v1/poddisruptionbudgets', 'start-check', { timeoutMs: LIST_MS });
    return this.parsed(
      'GET poddisruptionbudgets',
      asList(typedItems(list, 'PodDisruptionBudget', 'policy/v1')),
      (raw) => parsePdbsAndPods(raw).pdbs,
    );
  }

  async evictDryRun(namespace: string, name: string): Promise<EvictionAnswer> {
    // dryRun in the query and in the body's deleteOptions (eviction.go propagateDryRun wants them equal)
    const req: KubeRequest = {
      method: 'POST',
      path: `${podsPath(namespace, name)}/eviction?dryRun=All`,
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace }, deleteOptions: { dryRun: ['All'] } },
      op: 'forecast',
      timeoutMs: CALL_MS,
    };
    try {
      const a = await this.http.exchange(req);
      if (a.status >= 200 && a.status < 300) return { kind: 'allowed' };
      const e = this.http.refused(req, a);
      if (e.kind === 'too-many-requests') return { kind: 'blocked', message: e.stderr };
      if (e.kind === 'not-found') return { kind: 'gone' };
      return { kind: 'error', message: e.message };
    } catch (e) {
      const timedOut = e instanceof ToolError && e.kind === 'timeout';
      const message = e instanceof Error ? e.message : String(e);
      return { kind: 'error', message: timedOut ? `no answer in time (${message})` : message };
    }
  }

  async listWorkloads(): Promise<WorkloadStatus[]> {
    const kinds = [
      ['deployments', 'Deployment'],
      ['replicasets', 'ReplicaSet'],
      ['statefulsets', 'StatefulSet'],
    ] as const;
    const lists = await Promise.all(kinds.map(([r]) => this.get(`/apis/apps/v1/${r}`, 'settle', { timeoutMs: LIST_MS })));
    const items = lists.flatMap((l, i) => typedItems(l, kinds[i][1], 'apps/v1'));
    return this.parsed('GET deployments, replicasets, statefulsets', asList(items), workloadsFromList);
  }

  async servedKinds(): Promise<ServedKind[]> {
    return servedKindsFromDiscovery((path) => this.http.exchange({ method: 'GET', path, op: 'discovery', timeoutMs: LIST_MS }), this.http);
  }

  async listGateObjects(kinds: readonly ServedKind[]): Promise<GateObject[]> {
    if (kinds.length === 0) return [];
    const lists = await Promise.all(
      kinds.map((k) =>
        this.get(k.group ? `/apis/${k.group}/${k.version}/${k.resource}` : `/api/${k.version}/${k.resource}`, 'gate', {
          timeoutMs: LIST_MS,
        }),
      ),
    );
    const items = lists.flatMap((l, i) =>
      typedItems(l, kinds[i].kind, kinds[i].group ? `${kinds[i].group}/${kinds[i].version}` : kinds[i].version),
    );
    return this.parsed('GET gate kinds', asList(items), gateObjectsFromList);
  }

  async listDisruptionBudgets(namespace: string): Promise<{ pdbs: PdbState[]; pods: PodLabels[] }> {
    const [pdbs, pods] = await Promise.all([
      this.get(`/apis/policy/v1/namespaces/${seg(namespace)}/poddisruptionbudgets`, 'drain'),
      this.get(podsPath(namespace), 'drain'),
    ]);
    return parsePdbsAndPods(asList([...typedItems(pdbs, 'PodDisruptionBudget', 'policy/v1'), ...typedItems(pods, 'Pod', 'v1')]));
  }

  watchNode(
    name: string,
    sinceResourceVersion: string,
    onChange: (node: NodeState | undefined) => void,
    signal: AbortSignal,
  ): Promise<void> {
    return watchNodeHttp(
      this.http,
      { watchSeconds: this.watchSeconds, getNode: (n) => this.getNode(n) },
      name,
      sinceResourceVersion,
      onChange,
      signal,
    );
  }

  async readyz(): Promise<void> {
    const req: KubeRequest = { method: 'GET', path: '/readyz', op: 'readyz', timeoutMs: READYZ_MS };
    const a = await this.http.exchange(req);
    if (a.status !== 200) throw this.http.refused(req, a);
  }

  async createPod(manifest: Record<string, unknown>): Promise<PodState> {
    const meta = (manifest.metadata ?? {}) as Json;
    const ns = typeof meta.namespace === 'string' && meta.namespace ? meta.namespace : 'default';
    return podFromJson(await this.write('POST', podsPath(ns), manifest, 'verify-image'));
  }

  async getPod(namespace: string, name: string): Promise<PodState | undefined> {
    try {
      return podFromJson(await this.get(podsPath(namespace, name), 'verify-image'));
    } catch (e) {
      if (e instanceof ToolError && e.kind === 'not-found') return undefined;
      throw e;
    }
  }

  async deletePod(namespace: string, name: string): Promise<void> {
    try {
      await this.write('DELETE', podsPath(namespace, name), undefined, 'verify-image');
    } catch (e) {
      // --ignore-not-found
      if (!(e instanceof ToolError && e.kind === 'not-found')) throw e;
    }
  }

  async getLease(namespace: string, name: string): Promise<LeaseState | undefined> {
    try {
      return leaseFromJson(await this.get(leasePath(namespace, name), 'lease'));
    } catch (e) {
      if (e instanceof ToolError && e.kind === 'not-found') return undefined;
      throw e;
    }
  }

  async createLease(namespace: string, name: string, spec: Record<string, unknown>): Promise<LeaseState> {
    const manifest = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec };
    return leaseFromJson(await this.write('POST', leasePath(namespace), manifest, 'lease'));
  }

  async patchLease(namespace: string, name: string, ops: JsonPatchOp[]): Promise<LeaseState> {
    return leaseFromJson(await this.write('PATCH', leasePath(namespace, name), ops, 'lease', { contentType: JSON_PATCH }));
  }

  async createEvents(events: readonly RolloutEvent[]): Promise<void> {
    if (events.length === 0) return;
    // one POST an Event, all at once; the text is a body, never argv
    const items = eventList(events).items as Json[];
    const results = await Promise.allSettled(
      items.map((item) => {
        const ns = String((item.metadata as Json).namespace);
        return this.write('POST', `/api/v1/namespaces/${seg(ns)}/events`, item, 'event');
      }),
    );
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as unknown);
    if (failed.length === 0) return;
    const first = failed[0];
    if (failed.length === 1 && first instanceof ToolError) throw first;
    const kind = first instanceof ToolError ? first.kind : 'unknown';
    const text = failed.map((e) => (e instanceof Error ? e.message : String(e))).join('\n');
    throw new ToolError({
      tool: 'kube-api',
      command: `POST ${items.length} Events`,
      kind,
      exitCode: null,
      stderr: text,
      message: `${failed.length} of ${items.length} Events not written: ${text.split('\n')[0]}`,
    });
  }
}
