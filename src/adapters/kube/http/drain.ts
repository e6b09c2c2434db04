// `kubectl drain --ignore-daemonsets --delete-emptydir-data --timeout=T` as requests over the run's
// channel, matching k8s.io/kubectl pkg/drain (drain.go, filters.go) step by step
// (docs/kube-channel.md#the-drain):
// - the node's pods, listed by `spec.nodeName` (GetPodsForDeletion), judged by kubectl's own filters
//   (src/core/drainFilter.ts: DaemonSet pods skipped, each DaemonSet GET as daemonSetFilter does,
//   mirror pods skipped, emptyDir pods evicted, a pod without a controller refused); any refusal
//   fails the drain before one eviction is sent;
// - each pod evicted through the policy/v1 Eviction subresource, all at once (evictPods: one
//   goroutine a pod), with kubectl's default DeleteOptions (no grace period: the pod's own), a 429
//   (a PodDisruptionBudget) retried every 5 s (EvictErrorRetryDelay) with the pod read again, a 404
//   counted as done, a 403 for a terminating namespace waited out as kubectl does, anything else
//   failing that pod;
// - each accepted eviction waited for until the pod is gone or a pod of another uid holds its name
//   (waitForDelete, a read a second);
// - one deadline over all of it (the global timeout): a pod still pending then makes the drain a
//   DrainTimeoutError naming it. The cordon is not repeated: the claim made it.
import { DrainTimeoutError, ToolError } from '../../../core/errors.js';
import { filterDrainPods } from '../../../core/drainFilter.js';
import { ACTION_DRAIN_FLAGS, type DrainPodReading } from '../../../core/workloads.js';
import { drainPodFromItem, listItems } from '../parse/workloadJson.js';
import type { Json } from '../parse/json.js';
import type { KubeHttp, KubeRequest } from './request.js';
import { answerMessage, hasStatusCause } from './status.js';

/** kubectl's EvictErrorRetryDelay: the pause before an eviction refused with 429 is sent again */
export const EVICT_RETRY_MS = 5_000;
/** waitForDelete's interval */
const DELETE_POLL_MS = 1_000;
/** one request's own bound inside the drain (the drain's deadline ends it sooner) */
const REQUEST_MS = 30_000;

const ref = (p: { namespace: string; name: string }) => `${p.namespace}/${p.name}`;
const podPath = (p: { namespace: string; name: string }) =>
  `/api/v1/namespaces/${encodeURIComponent(p.namespace)}/pods/${encodeURIComponent(p.name)}`;

interface DrainPod extends DrainPodReading {
  uid: string;
  deleting: boolean;
}

export interface DrainTiming {
  evictRetryMs: number;
  deletePollMs: number;
}

/** What one pod's eviction came to. */
type PodEnd = { ok: true; evicted: boolean } | { ok: false; pending: boolean; error: ToolError | undefined; message: string };

