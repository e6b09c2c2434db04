// The run: the Lease, the passes over the inventory (listing again until nothing new appears), and
// cancellation; the scheduler of each pass is src/pipeline/scheduler.ts. However the run ends, its
// result lists every node it touched with what became of it.
import { errorMessage, InputError } from '../core/errors.js';
import type { NodeState } from '../core/model/node.js';
import type { DecisionRecord } from '../core/model/record.js';
import type { RolloutFindings } from '../core/model/rolloutResult.js';
import { fenceCapture } from '../rules/fences.js';
import { emptySelection, selectNodes, validateInventory } from '../rules/inventory.js';
import { adoptable } from '../rules/adopt.js';
import { releaseCommand } from '../rules/commands.js';
import { makeContext, type NodeLogsLike, type RolloutDeps, type RunContext } from './context.js';
import { prefetchVersions } from './evidence.js';
import { resolveMaxUnavailable } from '../core/config.js';
import { NodeLogs } from '../report/nodeLog.js';
import { runEvent } from '../report/events.js';
import type { RebootGrace } from '../adapters/types.js';
import { budgetTooShort, nodeDeadlines } from '../rules/budget.js';
import { quarantinedNodes, type QuarantinedOut } from '../rules/quarantine.js';
import {
  CancelledError,
  EndedEarlyError,
  HolderFencesError,
  LeaseHeldError,
  LeaseNotReleasedError,
  QuarantinedNodesError,
} from './errors.js';
import { NodeRuns } from './nodeRun.js';
import { planGates, planNodes } from './plan.js';
import { proofStep, proveNodes, type ToProve } from './prove.js';
import { forecastDrains } from './forecast.js';
import type { PodOwnerReading } from '../core/workloads.js';
import { rollNodes, type RollEnd, type RollState } from './scheduler.js';
import { READYZ_WAIT_MS } from './transport.js';
import { BOOT_ID_READ_MS } from './bootIdBefore.js';
import { windowClosed, windowPlan } from './windows.js';
import { startChecks } from './startChecks/index.js'; // TEMP wiring (silence start check)
import { SilenceCheck } from './startChecks/silence.js'; // TEMP wiring (silence start check)

/** What the run found and did (core/model/rolloutResult.ts), and the listing the old-credential verdict is judged on. */
export interface ScopedFindings extends RolloutFindings {
  /** every node of the cluster as the run last listed it, and which of them the inputs select (src/rules/revocation.ts) */
  scope?: Scope;
}

/** Every node of the cluster as one listing saw it, and the uids of those the `nodes` / `node-selector` inputs select. */
export interface Scope {
  nodes: NodeState[];
  selected: Set<string>;
}

/** How many listings after the first pass may still find work (an autoscaler keeps adding nodes). */
const MAX_EXTRA_PASSES = 5;

/** What one listing gives a pass: the nodes to roll in roll order, those already verified, and the quarantined ones (out of service). */
interface Listing {
  selected: NodeState[];
  upToDate: string[];
  quarantined: QuarantinedOut[];
  scope: Scope;
  /** nodes in scope not to roll whose marker proves nothing yet for a host (src/rules/inventory.ts selectNodes) */
  toProve: ToProve[];
}

