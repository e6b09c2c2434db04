// KubeClient over the kubectl binary: runs commands, hands their JSON to the parsers of parse/, classifies failures.
// It never decides anything; the rollout reads what it returns.
import { DrainTimeoutError, ToolError } from '../../core/errors.js';
import type { PdbState, PodLabels } from '../../core/model/cluster.js';
import type { NodeState } from '../../core/model/node.js';
import type { JsonPatchOp } from '../../core/model/patch.js';
import { KubectlCommands } from './kubectlCommands.js';
export type { KubectlOptions } from './kubectlCommands.js';
import { classifyKubectlFailure } from './parse/kubectlErrors.js';
import { nodeFromJson } from './parse/nodeJson.js';
import { parsePdbsAndPods } from './parse/pdbJson.js';
import { blockedPods, drainEvicted, parseDrainFailure } from './parse/drainOutput.js';
import { ParseError } from '../parseError.js';
import { podOwnersFromList, workloadsFromList } from './parse/workloadJson.js';
import type { DrainPodReading, EvictionAnswer, PodOwnerReading, WorkloadStatus } from '../../core/workloads.js';
import { DRAIN_INPUT_KINDS, drainInputsFromList } from './parse/drainInputs.js';
import { evictionAnswer } from './parse/evictionAnswer.js';
import { watchNode, type WatchPort } from './watchNode.js';
import { jsonString, type Json } from './parse/json.js';
import { leaseFromJson } from './parse/leaseJson.js';
import { podFromJson } from './parse/podJson.js';
import type { KubeClient, LeaseReading, LeaseState, PodState } from '../types.js';
import type { RolloutEvent } from '../../core/events.js';
import { eventList } from './eventList.js';
import { gateObjectsFromList, servedKindsFromTable } from './parse/gateReads.js';
import type { GateObject, ServedKind } from '../../core/model/gates.js';

/**
 * How long past its own `--timeout` a `kubectl drain` may run before we kill it: kubectl checks the
 * timeout only between its retries (5 s apart). Part of what one node may take (src/rules/budget.ts).
 */
export const DRAIN_KILL_GRACE_MS = 60_000;

// The --request-timeout each call passes (why: see exec, below).
/** a call on one object */
const REQUEST_TIMEOUT = '--request-timeout=30s';
/** a list across every namespace (every pod, every controller), which may take longer */
const LIST_REQUEST_TIMEOUT = '--request-timeout=60s';
/** the `/readyz` probe: a short answer, asked again by its wait */
const READYZ_REQUEST_TIMEOUT = '--request-timeout=10s';

export class Kubectl extends KubectlCommands implements KubeClient {
  readonly drainKillGraceMs = DRAIN_KILL_GRACE_MS;

  async listNodes(): Promise<NodeState[]> {
    const args = ['get', 'nodes', '-o', 'json', REQUEST_TIMEOUT];
    const list = this.parseJson(await this.run(args), 'kubectl get nodes');
    const items = Array.isArray(list.items) ? list.items : [];
    return items.map((i) => nodeFromJson(i));
  }

  async getNode(name: string): Promise<NodeState> {
    const res = await this.run(['get', 'node', name, '-o', 'json', REQUEST_TIMEOUT], { node: name });
    return nodeFromJson(this.parseJson(res, `kubectl get node ${name}`, name));
  }

  async getNodeAndLease(name: string, leaseNamespace: string, leaseName: string): Promise<{ node: NodeState; lease: LeaseReading }> {
    // kubectl GETs each named object on its own and prints those it got as one List; a failed one is
    // a line of its own on stderr and makes the exit code 1 (docs/kubernetes-facts.md#k11-multi-get).
    const args = ['get', `node/${name}`, `lease/${leaseName}`, '-n', leaseNamespace, '-o', 'json', REQUEST_TIMEOUT];
    const res = await this.exec(args);
    const what = `kubectl get node/${name} lease/${leaseName}`;
    let items: Json[] = [];
    if (res.stdout.trim() !== '' || res.exitCode === 0) {
      const list = this.parseJson(res, what, name);
      items = Array.isArray(list.items) ? (list.items as Json[]) : [];
    }
    const named = (kind: string, n: string) =>
      items.find((i) => i.kind === kind && jsonString((i.metadata as Json | undefined)?.name) === n);
    const nodeJson = named('Node', name);
    const leaseJson = named('Lease', leaseName);
    // Lines about the Lease name the resource `leases.coordination.k8s.io`; every other line is about
    // the node or the whole command (a transport failure, an unknown flag).
    const lines = res.stderr.split('\n').filter((l) => l.trim() !== '');
    const aboutLease = (l: string) => /leases(\.coordination\.k8s\.io)?\b/.test(l) && l.includes(`"${leaseName}"`);
    if (!nodeJson) {
      if (res.exitCode === 0) {
        throw new ToolError({
          tool: 'kubectl',
          command: what,
          kind: 'unparseable',
          exitCode: 0,
          stderr: `no Node ${name} in the output`,
          node: name,
        });
      }
      throw this.failure(args, res, lines.filter((l) => !aboutLease(l)).join('\n') || res.stderr, name);
    }
    const node = nodeFromJson(nodeJson);
    if (leaseJson) return { node, lease: { ok: true, lease: leaseFromJson(leaseJson) } };
    const leaseLines = lines.filter(aboutLease);
    if (leaseLines.length > 0 && leaseLines.every((l) => classifyKubectlFailure(l) === 'not-found')) {
      return { node, lease: { ok: true, lease: undefined } };
    }
    const why = leaseLines.join('; ') || res.stderr.trim() || `no Lease ${leaseName} in the output`;
    return { node, lease: { ok: false, error: why } };
  }