export async function drainHttp(
  http: KubeHttp,
  name: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  evicted: ((pods: string[]) => void) | undefined,
  timing: DrainTiming = { evictRetryMs: EVICT_RETRY_MS, deletePollMs: DELETE_POLL_MS },
): Promise<void> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const onAbort = () => deadline.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  const cancelled = () => signal?.aborted === true;
  const done = new Set<string>();
  const refusedByPdb = new Set<string>();
  const command = `drain ${name} (--ignore-daemonsets --delete-emptydir-data --timeout=${Math.max(1, Math.ceil(timeoutMs / 1000))}s)`;
  const req = (r: Omit<KubeRequest, 'timeoutMs' | 'signal' | 'node' | 'op'>): KubeRequest => ({
    ...r,
    timeoutMs: REQUEST_MS,
    signal: deadline.signal,
    node: name,
    op: 'drain',
  });
  const fail = (kind: ToolError['kind'], stderr: string, from?: ToolError) =>
    new ToolError({
      tool: 'kube-api',
      command: from?.command ?? command,
      kind,
      exitCode: null,
      stderr,
      node: name,
      message: `${command} failed (${kind}): ${stderr.split('\n')[0]}`,
    });
  try {
    // GetPodsForDeletion
    const list = await http.json(
      req({ method: 'GET', path: `/api/v1/pods?${new URLSearchParams({ fieldSelector: `spec.nodeName=${name}` }).toString()}` }),
    );
    const pods: DrainPod[] = listItems('pods', list).map((item: Json) => {
      const meta = (item.metadata ?? {}) as Json;
      return {
        ...drainPodFromItem('pods', item),
        uid: typeof meta.uid === 'string' ? meta.uid : '',
        deleting: typeof meta.deletionTimestamp === 'string',
      };
    });
    // daemonSetFilter GETs each DaemonSet a running pod names
    const dsNames = [
      ...new Set(
        pods
          .filter(
            (p) =>
              p.controller?.kind === 'DaemonSet' && p.controllerApiVersion === 'apps/v1' && p.phase !== 'Succeeded' && p.phase !== 'Failed',
          )
          .map((p) => `${p.namespace}/${p.controller!.name}`),
      ),
    ];
    const existing = new Set<string>();
    await Promise.all(
      dsNames.map(async (ds) => {
        const [ns, n] = ds.split('/');
        const a = await http.exchange(
          req({ method: 'GET', path: `/apis/apps/v1/namespaces/${encodeURIComponent(ns)}/daemonsets/${encodeURIComponent(n)}` }),
        );
        if (a.status >= 200 && a.status < 300) existing.add(ds);
        else if (a.status !== 404) throw http.refused(req({ method: 'GET', path: `/apis/apps/v1/namespaces/${ns}/daemonsets/${n}` }), a);
      }),
    );
    const filter = filterDrainPods(pods, name, existing, ACTION_DRAIN_FLAGS);
    if (filter.refusals.length > 0) {
      const byReason = new Map<string, string[]>();
      for (const r of filter.refusals) byReason.set(r.reason, [...(byReason.get(r.reason) ?? []), r.pod]);
      const text = [...byReason].map(([reason, ps]) => `${reason}: ${ps.join(', ')}`).join('; ');
      throw fail('unknown', `unable to drain node "${name}": ${text}`);
    }
    const toEvict = filter.evict as DrainPod[];
    const ends = await Promise.all(toEvict.map((p) => evictOne(p)));
    if (cancelled()) throw fail('cancelled', 'the drain was ended');
    const failures = ends
      .map((e, i) => ({ e, p: toEvict[i] }))
      .filter((x): x is { e: Extract<PodEnd, { ok: false }>; p: DrainPod } => !x.e.ok);
    if (failures.length === 0) return;
    if (deadline.signal.aborted) {
      const pending = failures
        .filter((f) => f.e.pending)
        .map((f) => ref(f.p))
        .sort();
      const blocked = pending.length > 0 ? pending : [...refusedByPdb].sort();
      const stderr = failures.map((f) => f.e.message).join('\n');
      throw new DrainTimeoutError({
        tool: 'kube-api',
        command,
        kind: 'timeout',
        exitCode: null,
        stderr,
        node: name,
        blockedPods: blocked,
        message: `${command} failed (timeout): global timeout reached: ${failures.length} pod(s) still pending`,
      });
    }
    const first = failures[0].e.error;
    throw fail(first?.kind ?? 'unknown', failures.map((f) => f.e.message).join('\n'), first);
  } catch (e) {
    if (cancelled() && !(e instanceof ToolError && e.kind === 'cancelled')) throw fail('cancelled', 'the drain was ended');
    if (e instanceof ToolError && e.kind === 'cancelled' && !cancelled() && deadline.signal.aborted) {
      throw new DrainTimeoutError({
        tool: 'kube-api',
        command,
        kind: 'timeout',
        exitCode: null,
        stderr: e.stderr,
        node: name,
        blockedPods: [],
        message: `${command} failed (timeout): global timeout reached before the pods were listed`,
      });
    }
    throw e;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    evicted?.([...done]);
  }

  async function evictOne(pod: DrainPod): Promise<PodEnd> {
    let active = pod;
    const body = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod.name, namespace: pod.namespace }, deleteOptions: {} };
    for (;;) {
      if (deadline.signal.aborted) {
        return {
          ok: false,
          pending: true,
          error: undefined,
          message: `error when evicting pods/"${pod.name}" -n "${pod.namespace}": global timeout reached`,
        };
      }
      let a;
      const r = req({ method: 'POST', path: `${podPath(pod)}/eviction`, body });
      try {
        a = await http.exchange(r);
      } catch (e) {
        if (deadline.signal.aborted) continue;
        const err = e instanceof ToolError ? e : undefined;
        // sent, answer lost: counted as evicted, as kubectl's output was when it was killed mid-request
        done.add(ref(pod));
        return {
          ok: false,
          pending: true,
          error: err,
          message: `error when evicting pods/"${pod.name}" -n "${pod.namespace}": ${err?.message ?? String(e)}`,
        };
      }
      if (a.status >= 200 && a.status < 300) break;
      if (a.status === 404) {
        done.add(ref(pod));
        return { ok: true, evicted: true };
      }
      const terminatingNs = a.status === 403 && hasStatusCause(a.body, 'NamespaceTerminating');
      if (terminatingNs && active.deleting) break;
      if (a.status === 429 || terminatingNs) {
        if (a.status === 429) refusedByPdb.add(ref(pod));
        await sleep(timing.evictRetryMs, deadline.signal);
        // the pod read again; on an error the eviction goes on with the one it had
        try {
          const fresh = await http.json<Json>(req({ method: 'GET', path: podPath(pod) }));
          const meta = (fresh?.metadata ?? {}) as Json;
          active = { ...active, deleting: typeof meta.deletionTimestamp === 'string' };
        } catch {
          /* as kubectl: ignored */
        }
        continue;
      }
      const err = http.refused(r, a);
      return {
        ok: false,
        pending: true,
        error: err,
        message: `error when evicting pods/"${pod.name}" -n "${pod.namespace}": ${answerMessage(a)}`,
      };
    }
    done.add(ref(pod));
    // waitForDelete: gone, or its name held by a pod of another uid
    for (;;) {
      let gone = false;
      try {
        const now = await http.exchange(req({ method: 'GET', path: podPath(pod) }));
        if (now.status === 404) gone = true;
        else if (now.status >= 200 && now.status < 300) {
          const meta = ((JSON.parse(now.body) as Json).metadata ?? {}) as Json;
          gone = meta.uid !== pod.uid;
        } else {
          return {
            ok: false,
            pending: true,
            error: undefined,
            message: `error when waiting for pod "${pod.name}" in namespace "${pod.namespace}" to terminate: ${answerMessage(now)}`,
          };
        }
      } catch (e) {
        if (!deadline.signal.aborted) {
          const err = e instanceof ToolError ? e : undefined;
          return {
            ok: false,
            pending: true,
            error: err,
            message: `error when waiting for pod "${pod.name}" in namespace "${pod.namespace}" to terminate: ${err?.message ?? String(e)}`,
          };
        }
      }
      if (gone) return { ok: true, evicted: true };
      if (deadline.signal.aborted) {
        return {
          ok: false,
          pending: true,
          error: undefined,
          message: `error when waiting for pod "${pod.name}" in namespace "${pod.namespace}" to terminate: context deadline exceeded`,
        };
      }
      await sleep(timing.deletePollMs, deadline.signal);
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