/** List, validate the inventory and select the nodes a pass rolls, in roll order. */
async function listAndSelect(ctx: RunContext, processed: number): Promise<Listing> {
  const { kube, config, keys } = ctx;
  // Every node must be identifiable and none may carry a leftover claim.
  const inventory = await kube.listNodes();
  // An apply run adopts the claims other runs of this action abandoned (src/rules/adopt.ts): they are
  // no problem for it, as long as it can take the Lease (refused while their run holds it).
  const adopt = config.mode === 'apply' && ctx.lock ? (n: NodeState) => adoptable(n, keys, ctx.owner) : undefined;
  const problems = validateInventory(inventory, keys, adopt);
  if (problems.length > 0) {
    // Another run's claim on a node reads as a residual claim: when that run still holds the Lease,
    // say so (who, the URL of its run, and the nodes it left claimed) instead. Read on the first
    // listing only (later ones run under our Lease), and only when it refuses the run: a listing with
    // nothing to roll needs no Lease (docs/preflight.md "Another run holding the Lease").
    if (processed === 0 && config.mode === 'apply' && ctx.lock) await withFencesOfHolder(ctx, () => ctx.lock!.checkNotHeldByAnother());
    const changed =
      processed === 0
        ? 'nothing was changed'
        : `${processed} node(s) were already processed in this run (listed below); no further node was started`;
    throw new InputError('nodes', `the cluster's node inventory is not safe to roll, ${changed}:\n- ${problems.join('\n- ')}`);
  }
  // the selector is matched against this one listing of every node: no second, filtered listing
  const selection = selectNodes(inventory, {
    names: config.nodes.length ? config.nodes : undefined,
    selector: config.nodeSelector,
    want: ctx.want,
    keys,
  });
  if (selection.unknownNames.length > 0) {
    throw new InputError('nodes', `no such node: ${selection.unknownNames.join(', ')}`);
  }
  // An abandoned claim outside the selection is not this run's to complete: the inputs did not pick it.
  const inScope = new Set(selection.inScope.map((n) => n.uid));
  const outside = adopt ? inventory.filter((n) => adopt(n) && !inScope.has(n.uid)) : [];
  if (outside.length > 0) {
    // Such a claim is abandoned only once its run no longer holds the Lease: while another run holds it
    // (a live run draining that node), say so, naming it and its nodes, as for any claim of a live run.
    if (processed === 0) await withFencesOfHolder(ctx, () => ctx.lock!.checkNotHeldByAnother());
    throw new InputError(
      config.nodes.length ? 'nodes' : 'node-selector',
      `node(s) carry a claim another run of this action left, outside this run's selection, nothing was changed: ${outside.map((n) => `${n.name} (${keys.owner}=${JSON.stringify(n.annotations[keys.owner])})`).join(', ')}; select them too (the run completes their roll), or release them with mode: recover-fences`,
    );
  }
  return {
    selected: selection.selected,
    upToDate: selection.upToDate,
    quarantined: quarantinedNodes(inventory, keys),
    toProve: selection.toProve,
    // the whole inventory, not the selection: the old credential is revocable only when no node of the cluster holds it
    scope: { nodes: inventory, selected: new Set(selection.inScope.map((n) => n.uid)) },
  };
}

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

  // Outside every maintenance window an apply run with work claims nothing: no registry request, no
  // Talos client, no Lease (docs/windows.md); a run with nothing to roll stays `clean` whatever the window.
  const closed = config.mode === 'apply' && first.selected.length > 0 ? windowClosed(ctx) : undefined;
  if (closed) return outsideEveryWindow(ctx, first, closed);

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
    const settleWaits = await predictSettle(ctx, records, pods);
    const windows = windowPlan(ctx);
    if (windows) ctx.log.info(windows);
    const gates = await planGates(ctx);
    return {
      ...(windows ? { windows } : {}),
      result: 'planned',
      records,
      notReached: [],
      upToDate: first.upToDate,
      scope: first.scope,
      ...(settleWaits ? { settleWaits } : {}),
      ...(gates ? { gates } : {}),
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
  const roll: RollState = {
    maxUnavailable: resolveMaxUnavailable(config.maxUnavailable, first.selected.filter((n) => n.role === 'worker').length),
    runStartMs,
    deadlines,
    times: [],
    peak: 0,
    quarantined: [],
    quarantinedNow: new Map(),
    logs:
      deps.nodeLogs ??
      ('count' in config.maxUnavailable && config.maxUnavailable.count === 1 ? passThrough(ctx.log) : new NodeLogs(sinkOf(ctx.log))),
  };
  let end: RollEnd;
  const last = { listing: first };
  // ---- TEMP wiring (silence start check): the start checks' begin/end around the roll, until the scheduler's
  // port wiring lands (it then owns begin/end and asks each check before each start); the silence's
  // report is taken from its check below.
  const checks = startChecks(ctx, { selected: first.selected });
  const silence = checks.find((c): c is SilenceCheck => c instanceof SilenceCheck);
  let ending: Promise<unknown> | undefined;
  try {
    for (const c of checks) await c.begin?.();
    // ---- end TEMP wiring
    end = await rollPasses(ctx, nodeRuns, first, roll, last);
  } finally {
    // TEMP wiring (silence start check): the checks end beside the Lease's release, not before it (a
    // slow Alertmanager must not delay the release within a cancelled job's grace); awaited below
    ending = Promise.all(checks.map((c) => (c.end ? c.end() : Promise.resolve())));
    ctx.lock?.stop();
    roll.logs.flushAll();
  }
  const leaseError = await endLease(ctx, nodeRuns);
  await ending; // TEMP wiring (silence start check)
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
    ...(end.result === 'partial' ? { notice: end.notice, stoppedBy: end.stoppedBy } : {}),
    inFlightMax: roll.peak,
    maxUnavailable: roll.maxUnavailable,
    holds: ctx.holds.all,
    scope: last.listing.scope,
    ...(ctx.events.warning ? { eventsWarning: ctx.events.warning } : {}),
    ...(silence ? { silence: silence.report() } : {}), // TEMP wiring (silence start check)
    ...facts,
  };
}

