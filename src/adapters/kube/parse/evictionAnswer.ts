// A dry-run eviction's end (`kubectl create --raw /api/v1/namespaces/NS/pods/P/eviction?dryRun=All -f -`)
// → the apiserver's answer. kubectl prints the Status body on stdout and exits 0 on a 2xx; on an error
// it prints client-go's StandardErrorMessage on stderr and exits 1: `Error from server (TooManyRequests):
// Cannot evict pod as it would violate the pod's disruption budget.` for a PDB's refusal (the cause that
// names the budget is not printed: the forecast names it from the selectors), `Error from server
// (NotFound): pods "x" not found` when the pod is gone (drain counts that as evicted). No I/O.
import type { FailureCause } from '../../../core/errors.js';
import type { EvictionAnswer } from '../../../core/workloads.js';
import { classifyKubectlFailure } from './kubectlErrors.js';

export function evictionAnswer(res: { exitCode: number | null; stderr: string; timedOut?: boolean }): EvictionAnswer {
  if (res.exitCode === 0) return { kind: 'allowed' };
  const text = res.stderr.trim() || `kubectl exited with ${String(res.exitCode)}`;
  const cause: FailureCause = res.timedOut ? 'timeout' : classifyKubectlFailure(text);
  if (cause === 'too-many-requests') return { kind: 'blocked', message: text.replace(/^Error from server \(TooManyRequests\):\s*/, '') };
  if (cause === 'not-found') return { kind: 'gone' };
  return { kind: 'error', message: res.timedOut ? `no answer in time (${text})` : text };
}
