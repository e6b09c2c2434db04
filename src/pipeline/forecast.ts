// plan mode's drain forecast: for every node the plan would reboot, what its drain would meet now.
// One list of pods, DaemonSets and PDBs for the whole cluster (the settle prediction reuses its pods),
// then one dry-run eviction (`dryRun=All`) per pod a drain would evict: the apiserver runs its own
// PDB check and changes nothing. The decisions are src/rules/drainForecast.ts's; docs/plan.md says
// what the answer means. A plan never changes anything: no eviction here is ever real.
import { pool } from '../core/async.js';
import { errorMessage } from '../core/errors.js';
import type { DecisionRecord } from '../core/model/record.js';
import { ACTION_DRAIN_FLAGS, type DrainPodReading, type EvictionAnswer } from '../core/workloads.js';
import { drainForecast, filterDrainPods, unknownForecast } from '../rules/drainForecast.js';
import { drainIsCertain } from '../rules/unsatisfiableDrain.js';
import { describeForecast } from '../report/forecast.js';
import type { RunContext } from './context.js';

/** dry-run evictions at once: one kubectl process each (cost: one process per pod a drain would evict) */
export const EVICTIONS_IN_FLIGHT = 4;

/** The records with each planned reboot's forecast; the pod list read (for the settle prediction), undefined when it failed. */
export async function forecastDrains(
  ctx: RunContext,
  records: DecisionRecord[],
): Promise<{ records: DecisionRecord[]; pods?: DrainPodReading[] }> {
  const nodes = records.filter((r) => r.outcome === 'planned-reboot').map((r) => r.node);
  if (nodes.length === 0) return { records };
  let inputs: Awaited<ReturnType<RunContext['kube']['listDrainInputs']>>;
  try {
    inputs = await ctx.kube.listDrainInputs();
  } catch (e) {
    const why = `the pods, DaemonSets and PodDisruptionBudgets could not be listed: ${errorMessage(e)}`;
    ctx.log.info(`drain forecast: ${why}`);
    return { records: records.map((r) => (nodes.includes(r.node) ? { ...r, drainForecast: unknownForecast(why) } : r)) };
  }
  const daemonSets = new Set(inputs.daemonSets);
  const filters = new Map(nodes.map((n) => [n, filterDrainPods(inputs.pods, n, daemonSets, ACTION_DRAIN_FLAGS)]));
  const toAsk = [...filters.values()].flatMap((f) => f.evict);
  const answers = new Map<string, EvictionAnswer>();
  await pool(toAsk, EVICTIONS_IN_FLIGHT, async (p) => {
    answers.set(`${p.namespace}/${p.name}`, await ctx.kube.evictDryRun(p.namespace, p.name));
  });
  const out = records.map((r) => {
    const f = filters.get(r.node);
    if (!f) return r;
    // whether apply would refuse the node before its claim: the rule its start check asks, on the same reading
    const forecast = drainForecast(f, answers, inputs.pdbs, {
      node: r.node,
      pods: inputs.pods,
      drainIsCertain: drainIsCertain(ctx.config.reboot, r.evidence),
    });
    ctx.log.info(`drain forecast: ${r.node}: ${describeForecast(forecast)}`);
    return { ...r, drainForecast: forecast };
  });
  return { records: out, pods: inputs.pods };
}
