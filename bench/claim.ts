// 1. Claim under churn: kubelet-style status writes hit the target node at a given rate while the
// action's claim and the old one-shot resourceVersion claim take it, interleaved in the same run.
// Every 10th claim of each kind has a concurrent cordon injected exactly between its read and its
// PATCH (a `beforeWrite` hook on the apiserver twin, fired once); every one of those must be refused.
import { performance } from 'node:perf_hooks';
import { realClock } from '../src/core/clock.js';
import { SimCluster } from '../sim/cluster.js';
import { actionClaim, ClaimRefused, oneShotClaim, type ClaimDeps } from './claimLoop.js';
import { actionRollout, mean, percentile, round, withClusterEnv } from './lib.js';

export interface ClaimFigures {
  /** claims without an injected conflict */
  claims: number;
  successRate: number | null;
  meanAttempts: number | null;
  /** latency from the start of the read to the claim landing, successful claims only */
  p50Ms: number | null;
  p95Ms: number | null;
  /** benign claims that failed: refused as a conflict although only status moved, or out of attempts */
  failedBenign: number;
  /** the same, over every benign claim including failed ones */
  p50AllMs: number | null;
  conflictsInjected: number;
  conflictsRefused: number;
}

export interface ClaimRow {
  writesPerSecond: number;
  action: ClaimFigures;
  oneShot: ClaimFigures;
  conflictsInjected: number;
  conflictsRefused: number;
  /** status writes the churn actually made on the node during this rate's claims, per second */
  achievedWritesPerSecond: number;
  wallMs: number;
}

interface Sample {
  ok: boolean;
  attempts: number;
  ms: number;
  conflict: boolean;
  /** a conflict claim that was refused and left no trace of this run on the node */
  refusedClean: boolean;
}

const TARGET = 'claim-target';
const WARMUP = 6;
const MIRROR_TAINT_KEY = 'node.kubernetes.io/unschedulable';

function figures(samples: Sample[]): ClaimFigures {
  const benign = samples.filter((s) => !s.conflict);
  const ok = benign.filter((s) => s.ok);
  const conflicts = samples.filter((s) => s.conflict);
  return {
    claims: benign.length,
    successRate: benign.length ? round(ok.length / benign.length, 4) : null,
    meanAttempts: round(mean(benign.map((s) => s.attempts)), 3),
    p50Ms: round(
      percentile(
        ok.map((s) => s.ms),
        50,
      ),
    ),
    p95Ms: round(
      percentile(
        ok.map((s) => s.ms),
        95,
      ),
    ),
    failedBenign: benign.length - ok.length,
    p50AllMs: round(
      percentile(
        benign.map((s) => s.ms),
        50,
      ),
    ),
    conflictsInjected: conflicts.length,
    conflictsRefused: conflicts.filter((s) => s.refusedClean).length,
  };
}

export interface ClaimBench {
  rows: ClaimRow[];
  claimsPerRate: number;
  /** measured cost of one claim pair (action + one-shot, with releases) in the warm-up, ms */
  pairMs: number;
}

/**
 * `choose` gets the measured cost of one claim pair (a warm-up of WARMUP pairs at 0 writes/s, not
 * recorded) and returns how many claims of each kind to run per rate.
 */