/**
 * The nodes to prove of a run with nothing to roll. The Talos client is opened only for the evidence
 * (not for a pull of verify-image), and a client that cannot be opened fails no run: the nodes stay
 * unproven, and the report says why.
 */
async function proveListed(
  deps: RolloutDeps,
  ctx: RunContext,
  toProve: ToProve[],
): Promise<Pick<ScopedFindings, 'proofChecks' | 'talosReads'>> {
  ctx.log.info(
    `${toProve.length} node(s) to prove (their verified marker does not prove the credential yet): ${toProve.map((p) => p.node.name).join(', ')}`,
  );
  let unavailable: string | undefined;
  let talosReads: string | undefined;
  if (proofStep(ctx) === 'evidence' && !deps.talos && deps.openTalos) {
    try {
      const opened = await deps.openTalos();
      ctx.talos = opened.client;
      talosReads = opened.describe;
      await prefetchVersions(
        ctx,
        toProve.map((p) => p.node),
      );
    } catch (e) {
      unavailable = `the Talos client could not be opened: ${errorMessage(e)}`;
    }
  }
  const proofChecks = await proveNodes(ctx, toProve, unavailable);
  return { proofChecks, ...(talosReads ? { talosReads } : {}) };
}

/** A run started outside every maintenance window: `partial`, every selected node left, nothing read past the listing. */
function outsideEveryWindow(ctx: RunContext, first: Listing, notice: string): ScopedFindings {
  ctx.holds.start('window', ctx.clock.now(), notice, first.selected[0].name);
  ctx.log.info(notice);
  return {
    result: 'partial',
    records: [],
    notReached: first.selected.map((n) => n.name),
    upToDate: first.upToDate,
    notice,
    stoppedBy: 'window',
    holds: ctx.holds.all,
    scope: first.scope,
  };
}

/** Plan: which workloads the settle gate would wait for, after the drains of the nodes planned to reboot; logged. */
async function predictSettle(ctx: RunContext, records: DecisionRecord[], pods?: PodOwnerReading[]): Promise<string[] | undefined> {
  if (!ctx.settle.enabled) return undefined;
  try {
    const waits = await ctx.settle.predictWaits(
      records.filter((r) => r.outcome === 'planned-reboot').map((r) => r.node),
      pods,
    );
    ctx.log.info(`settle gate: the drains would wait for ${waits.length ? waits.join(', ') : 'no workload'} to be available again`);
    return waits;
  } catch (e) {
    // a prediction only: the plan stands without it
    ctx.log.info(`settle gate: could not predict which workloads the roll would wait for: ${errorMessage(e)}`);
    return undefined;
  }
}

/**
 * The Lease at the end. A node left claimed keeps it held: nobody should start another roll until a
 * person has looked at it (recover-fences releases it once this run is completed). Otherwise it is
 * released; when someone else holds it by then, it is left alone and the run fails (it was not ours
 * for some of the time it should have been): the error returned says so.
 */
async function endLease(ctx: RunContext, nodeRuns: NodeRuns): Promise<Error | undefined> {
  if (!ctx.lock) return undefined;
  if (nodeRuns.anyLeft()) {
    ctx.log.info('run Lease: kept, because a node of this run is left claimed');
    return undefined;
  }
  let outcome: { released: boolean; message: string };
  try {
    outcome = await ctx.lock.release();
  } catch (e) {
    outcome = { released: false, message: `releasing it failed: ${errorMessage(e)}` };
  }
  ctx.log.info(`run Lease: ${outcome.message}`);
  if (outcome.released) return undefined;
  return new LeaseNotReleasedError(outcome.message);
}

/**
 * One node at a time and no NodeLogs given (tests, benchmarks): the port's group opens when the node
 * starts and closes when it ends, and lines go straight through, as before nodes ran in parallel.
 */
function passThrough(log: RunContext['log']): NodeLogsLike {
  return {
    info: (m) => log.info(m),
    forNode: (node) => ({
      node,
      info: (m) => log.info(m),
      progress: (m) => log.info(m),
      group: (title) => {
        const end = log.group(title);
        return () => end();
      },
    }),
    within: (_log, fn) => fn(),
    flushAll: () => undefined,
  };
}

/** NodeLogs over the rollout's own log port (tests, the demo): a group is the port's group. */
function sinkOf(log: RunContext['log']): ConstructorParameters<typeof NodeLogs>[0] {
  let end: (() => void) | undefined;
  return {
    info: (line) => log.info(line),
    startGroup: (title) => {
      end = log.group(title);
    },
    endGroup: () => end?.(),
  };
}