  async patchNode(name: string, ops: JsonPatchOp[]): Promise<NodeState> {
    const res = await this.run(['patch', 'node', name, '--type=json', '-p', JSON.stringify(ops), '-o', 'json', REQUEST_TIMEOUT], {
      node: name,
    });
    return nodeFromJson(this.parseJson(res, `kubectl patch node ${name}`, name));
  }

  async drain(name: string, timeoutMs: number, signal?: AbortSignal, evicted?: (pods: string[]) => void): Promise<void> {
    const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
    // the flags src/rules/drainForecast.ts mirrors kubectl's filters for (ACTION_DRAIN_FLAGS)
    const args = ['drain', name, '--ignore-daemonsets', '--delete-emptydir-data', `--timeout=${seconds}s`];
    // kubectl checks its --timeout only between retries (5 s apart); our own deadline leaves room for that.
    const res = await this.exec(args, { timeoutMs: timeoutMs + DRAIN_KILL_GRACE_MS, signal });
    // what it evicted is known from its output whatever its end: a failed or killed drain may have evicted some
    evicted?.(drainEvicted(res.stdout, res.stderr));
    if (res.exitCode === 0) return;
    const failure = this.failure(args, res, res.stderr, name);
    // a timeout (kubectl's own or ours) carries the pods its output says kept it from finishing
    if (failure.kind !== 'timeout') throw failure;
    throw new DrainTimeoutError({
      tool: 'kubectl',
      command: failure.command,
      kind: 'timeout',
      exitCode: failure.exitCode,
      stderr: failure.stderr,
      node: name,
      message: failure.message,
      blockedPods: blockedPods(parseDrainFailure(res.stderr)),
    });
  }

  async listPodOwners(nodeName?: string): Promise<PodOwnerReading[]> {
    const args = ['get', 'pods', '-A', '-o', 'json', LIST_REQUEST_TIMEOUT];
    if (nodeName) args.push('--field-selector', `spec.nodeName=${nodeName}`);
    const res = await this.run(args, { node: nodeName });
    const what = `kubectl get pods -A${nodeName ? ` --field-selector spec.nodeName=${nodeName}` : ''}`;
    return this.parseWith(res, what, podOwnersFromList, nodeName);
  }

  async listDrainInputs(): Promise<{ pods: DrainPodReading[]; daemonSets: string[]; pdbs: PdbState[] }> {
    const res = await this.run(['get', DRAIN_INPUT_KINDS, '-A', '-o', 'json', LIST_REQUEST_TIMEOUT]);
    return this.parseWith(res, `kubectl get ${DRAIN_INPUT_KINDS} -A`, drainInputsFromList);
  }

  async listPdbs(): Promise<PdbState[]> {
    const res = await this.run(['get', 'poddisruptionbudgets.policy', '-A', '-o', 'json', LIST_REQUEST_TIMEOUT]);
    return this.parseWith(res, 'kubectl get poddisruptionbudgets.policy -A', (raw) => parsePdbsAndPods(raw).pdbs);
  }

