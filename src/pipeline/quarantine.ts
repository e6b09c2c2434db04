// `undrainable: quarantine`, all of its pipeline side: which drain failures quarantine a node, what
// blocked the drain, and the quarantine patch that stopNode (src/pipeline/stop.ts, the one place a
// stop decides what the node is left as) sends for it. Its rules are src/rules/quarantine.ts.
import { unique } from '../core/async.js';
import { DrainTimeoutError, errorMessage } from '../core/errors.js';
import { formatDuration } from '../core/format.js';
import type { DrainBlocker } from '../core/model/record.js';
import { STEP } from '../core/steps.js';
import {
  buildQuarantinePatch,
  describeBlockers,
  drainBlockers,
  formatQuarantine,
  liftNextStep,
  liftQuarantine,
  quarantineRecord,
} from '../rules/quarantine.js';
import type { RunContext } from './context.js';
import type { NodeRun } from './nodeRun.js';
import { releaseNode } from './nodeWrite.js';

/** Why a node is quarantined: what blocked the drain, the drain-timeout that ran out (as formatted), and both in one line. */
export interface QuarantineCause {
  blockers: DrainBlocker[];
  drainTimeout: string;
  why: string;
}

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
      STEP.readBlockingPdbs,
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

/**
 * What the stop that asks stopNode to quarantine the node carries (the drain, src/pipeline/drain.ts,
 * throws it): its message, and why (the timeout and what blocked it), for its record.
 */
export async function quarantineCause(
  ctx: RunContext,
  run: NodeRun,
  e: DrainTimeoutError,
): Promise<{ message: string; cause: QuarantineCause }> {
  const blockers = await blockersOf(ctx, run, e);
  const timeout = formatDuration(ctx.config.drainTimeoutMs);
  const why = `drain timed out after ${timeout}, blocked by ${describeBlockers(blockers)}`;
  return {
    message: `${why}; quarantined: left cordoned and not rebooted, so its running containerd still holds the OLD credential`,
    cause: { blockers, drainTimeout: timeout, why },
  };
}

/**
 * The quarantine patch (src/rules/quarantine.ts buildQuarantinePatch), surviving a lost response. On
 * success the node is `quarantined`: nothing of the claim is left on it, so it keeps no Lease and the
 * post step has nothing to do for it. When the patch does not land (a `test` failed: someone changed
 * the node; or the apiserver stayed unreachable) the node is left fenced, claimed and cordoned, for a
 * person, and the node counts as failed: it is never uncordoned by this path.
 */
export async function quarantineNode(
  ctx: RunContext,
  nodeRun: NodeRun,
  q: QuarantineCause,
): Promise<{ ok: true; nextStep: string } | { ok: false; error: unknown; nextStep: string }> {
  const capture = nodeRun.capture!;
  const record = quarantineRecord({
    capture,
    drainTimeout: q.drainTimeout,
    blockedBy: q.blockers,
    atMs: ctx.clock.now(),
    run: ctx.owner,
  });
  const text = formatQuarantine(record);
  try {
    // the one writer of a patch that gives up a claim: a lost answer judged by a re-read, an autoscaler
    // mark someone changed during the hold kept as they set it (src/pipeline/nodeWrite.ts)
    await nodeRun.step(STEP.quarantine, () =>
      releaseNode(
        { ...ctx, note: (m) => ctx.log.info(m), keptMark: (line) => nodeRun.markKept(line) },
        capture,
        ctx.keys,
        (c) => buildQuarantinePatch(c, ctx.keys, record),
        'the quarantine',
      ),
    );
  } catch (error) {
    nodeRun.enter('left-fenced');
    return {
      ok: false,
      error,
      nextStep:
        `The drain timed out and quarantining the node failed, so it is left cordoned and claimed (phase=mutating), not rebooted; ` +
        `its running containerd still holds the old credential. Check \`kubectl get node ${nodeRun.node.name} -o yaml\` (did someone change it?); ` +
        `fix what blocked the drain, then release it: ${nodeRun.releaseCommand()} and rerun.`,
    };
  }
  nodeRun.enter('quarantined');
  const lift = liftQuarantine(nodeRun.node, record, text, ctx.keys, ctx.config);
  nodeRun.recordQuarantine({ blockers: q.blockers, ...lift });
  return { ok: true, nextStep: liftNextStep(lift) };
}
