// The run, in its order: the listing, the start checks that need nothing taken, the pre-flight check and
// the Talos client, plan's predictions or (apply) the Lease, the passes under the start checks'
// lifetimes, and the Lease at the end. Each step's job is its own file (listing.ts, checkStops.ts,
// deadlines.ts, predict.ts, passes.ts, endLease.ts, rollLogs.ts, proveListed.ts); the scheduler of each
// pass is src/pipeline/scheduler.ts. However the run ends, its result lists every node it touched with
// what became of it.
import type { StartCheckReports } from '../core/model/startCheck.js';
import { InputError } from '../core/errors.js';
import type { FinishedNode } from '../rules/budget.js';
import { emptySelection } from '../rules/inventory.js';
import { resolveMaxUnavailable } from '../core/config.js';
import { runEvent } from '../report/events.js';
import { askBeforeAnything, partialOf, stoppedBeforeAnything } from './checkStops.js';
import { makeContext, type RolloutDeps } from './context.js';
import { refuseShortBudget } from './deadlines.js';
import { endLease } from './endLease.js';
import { QuarantinedNodesError } from './errors.js';
import { forecastDrains } from './forecast.js';
import { withFencesOfHolder } from './holderFences.js';
import { listAndSelect, type ScopedFindings } from './listing.js';
import { NodeRuns } from './nodeRun.js';
import { rollPasses } from './passes.js';
import { planNodes } from './plan.js';
import { predictStarts } from './predict.js';
import { proveListed } from './proveListed.js';
import { rollLogs } from './rollLogs.js';
import { withStartChecks, type RollEnd, type RollState } from './scheduler.js';
import { startChecks, type ChecksRoll } from './startChecks/index.js';

export type { Scope, ScopedFindings } from './listing.js';
/**
 * Runs before anything is changed throw (a bad input, a refused pre-flight check, another run's
 * Lease); once the Lease is taken every ending, a cancellation included, returns a result with every
 * node touched. The order: the listing, then (apply, a node to roll) the maintenance windows, then (only
 * when it selects a node to roll, or in plan) the pre-flight check and the Talos client, then (apply)
 * the Lease, then the first mutation.
 */