export async function benchClaims(
  rates: number[],
  choose: (pairMs: number) => number,
  progress: (msg: string) => void,
): Promise<ClaimBench> {
  // No default kubelet heartbeats: the only writes to the node are the churn this benchmark starts.
  const cluster = await SimCluster.start({ heartbeatMs: 1_000_000_000 });
  let composed: Awaited<ReturnType<typeof actionRollout>> | undefined;
  try {
    cluster.addNode({ name: TARGET, role: 'worker' });
    cluster.addNode({ name: 'bystander', role: 'worker' });
    // closed at the end, not here: close() ends the run's channel to the API server as well as its
    // Talos connection, and every claim goes over that channel
    composed = await actionRollout(cluster, { mode: 'apply' });
    const d = composed.deps;
    const deps: ClaimDeps = { kube: d.kube, keys: d.keys, owner: d.owner, config: d.config };
    const kube = cluster.kube;

    /** Release: put the node back as it was before the claim, bypassing kubectl. */
    const reset = () =>
      kube.mutateNode(TARGET, (n) => {
        const a = n.metadata.annotations ?? {};
        for (const k of [d.keys.owner, d.keys.phase, d.keys.wasCordoned]) delete a[k];
        delete n.spec.unschedulable;
        const taints = ((n.spec.taints ?? []) as Array<{ key: string }>).filter((t) => t.key !== MIRROR_TAINT_KEY);
        if (taints.length) n.spec.taints = taints;
        else delete n.spec.taints;
      });
    const claimedByUs = () => kube.node(TARGET)?.metadata?.annotations?.[d.keys.owner] === d.owner;

    const injectCordon = (): { fired: () => boolean } => {
      let fired = false;
      kube.beforeWrite({ method: 'PATCH', path: new RegExp(`^/api/v1/nodes/${TARGET}$`), once: true }, () => {
        fired = true;
        kube.mutateNode(TARGET, (n) => {
          n.spec.unschedulable = true;
        });
      });
      return { fired: () => fired };
    };

    const one = async (kind: 'action' | 'oneShot', conflict: boolean): Promise<Sample> => {
      const hook = conflict ? injectCordon() : undefined;
      const t0 = performance.now();
      let ok = false;
      let attempts: number;
      try {
        const fresh = await d.kube.getNode(TARGET);
        const r = kind === 'action' ? await actionClaim(deps, fresh, realClock) : await oneShotClaim(deps, fresh);
        ok = true;
        attempts = r.attempts;
      } catch (e) {
        if (!(e instanceof ClaimRefused)) throw e;
        attempts = e.attempts;
      }
      const ms = performance.now() - t0;
      if (hook && !hook.fired()) throw new Error('the injected cordon never fired: the PATCH path did not match');
      const refusedClean = conflict && !ok && !claimedByUs();
      reset();
      return { ok, attempts, ms, conflict, refusedClean };
    };

    const rows: ClaimRow[] = [];
    let claimsPerRate = 0;
    let pairMs = 0;
    await withClusterEnv(cluster, async () => {
      // warm-up: kubectl's discovery cache and the page cache, and the cost of a pair for the budget
      await d.kube.getNode(TARGET);
      const w0 = performance.now();
      for (let i = 0; i < WARMUP; i++) {
        await one('action', i === WARMUP - 1);
        await one('oneShot', false);
      }
      pairMs = (performance.now() - w0) / WARMUP;
      claimsPerRate = choose(pairMs);
      progress(`claim: one pair costs ${Math.round(pairMs)} ms; ${claimsPerRate} claims of each kind per rate`);
      for (const rate of rates) {
        const samples = { action: [] as Sample[], oneShot: [] as Sample[] };
        let churnWrites = 0;
        const stopCount = countHeartbeats(kube, TARGET, () => churnWrites++);
        const stopChurn = rate > 0 ? kube.startChurn({ nodes: [TARGET], perSecond: rate, kind: 'status' }) : () => undefined;
        const t0 = performance.now();
        try {
          for (let i = 0; i < claimsPerRate; i++) {
            const conflict = i % 10 === 5;
            // alternate which claim goes first, so neither always follows the other's reset
            const order: Array<'action' | 'oneShot'> = i % 2 === 0 ? ['action', 'oneShot'] : ['oneShot', 'action'];
            for (const k of order) samples[k].push(await one(k, conflict));
          }
        } finally {
          stopChurn();
          stopCount();
        }
        const wallMs = performance.now() - t0;
        const action = figures(samples.action);
        const oneShot = figures(samples.oneShot);
        rows.push({
          writesPerSecond: rate,
          action,
          oneShot,
          conflictsInjected: action.conflictsInjected + oneShot.conflictsInjected,
          conflictsRefused: action.conflictsRefused + oneShot.conflictsRefused,
          achievedWritesPerSecond: round(churnWrites / (wallMs / 1000), 1) ?? 0,
          wallMs: Math.round(wallMs),
        });
        progress(
          `claim @${rate}/s: action ${action.successRate} (${action.meanAttempts} attempts), one-shot ${oneShot.successRate}; conflicts refused ${action.conflictsRefused + oneShot.conflictsRefused}/${action.conflictsInjected + oneShot.conflictsInjected}; ${(wallMs / 1000).toFixed(1)} s`,
        );
      }
    });
    return { rows, claimsPerRate, pairMs: Math.round(pairMs) };
  } finally {
    composed?.close();
    await cluster.stop();
  }
}

/**
 * Counts the status writes stored on `name` (a changed Ready heartbeat time) through the twin's store
 * listener. Bench-only access to KubeSim's private context; a public write counter would be the clean hook.
 */
function countHeartbeats(kube: SimCluster['kube'], name: string, onWrite: () => void): () => void {
  const store = (
    kube as unknown as { ctx: { store: { onChange(l: (e: { def: { plural: string }; obj: any; prev?: any }) => void): () => void } } }
  ).ctx.store;
  return store.onChange((e) => {
    if (e.def.plural !== 'nodes' || e.obj?.metadata?.name !== name) return;
    if (beat(e.obj) !== beat(e.prev)) onWrite();
  });
}

function beat(node: any): string {
  const c = (node?.status?.conditions ?? []) as Array<{ type: string; lastHeartbeatTime?: string }>;
  return c.find((x) => x.type === 'Ready')?.lastHeartbeatTime ?? '';
}
