// `undrainable: quarantine`: which drain failures quarantine a node, and what blocked the drain.
// The quarantine patch itself is sent by stopNode (src/pipeline/nodeRun.ts), the one place a stop
// decides what the node is left as; its rules are src/rules/quarantine.ts.
import { unique } from '../core/async.js';
import { DrainTimeoutError, errorMessage } from '../core/errors.js';
import { formatDuration } from '../core/format.js';
import type { DrainBlocker } from '../core/model.js';
import { describeBlockers, drainBlockers } from '../rules/quarantine.js';
import type { RunContext } from './context.js';
import { NodeStop, type NodeRun } from './nodeRun.js';

/**
 * Only a drain that TIMED OUT quarantines a node: kubectl's own `--timeout` ("global timeout
 * reached", "context deadline exceeded" while waiting for a pod to terminate) or our deadline past
 * it. That is the cluster refusing the evictions for as long as the input allowed (a PDB that never
 * allows one). Every other drain failure keeps its handling: a lost claim leaves the node as the other
 * actor set it, a drain ended because its watch was lost, a refusal kubectl prints at once (a pod
 * without a controller, local storage), a transport failure, a cancellation are released as before,
 * since none of them says the node cannot be drained.
 */
export function isDrainTimeout(e: unknown): e is DrainTimeoutError {
  return e instanceof DrainTimeoutError;
}

/**
 * The PDBs that blocked the drain and their pods: the pods the kube adapter read from the drain's
 * output (DrainTimeoutError.blockedPods), their PDBs by one
 * list of PodDisruptionBudgets and pods per namespace involved (src/rules/quarantine.ts matches the
 * selectors). When that read fails, the pods are still named, without their PDB.
 */
async function blockersOf(ctx: RunContext, run: NodeRun, e: DrainTimeoutError): Promise<DrainBlocker[]> {
  const pods = e.blockedPods;
  const namespaces = unique(pods.map((p) => p.slice(0, p.indexOf('/'))));
  if (namespaces.length === 0) return [];
  try {
    const reads = await run.step(
      'read the PodDisruptionBudgets that blocked the drain',
      () => Promise.all(namespaces.map((ns) => ctx.kube.listDisruptionBudgets(ns))),
      (r) =>
        describeBlockers(
          drainBlockers(
            pods,
            r.flatMap((x) => x.pdbs),
            r.flatMap((x) => x.pods),
          ),
        ),
    );
    return drainBlockers(
      pods,
      reads.flatMap((r) => r.pdbs),
      reads.flatMap((r) => r.pods),
    );
  } catch (readError) {
    ctx.log.info(`${run.node.name}: could not read the PodDisruptionBudgets (${errorMessage(readError)}); naming the pods only`);
    return [{ pods }];
  }
}

/** The stop that asks stopNode to quarantine the node: why (the timeout and what blocked it), for its record. */
export async function quarantineStop(ctx: RunContext, run: NodeRun, e: DrainTimeoutError): Promise<NodeStop> {
  const blockers = await blockersOf(ctx, run, e);
  const timeout = formatDuration(ctx.config.drainTimeoutMs);
  const why = `drain timed out after ${timeout}, blocked by ${describeBlockers(blockers)}`;
  return new NodeStop(
    'quarantined',
    `${why}; quarantined: left cordoned and not rebooted, so its running containerd still holds the OLD credential`,
    { disposition: 'quarantine', quarantine: { blockers, drainTimeout: timeout, why } },
    { cause: e },
  );
}
