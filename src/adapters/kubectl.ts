// KubeClient over the kubectl binary: runs commands, parses their JSON, classifies failures.
// It never decides anything; the rollout reads what it returns.
import { ToolError } from '../errors.js';
import type { JsonPatchOp, NodeState } from '../model.js';
import type { Runner, RunResult } from './exec.js';
import { classifyKubectlFailure } from './parse/kubectlErrors.js';
import { nodeFromJson } from './parse/nodeJson.js';
import type { KubeClient, LeaseState, PodContainerStatus, PodState } from './types.js';

export interface KubectlOptions {
  runner: Runner;
  kubeconfig?: string;
  context?: string;
  binary?: string;
  /** deadline for short calls (get, patch, create, delete) */
  callTimeoutMs?: number;
}

type Json = Record<string, unknown>;

/** A JSON value as a string: strings as they are, anything else (absent, object) as ''. */
function str(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
}

export class Kubectl implements KubeClient {
  private readonly runner: Runner;
  private readonly binary: string;
  private readonly globals: string[];
  private readonly callTimeoutMs: number;

  constructor(opts: KubectlOptions) {
    this.runner = opts.runner;
    this.binary = opts.binary ?? 'kubectl';
    this.globals = [];
    if (opts.kubeconfig) this.globals.push(`--kubeconfig=${opts.kubeconfig}`);
    if (opts.context) this.globals.push(`--context=${opts.context}`);
    this.callTimeoutMs = opts.callTimeoutMs ?? 60_000;
  }

  private async run(args: string[], opts: { timeoutMs?: number; input?: string; node?: string } = {}): Promise<RunResult> {
    // Short calls also pass --request-timeout: kubectl has no client timeout by default (a hung
    // apiserver would hang it forever), and ours kills the process as a last resort.
    const full = [...this.globals, ...args];
    const res = await this.runner.run({
      file: this.binary,
      args: full,
      timeoutMs: opts.timeoutMs ?? this.callTimeoutMs,
      input: opts.input,
    });
    if (res.exitCode !== 0) {
      const command = this.runner.describe({ file: this.binary, args: full });
      const cause = res.timedOut
        ? 'timeout'
        : res.exitCode === 127 && /ENOENT/.test(res.stderr)
          ? 'usage'
          : classifyKubectlFailure(res.stderr);
      throw new ToolError({
        tool: 'kubectl',
        command,
        kind: cause,
        exitCode: res.exitCode,
        stderr: this.runner.mask(res.stderr),
        node: opts.node,
        message: res.exitCode === 127 && /ENOENT/.test(res.stderr) ? `${this.binary} not found on PATH (install kubectl)` : undefined,
      });
    }
    return res;
  }

  private parseJson(res: RunResult, what: string, node?: string): Json {
    try {
      return JSON.parse(res.stdout) as Json;
    } catch {
      throw new ToolError({ tool: 'kubectl', command: what, kind: 'unparseable', exitCode: 0, stderr: 'output is not JSON', node });
    }
  }

  async listNodes(labelSelector?: string): Promise<NodeState[]> {
    const args = ['get', 'nodes', '-o', 'json', '--request-timeout=30s'];
    if (labelSelector) args.push('-l', labelSelector);
    const list = this.parseJson(await this.run(args), 'kubectl get nodes');
    const items = Array.isArray(list.items) ? list.items : [];
    return items.map((i) => nodeFromJson(i));
  }

  async getNode(name: string): Promise<NodeState> {
    const res = await this.run(['get', 'node', name, '-o', 'json', '--request-timeout=30s'], { node: name });
    return nodeFromJson(this.parseJson(res, `kubectl get node ${name}`, name));
  }

  async patchNode(name: string, ops: JsonPatchOp[]): Promise<NodeState> {
    const res = await this.run(['patch', 'node', name, '--type=json', '-p', JSON.stringify(ops), '-o', 'json', '--request-timeout=30s'], {
      node: name,
    });
    return nodeFromJson(this.parseJson(res, `kubectl patch node ${name}`, name));
  }

  async drain(name: string, timeoutMs: number): Promise<void> {
    const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
    // kubectl checks its --timeout only between retries (5 s apart); our own deadline leaves room for that.
    await this.run(['drain', name, '--ignore-daemonsets', '--delete-emptydir-data', `--timeout=${seconds}s`], {
      timeoutMs: timeoutMs + 60_000,
      node: name,
    });
  }