  async evictDryRun(namespace: string, name: string): Promise<EvictionAnswer> {
    // dryRun in the query and in the body's deleteOptions (eviction.go propagateDryRun wants them equal):
    // a server that ignored one still sees the other. The body goes on stdin.
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}/eviction?dryRun=All`;
    const body = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace }, deleteOptions: { dryRun: ['All'] } };
    try {
      return evictionAnswer(await this.exec(['create', '--raw', path, '-f', '-', REQUEST_TIMEOUT], { input: JSON.stringify(body) }));
    } catch (e) {
      return { kind: 'error', message: e instanceof Error ? e.message : String(e) };
    }
  }

  async listWorkloads(): Promise<WorkloadStatus[]> {
    // one command, one list per kind: kubectl prints them as one List
    const kinds = 'deployments.apps,replicasets.apps,statefulsets.apps';
    const res = await this.run(['get', kinds, '-A', '-o', 'json', LIST_REQUEST_TIMEOUT]);
    return this.parseWith(res, `kubectl get ${kinds} -A`, workloadsFromList);
  }

  async servedKinds(): Promise<ServedKind[]> {
    const args = ['api-resources', LIST_REQUEST_TIMEOUT];
    const res = await this.exec(args);
    // One API group whose discovery fails (an aggregated API down: metrics-server) makes kubectl print
    // every other group's kinds and exit 1 with "unable to retrieve the complete list of server APIs"
    // (kubectl api-resources, ServerGroupsAndResources' partial result): the kinds it printed are
    // served, and a gate over the failed group's kind is then named as not served.
    const partial =
      res.exitCode === 1 && /unable to retrieve the complete list of server APIs/.test(res.stderr) && /^NAME\s/.test(res.stdout);
    if (res.exitCode !== 0 && !partial) throw this.missingContext(res) ?? this.failure(args, res, res.stderr);
    try {
      return servedKindsFromTable(res.stdout);
    } catch (e) {
      if (!(e instanceof ParseError)) throw e;
      throw new ToolError({ tool: 'kubectl', command: 'kubectl api-resources', kind: 'unparseable', exitCode: 0, stderr: e.message });
    }
  }

  async listGateObjects(kinds: readonly ServedKind[]): Promise<GateObject[]> {
    if (kinds.length === 0) return [];
    const what = kinds.map(resourceArg).join(',');
    const res = await this.run(['get', what, '-A', '-o', 'json', LIST_REQUEST_TIMEOUT]);
    return this.parseWith(res, `kubectl get ${what} -A`, gateObjectsFromList);
  }

  async listDisruptionBudgets(namespace: string): Promise<{ pdbs: PdbState[]; pods: PodLabels[] }> {
    const args = ['get', 'poddisruptionbudgets,pods', '-n', namespace, '-o', 'json', REQUEST_TIMEOUT];
    return parsePdbsAndPods(this.parseJson(await this.run(args), `kubectl get poddisruptionbudgets,pods -n ${namespace}`));
  }

  // One `kubectl get --raw` process per watch request (watchNode.ts).
  watchNode(
    name: string,
    sinceResourceVersion: string,
    onChange: (node: NodeState | undefined) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const port: WatchPort = {
      watchSeconds: this.watchSeconds,
      exec: (args, opts) => this.exec(args, opts),
      getNode: (n) => this.getNode(n),
      failure: (args, res, stderr, node) => this.failure(args, res, stderr, node),
    };
    return watchNode(port, name, sinceResourceVersion, onChange, signal);
  }

  async readyz(): Promise<void> {
    await this.run(['get', '--raw', '/readyz', READYZ_REQUEST_TIMEOUT], { timeoutMs: 20_000 });
  }

  async createPod(manifest: Record<string, unknown>): Promise<PodState> {
    // --validate=false: client-side validation needs the OpenAPI document, one more round trip for nothing.
    const res = await this.run(['create', '--validate=false', '-f', '-', '-o', 'json', REQUEST_TIMEOUT], {
      input: JSON.stringify(manifest),
    });
    return podFromJson(this.parseJson(res, 'kubectl create pod'));
  }

  async getPod(namespace: string, name: string): Promise<PodState | undefined> {
    try {
      const res = await this.run(['get', 'pod', '-n', namespace, name, '-o', 'json', REQUEST_TIMEOUT]);
      return podFromJson(this.parseJson(res, `kubectl get pod ${name}`));
    } catch (e) {
      if (e instanceof ToolError && e.kind === 'not-found') return undefined;
      throw e;
    }
  }

  async deletePod(namespace: string, name: string): Promise<void> {
    await this.run(['delete', 'pod', '-n', namespace, name, '--ignore-not-found', '--wait=false', REQUEST_TIMEOUT]);
  }

  async getLease(namespace: string, name: string): Promise<LeaseState | undefined> {
    try {
      const res = await this.run(['get', 'lease', '-n', namespace, name, '-o', 'json', REQUEST_TIMEOUT]);
      return leaseFromJson(this.parseJson(res, `kubectl get lease ${name}`));
    } catch (e) {
      if (e instanceof ToolError && e.kind === 'not-found') return undefined;
      throw e;
    }
  }

  async createLease(namespace: string, name: string, spec: Record<string, unknown>): Promise<LeaseState> {
    const manifest = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec };
    const res = await this.run(['create', '--validate=false', '-f', '-', '-o', 'json', REQUEST_TIMEOUT], {
      input: JSON.stringify(manifest),
    });
    return leaseFromJson(this.parseJson(res, `kubectl create lease ${name}`));
  }

  async patchLease(namespace: string, name: string, ops: JsonPatchOp[]): Promise<LeaseState> {
    const res = await this.run([
      'patch',
      'lease',
      '-n',
      namespace,
      name,
      '--type=json',
      '-p',
      JSON.stringify(ops),
      '-o',
      'json',
      REQUEST_TIMEOUT,
    ]);
    return leaseFromJson(this.parseJson(res, `kubectl patch lease ${name}`));
  }

  async createEvents(events: readonly RolloutEvent[]): Promise<void> {
    if (events.length === 0) return;
    // one process for the batch: kubectl posts each item of the List; the text goes on stdin, never argv
    await this.run(['create', '--validate=false', '-f', '-', '-o', 'name', REQUEST_TIMEOUT], { input: JSON.stringify(eventList(events)) });
  }
}

/** The argument `kubectl get` takes for a kind: `plural` (core), `plural.version.group`. */
function resourceArg(k: ServedKind): string {
  return k.group ? `${k.resource}.${k.version}.${k.group}` : k.resource;
}
