// The default scheduler as far as the twin needs it: a pod created without a node is bound to the
// least-loaded node that passes the filters (cordon, an untolerated taint, spec.nodeSelector, the CPU
// request against status.allocatable); with none, the pod stays Pending with the scheduler's FitError
// text, and is tried again on every node or pod change.
import type { SimContext } from './context.js';
import { clone } from './json.js';
import { isTerminating, tolerates } from './objectFacts.js';
import type { Taint } from './objects.js';
import { isReady } from './nodes.js';
import { R } from './resources.js';
import { nowTime } from './schema.js';

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

export class Scheduler {
  private pending = false;

  constructor(private readonly ctx: SimContext) {}

  /** A scheduling pass soon (once, however many changes ask for it meanwhile). */
  kick(): void {
    if (this.pending) return;
    this.pending = true;
    this.ctx.timers.after(30, () => {
      this.pending = false;
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
}