  async readyz(): Promise<void> {
    await this.run(['get', '--raw', '/readyz', '--request-timeout=10s'], { timeoutMs: 20_000 });
  }

  async createPod(manifest: Record<string, unknown>): Promise<PodState> {
    // --validate=false: client-side validation needs the OpenAPI document, one more round trip for nothing.
    const res = await this.run(['create', '--validate=false', '-f', '-', '-o', 'json', '--request-timeout=30s'], {
      input: JSON.stringify(manifest),
    });
    return podFromJson(this.parseJson(res, 'kubectl create pod'));
  }

  async getPod(namespace: string, name: string): Promise<PodState | undefined> {
    try {
      const res = await this.run(['get', 'pod', '-n', namespace, name, '-o', 'json', '--request-timeout=30s']);
      return podFromJson(this.parseJson(res, `kubectl get pod ${name}`));
    } catch (e) {
      if (e instanceof ToolError && e.kind === 'not-found') return undefined;
      throw e;
    }
  }

  async deletePod(namespace: string, name: string): Promise<void> {
    await this.run(['delete', 'pod', '-n', namespace, name, '--ignore-not-found', '--wait=false', '--request-timeout=30s']);
  }

  async getLease(namespace: string, name: string): Promise<LeaseState | undefined> {
    try {
      const res = await this.run(['get', 'lease', '-n', namespace, name, '-o', 'json', '--request-timeout=30s']);
      return leaseFromJson(this.parseJson(res, `kubectl get lease ${name}`));
    } catch (e) {
      if (e instanceof ToolError && e.kind === 'not-found') return undefined;
      throw e;
    }
  }

  async createLease(namespace: string, name: string, spec: Record<string, unknown>): Promise<LeaseState> {
    const manifest = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec };
    const res = await this.run(['create', '--validate=false', '-f', '-', '-o', 'json', '--request-timeout=30s'], {
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
      '--request-timeout=30s',
    ]);
    return leaseFromJson(this.parseJson(res, `kubectl patch lease ${name}`));
  }
}

function leaseFromJson(o: Json): LeaseState {
  const metadata = (o.metadata ?? {}) as Json;
  const spec = (o.spec ?? {}) as Json;
  const lease: LeaseState = {
    namespace: str(metadata.namespace),
    name: str(metadata.name),
    uid: str(metadata.uid),
    resourceVersion: str(metadata.resourceVersion),
    holderIdentity: typeof spec.holderIdentity === 'string' ? spec.holderIdentity : '',
  };
  if (typeof spec.leaseDurationSeconds === 'number') lease.leaseDurationSeconds = spec.leaseDurationSeconds;
  if (typeof spec.acquireTime === 'string') lease.acquireTime = spec.acquireTime;
  if (typeof spec.renewTime === 'string') lease.renewTime = spec.renewTime;
  if (typeof spec.leaseTransitions === 'number') lease.leaseTransitions = spec.leaseTransitions;
  return lease;
}

function podFromJson(o: Json): PodState {
  const metadata = (o.metadata ?? {}) as Json;
  const spec = (o.spec ?? {}) as Json;
  const status = (o.status ?? {}) as Json;
  const statuses = Array.isArray(status.containerStatuses) ? (status.containerStatuses as Json[]) : [];
  return {
    namespace: str(metadata.namespace),
    name: str(metadata.name),
    uid: str(metadata.uid),
    nodeName: str(spec.nodeName),
    phase: str(status.phase),
    imagePullSecrets: Array.isArray(spec.imagePullSecrets) ? (spec.imagePullSecrets as Json[]).map((s) => str(s.name)) : [],
    containerStatuses: statuses.map((c): PodContainerStatus => {
      const state = (c.state ?? {}) as Json;
      const waiting = state.waiting as Json | undefined;
      const terminated = state.terminated as Json | undefined;
      return {
        name: str(c.name),
        imageID: str(c.imageID),
        waitingReason: waiting ? str(waiting.reason) : undefined,
        waitingMessage: waiting && waiting.message ? str(waiting.message) : undefined,
        terminated: terminated
          ? { exitCode: Number(terminated.exitCode ?? 0), reason: terminated.reason ? str(terminated.reason) : undefined }
          : undefined,
        running: state.running !== undefined,
      };
    }),
  };
}
