// Scripted faults: answer the next matching requests with an error or a dropped connection, and run a
// test's mutation exactly before a matching write is applied.

/**
 * How a faulted request is answered. With `land: true` the request is applied first, exactly as
 * without the fault, and only its answer is replaced: the write landed although the client cannot
 * tell. `status` answers with a metav1.Status (504 without a message is the kube-apiserver's own
 * timeout, docs/kubernetes-facts.md#k13-server-timeout); `drop` closes the connection; `hang` never
 * answers, until the client gives up (kubectl's --request-timeout) or is killed.
 */
export type FaultAction =
  | {
      status: number;
      /** the Status's reason; `''`: none (StatusReasonUnknown, omitted from the JSON); unset: the code's usual one */
      reason?: string;
      message?: string;
      land?: boolean;
      /** a `Retry-After` header: client-go then retries the request itself (up to 10 times, that many seconds apart) */
      retryAfterSeconds?: number;
    }
  | { drop: true; land?: boolean }
  | { hang: true; land?: boolean };

/**
 * etcd's own timeout on a write, as the kube-apiserver answers it: the etcd client's error
 * (rpctypes.ErrTimeout, "etcdserver: request timed out") comes back from the etcd3 store as it is
 * (k8s.io/apiserver/pkg/storage/etcd3/store.go, GuaranteedUpdate: `return err` after the Txn),
 * InterpretUpdateError passes it through (storage/errors/storage.go, its default case), and
 * ErrorToAPIStatus (endpoints/handlers/responsewriters/status.go, "an error that is not an
 * metav1.Status") answers a 500 Status with reason StatusReasonUnknown (empty, so omitted) and the
 * error's text as message. kubectl prints `Error from server: etcdserver: request timed out` (no reason
 * in parentheses: kubectl/pkg/cmd/util/helpers.go StandardErrorMessage). The proposal may still commit
 * after the timeout: `{ ...ETCD_REQUEST_TIMEOUT, land: true }`.
 */
export const ETCD_REQUEST_TIMEOUT: FaultAction = { status: 500, reason: '', message: 'etcdserver: request timed out' };

/**
 * A kube-apiserver shutting down (a restart), as it answers the requests it no longer takes:
 * k8s.io/apiserver/pkg/server/filters/waitgroup.go WithWaitGroup writes
 * NewServiceUnavailable("apiserver is shutting down") with `Retry-After: 1`, so client-go retries by
 * itself (rest/request.go, checkWait: a 5xx with Retry-After) and kubectl prints
 * `Error from server (ServiceUnavailable): apiserver is shutting down` only when its retries ran out.
 */
export const APISERVER_SHUTTING_DOWN: FaultAction = {
  status: 503,
  reason: 'ServiceUnavailable',
  message: 'apiserver is shutting down',
  retryAfterSeconds: 1,
};

export interface FaultMatch {
  method?: string;
  /** tested against the request path without the query string */
  path: RegExp;
  count?: number;
}

export interface WriteHookMatch {
  method?: string;
  path: RegExp;
  once?: boolean;
}

interface PendingFault {
  method?: string;
  path: RegExp;
  left: number;
  action: FaultAction;
}

interface WriteHook {
  method?: string;
  path: RegExp;
  once: boolean;
  fn: () => void;
}

const mutating = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function isMutating(method: string): boolean {
  return mutating.has(method.toUpperCase());
}

function methodMatches(want: string | undefined, got: string): boolean {
  return !want || want.toUpperCase() === got.toUpperCase();
}

function test(re: RegExp, path: string): boolean {
  re.lastIndex = 0;
  return re.test(path);
}

export class Faults {
  private readonly pending: PendingFault[] = [];
  private readonly hooks: WriteHook[] = [];

  failNext(match: FaultMatch, action: FaultAction): void {
    this.pending.push({ method: match.method, path: match.path, left: match.count ?? 1, action });
  }

  beforeWrite(match: WriteHookMatch, fn: () => void): void {
    this.hooks.push({ method: match.method, path: match.path, once: match.once ?? false, fn });
  }

  /** Consumes one use of the first matching fault. */
  take(method: string, path: string): FaultAction | undefined {
    const i = this.pending.findIndex((f) => methodMatches(f.method, method) && test(f.path, path));
    if (i < 0) return undefined;
    const f = this.pending[i]!;
    if (--f.left <= 0) this.pending.splice(i, 1);
    return f.action;
  }

  /** Runs the hooks for a write about to be applied; a `once` hook is removed before it runs. */
  runWriteHooks(method: string, path: string): void {
    if (!isMutating(method)) return;
    for (const h of [...this.hooks]) {
      if (!methodMatches(h.method, method) || !test(h.path, path)) continue;
      if (h.once) this.hooks.splice(this.hooks.indexOf(h), 1);
      h.fn();
    }
  }

  clear(): void {
    this.pending.length = 0;
    this.hooks.length = 0;
  }
}