/** On a LeaseHeldError: name the nodes the holder left claimed, with their release commands (or that it left none). */
async function withFencesOfHolder(ctx: RunContext, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    if (!(e instanceof LeaseHeldError)) throw e;
    const nodes = await ctx.kube.listNodes().catch(() => undefined);
    if (!nodes) throw e;
    const fenced = nodes.filter((n) => n.annotations[ctx.keys.owner] === e.holder);
    if (fenced.length === 0) throw new HolderFencesError(e, ` No node carries a claim of ${e.holder}.`);
    const lines = fenced.map((n) => {
      const annotated = n.annotations[ctx.keys.phase] ?? '(none)';
      return `- ${n.name} (phase=${annotated}${n.unschedulable ? ', cordoned' : ''}): check it, then release it: ${releaseCommand(fenceCapture(n, ctx.keys), ctx.keys, ctx.config)}`;
    });
    throw new HolderFencesError(e, `\nThe Lease is kept for node(s) that run left claimed:\n${lines.join('\n')}`);
  }
}

/**
 * 3. Roll the selected nodes, then list again: nodes that became stale or appeared meanwhile (an
 * autoscaler scale-out) are rolled in a further pass. The run ends when two consecutive listings
 * select nothing new, or after MAX_EXTRA_PASSES listings. A node processed in this run (by uid) is
 * never rolled twice, whatever its annotations say. Any failure or cancellation in any pass ends
 * the run with the nodes processed so far in the result.
 */
async function rollPasses(
  ctx: RunContext,
  nodeRuns: NodeRuns,
  first: Listing,
  roll: RollState,
  last: { listing: Listing },
): Promise<RollEnd> {
  const done = new Set<string>();
  let pass = first;
  let emptyListings = 0;
  try {
    for (let extra = 0; ;) {
      const todo = pass.selected.filter((n) => !done.has(n.uid));
      // what each listing shows quarantined is the truth the pass starts from (this run's quarantines included)
      roll.quarantinedNow = new Map(
        pass.quarantined.map((q) => [q.name, { ...q, byThisRun: roll.quarantined.some((x) => x.node === q.name) }]),
      );
      if (todo.length > 0) {
        emptyListings = 0;
        await prefetchVersions(ctx, todo);
        if (extra > 0) ctx.log.info(`listing again found ${todo.length} more node(s) to roll: ${todo.map((n) => n.name).join(', ')}`);
        const stopped = await rollNodes(ctx, nodeRuns, todo, done, roll);
        if (stopped) return stopped;
      } else {
        emptyListings++;
      }
      if (emptyListings >= 2 || extra >= MAX_EXTRA_PASSES) break;
      if (ctx.cancelled?.()) throw new CancelledError('the run was cancelled');
      if (emptyListings === 1 && ctx.relistPauseMs) await ctx.clock.sleep(ctx.relistPauseMs);
      extra++;
      pass = await listAndSelect(ctx, done.size);
      // the latest listing is what the old-credential verdict judges
      last.listing = pass;
    }
  } catch (e) {
    const error =
      ctx.cancelled?.() && !(e instanceof CancelledError)
        ? new CancelledError(`the run was cancelled (${errorMessage(e)})`, { cause: e })
        : e;
    return { result: 'failed', notReached: [], error: endedEarly(error, done.size) };
  }
  return { result: 'processed' };
}

/** An input error already says nothing was started; anything else is wrapped to say how far the run got. */
function endedEarly(e: unknown, processed: number): Error {
  return e instanceof InputError ? e : new EndedEarlyError(e, processed);
}

/** One node's own deadlines; an apply whose time-budget none fits in is refused as an input error. */
function refuseShortBudget(ctx: RunContext, grace: RebootGrace) {
  const deadlines = deadlinesOf(ctx, grace);
  const tooShort = ctx.config.mode === 'apply' ? budgetTooShort(ctx.config.timeBudgetMs, deadlines) : undefined;
  if (tooShort) throw new InputError('time-budget', tooShort);
  return deadlines;
}

/**
 * One node's own deadlines under this run's inputs, with the margins the clients' ports declare
 * (src/rules/budget.ts): kubectl's past a drain's timeout, the Talos path's past a reboot's.
 */
function deadlinesOf(ctx: RunContext, grace: RebootGrace) {
  const { config } = ctx;
  return nodeDeadlines({
    drainTimeoutMs: config.drainTimeoutMs,
    readyTimeoutMs: config.readyTimeoutMs,
    criRestartWaitMs: config.criRestartWaitMs,
    verifyImage: !!config.verifyImage,
    drainKillGraceMs: ctx.kube.drainKillGraceMs,
    rebootGraceMs: grace.withBootIdMs,
    rebootWithoutBootIdGraceMs: grace.withoutBootIdMs,
    bootIdReadMs: BOOT_ID_READ_MS,
    readyzWaitMs: READYZ_WAIT_MS,
    settleTimeoutMs: ctx.settle.timeoutMs,
  });
}