export async function runRollout(deps: RolloutDeps): Promise<ScopedFindings> {
  const ctx = makeContext(deps);
  const { config } = ctx;
  const runStartMs = ctx.clock.now();
  // A budget no node fits in is a configuration mistake: say so before anything is read or changed,
  // with the Talos path's own reboot grace when the client is given, else with the shortest grace any
  // path has (deps.rebootGraceBeforeOpen): a budget that fails it fails on every path. Once the client
  // is open the budget is checked again with its path's grace, still before the Lease.
  const graceBeforeOpen = deps.talos?.rebootGrace ?? deps.rebootGraceBeforeOpen;
  if (graceBeforeOpen) refuseShortBudget(ctx, graceBeforeOpen);

  // 1–2. Inventory and selection. A selection that selects nothing is a typo, not a clean run
  // (src/rules/inventory.ts emptySelection); only the first listing judges it: a pool the autoscaler
  // empties while a run that rolled some of it lists again is no mistake of the inputs.
  const first = await listAndSelect(ctx, 0);
  const empty = emptySelection({ names: config.nodes, selector: config.nodeSelector?.text, inScope: first.scope.selected.size });
  if (empty) throw new InputError(empty.input, empty.message);

  // The run's start checks (src/pipeline/startChecks/index.ts), built once; what they weigh of the roll
  // is filled in as the run learns it (max-unavailable, one node's deadlines, the nodes' times).
  const checksRoll: ChecksRoll & { times: FinishedNode[] } = {
    maxUnavailable: 1,
    runStartMs,
    deadlines: [],
    times: [],
    selected: first.selected,
  };
  const checks = config.mode === 'apply' ? startChecks(ctx, checksRoll) : [];
  // The checks that need nothing the run takes are asked before anything is: outside every maintenance
  // window an apply run with work claims nothing (no registry request, no Talos client, no Lease;
  // docs/windows.md); a run with nothing to roll stays `clean` whatever they say.
  const early = first.selected.length > 0 ? await askBeforeAnything(ctx, checks, first) : undefined;
  if (early?.ends === 'failed') throw early.error;
  if (early) return stoppedBeforeAnything(ctx, first, early);

  // What only a run with work needs comes now, before the plan or the Lease: a merge-queue run with
  // every node verified needs nothing but the node list (no registry request, no Talos call, no Lease
  // read or write), so another run holding the Lease does not fail it. Why that listing may be trusted
  // while another run is mid-roll: a node it holds carries its claim, which the inventory above refuses
  // (docs/preflight.md "Another run holding the Lease"). A plan asks the registry whatever it selects:
  // a refused credential is what it must predict.
  const preflight = config.mode === 'plan' || first.selected.length > 0 ? await deps.preflight?.() : undefined;
  const checked = preflight ? { preflight } : {};
  if (first.selected.length === 0) {
    // Nothing to roll: the nodes to prove, if any, are proven now, each with one step and no claim
    // (src/pipeline/prove.ts); a merge-queue run with none needs the node list only, as before.
    const proved = config.mode === 'apply' && first.toProve.length > 0 ? await proveListed(deps, ctx, first.toProve) : undefined;
    return { result: 'clean', records: [], notReached: [], upToDate: first.upToDate, scope: first.scope, ...checked, ...(proved ?? {}) };
  }
  ctx.log.info(`${first.selected.length} node(s) to roll: ${first.selected.map((n) => n.name).join(', ')}`);
  // the health gates' kinds, learnt once from discovery: a gate over a kind the cluster does not serve is an input error now
  await ctx.gates?.resolve(ctx.log);
  const opened = deps.openTalos ? await deps.openTalos() : undefined;
  if (opened) ctx.talos = opened.client;
  const deadlines = refuseShortBudget(ctx, ctx.talos.rebootGrace);
  const facts = { ...checked, ...(opened ? { talosReads: opened.describe } : {}) };

  if (config.mode === 'plan') {
    const { records, pods } = await forecastDrains(ctx, await planNodes(ctx, first.selected));
    // the same start checks, asked for their forecast: what would hold or stop the roll now
    const reboots = records.filter((r) => r.outcome === 'planned-reboot').map((r) => r.node);
    const predicted = await predictStarts(ctx, startChecks(ctx, checksRoll, { nodes: reboots, pods }), first.selected[0]);
    return {
      result: 'planned',
      records,
      notReached: [],
      upToDate: first.upToDate,
      scope: first.scope,
      ...predicted,
      ...facts,
    };
  }

  // One run at a time: the Lease is taken once a node is to be mutated, after the pre-flight check and
  // before the first mutation; refused while another run holds it, taken over once its holder let it
  // expire unrenewed for its whole duration on this run's clock (src/rules/lease.ts observedExpiry,
  // docs/recovery.md). The claims of a run that lost it are then adopted node by node (src/pipeline/node.ts).
  if (ctx.lock) {
    await withFencesOfHolder(ctx, () => ctx.lock!.acquire());
    ctx.lock.startRenewing();
  }
  const nodeRuns = new NodeRuns(ctx);
  // the checks read the roll's numbers from this same object
  const roll: RollState = Object.assign(checksRoll, {
    maxUnavailable: resolveMaxUnavailable(config.maxUnavailable, first.selected.filter((n) => n.role === 'worker').length),
    deadlines,
    checks,
    peak: 0,
    quarantined: [],
    quarantinedNow: new Map(),
    logs: rollLogs(deps, ctx),
  });
  let end: RollEnd;
  const last = { listing: first };
  // the checks' ends (an Alertmanager silence expired) run beside the Lease's release, never before it:
  // a slow server must not delay the release within a cancelled job's grace
  let checksEnded: Promise<void> = Promise.resolve();
  try {
    end = await withStartChecks(
      checks,
      first.selected,
      ctx.log,
      () => rollPasses(ctx, nodeRuns, first, roll, last),
      (ending) => {
        checksEnded = ending;
      },
    );
  } finally {
    ctx.lock?.stop();
    roll.logs.flushAll();
  }
  const leaseError = await endLease(ctx, nodeRuns);
  await checksEnded;
  // what the checks with a lifetime add to the result (the silences held), each under its own key
  const reports = checks.reduce<StartCheckReports>((all, c) => ({ ...all, ...c.result?.() }), {});
  // A quarantined node fails the run (whatever else happened): it is left cordoned with the old
  // credential in containerd, and a deploy job must show that. `fail-on-partial` stays about the budget.
  const ended = end.result === 'failed' ? end.error : leaseError;
  const error = roll.quarantined.length > 0 ? new QuarantinedNodesError(roll.quarantined, ended) : ended;
  const result = leaseError || roll.quarantined.length > 0 ? 'failed' : end.result;
  const records = nodeRuns.records();
  const notReached = end.result === 'processed' ? [] : end.notReached;
  if (ctx.lock) {
    const at = new Date(ctx.clock.now()).toISOString();
    const ended = { result, records, notReached: notReached.length, at, ...(error ? { error: error.message } : {}) };
    await ctx.events.write([runEvent(ctx.lock.ref, ended)], (m) => ctx.log.info(m));
  }
  return {
    result,
    records,
    notReached,
    upToDate: first.upToDate,
    ...(error ? { error } : {}),
    ...(end.result === 'partial' ? partialOf(end.notice, end.stop) : {}),
    inFlightMax: roll.peak,
    maxUnavailable: roll.maxUnavailable,
    holds: ctx.holds.all,
    scope: last.listing.scope,
    ...(ctx.events.warning ? { eventsWarning: ctx.events.warning } : {}),
    ...reports,
    ...facts,
  };
}
