// `npm run bench`: the benchmarks against the cluster twin (the real kubectl, the fake talosctl),
// one table on stdout with each figure's target, every figure in bench/results.json.
//
// Knobs (environment), for a quicker or a fuller run:
//   BENCH_CLAIMS=N          claims of each kind per churn rate; by default as many as fit the 10-minute
//                           budget after the other sections, at most 200 (every 10th has a
//                           conflict injected); the count used is in results.json (bench.claimsPerRate)
//   BENCH_RATES=0,1,10,50   status writes per second on the claimed node
//   BENCH_PLAN=50:1,200:1,500:1   plan sizes and how many runs each (the median is reported); one run
//                           each by default: a 500-node plan alone takes minutes here (1000 sequential
//                           `talosctl read`s), so a run already is the sum of many process timings
//   BENCH_STARTUP_RUNS=10
//   BENCH_WASTED_SEED=10     seed of the wasted-reboots twin's timings
//   BENCH_CONVERGED=50,500   node counts of the converged run (the bundle with nothing to roll), 3 runs each
//   BENCH_ONLY=claim,perNode,plan,startup,wasted,preflight,gates,converged   (`parallel` is the 60-worker max-unavailable roll, about
//                           35 minutes, so it runs on its own: `npm run bench:parallel`, written to
//                           bench/results-parallel.{json,md}; BENCH_PARALLEL_NODES=60,
//                           BENCH_PARALLEL_SETTINGS=1,5,25%, BENCH_PARALLEL_SPEEDUP=6, BENCH_PARALLEL_POLL_MS=2000)
//
// Each section is its own file (bench/<section>.ts) exporting one bench function and its result type;
// a new section adds a file, one line in main() and its rows in evaluate().
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { repoRoot } from '../runner/runAction.js';
import { benchClaims, type ClaimRow } from './claim.js';
import { benchConverged, type ConvergedResult } from './converged.js';
import { machineInfo } from './lib.js';
import { benchPerNode, type PerNodeResult } from './perNode.js';
import { benchParallel, parallelTargets, type ParallelResult } from './parallel.js';
import { benchPlan, type PlanResult } from './plan.js';
import { benchPreflight, type PreflightResult } from './preflight.js';
import { benchGates, type GatesResult } from './gates.js';
import { planNotes, profileNotes, wastedNotes } from './notes.js';
import { benchStartup, type StartupResult } from './startup.js';
import { benchWasted, type WastedResult } from './wasted.js';

const BUDGET_MS = 10 * 60_000;
/** the claims end this long before the budget: margin for a busier machine, the table and the file */
const CLAIM_DEADLINE_MS = BUDGET_MS - 50_000;
const CLAIMS_WANTED = 200;
const DIST_LIMIT = 3_000_000;

function envList(name: string, fallback: string): string[] {
  return (process.env[name] ?? fallback)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

interface Target {
  section: string;
  metric: string;
  measured: string;
  target: string;
  /** null: shown for comparison, no target */
  pass: boolean | null;
}

async function main(): Promise<number> {
  const started = performance.now();
  const only = new Set(envList('BENCH_ONLY', 'claim,perNode,plan,startup,wasted,preflight,gates,converged'));
  const fixedClaims = process.env.BENCH_CLAIMS ? Number(process.env.BENCH_CLAIMS) : undefined;
  const rates = envList('BENCH_RATES', '0,1,10,50').map(Number);
  const planSizes = envList('BENCH_PLAN', '50:1,200:1,500:1').map((s) => {
    const [n, r] = s.split(':');
    return { nodes: Number(n), runs: Number(r ?? 1) };
  });
  const startupRuns = Number(process.env.BENCH_STARTUP_RUNS ?? 10);
  const progress = (msg: string) => console.error(`[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${msg}`);

  const machine = machineInfo();
  // the machine is shared: the load next to the figures says how busy it was
  const loadStart = loadavg().map((l) => Math.round(l * 100) / 100);
  progress(`load average (1/5/15 min): ${loadStart.join(' / ')}`);
  progress(`machine: ${machine.cpuCount} × ${machine.cpuModel}, Node ${machine.node}, kubectl ${machine.kubectl}`);

  const sections: Record<string, number> = {};
  const timed = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      sections[name] = Math.round(performance.now() - t0);
    }
  };

  let claim: ClaimRow[] | undefined;
  let perNode: PerNodeResult | undefined;
  let preflight: PreflightResult | undefined;
  let gates: GatesResult | undefined;
  let converged: ConvergedResult | undefined;
  let plan: PlanResult | undefined;
  let startup: StartupResult | undefined;
  let wasted: WastedResult | undefined;
  let parallel: ParallelResult | undefined;
  let claimsPerRate = 0;
  let claimPairMs: number | undefined;
  let claimsReason = '';
  // Start-up first (the most sensitive to a busy machine); the claims last, sized to the time left.
  if (only.has('startup')) startup = await timed('startup', () => benchStartup(startupRuns, progress));
  if (only.has('perNode')) perNode = await timed('perNode', () => benchPerNode(progress));
  if (only.has('preflight')) preflight = await timed('preflight', () => benchPreflight(progress));
  if (only.has('gates')) gates = await timed('gates', () => benchGates(progress));
  if (only.has('converged'))
    converged = await timed('converged', () => benchConverged(envList('BENCH_CONVERGED', '50,500').map(Number), 3, progress));
  if (only.has('parallel')) parallel = await timed('parallel', () => benchParallel(progress));
  if (only.has('plan')) plan = await timed('plan', () => benchPlan(planSizes, progress));
  if (only.has('wasted'))
    wasted = await timed('wasted', () =>
      benchWasted(progress, { seed: process.env.BENCH_WASTED_SEED ? Number(process.env.BENCH_WASTED_SEED) : undefined }),
    );
  if (only.has('claim')) {
    const c = await timed('claim', () =>
      benchClaims(
        rates,
        (pairMs) => {
          if (fixedClaims !== undefined) {
            claimsReason = 'set by BENCH_CLAIMS';
            return fixedClaims;
          }
          const left = CLAIM_DEADLINE_MS - (performance.now() - started);
          // churn makes a pair dearer (the twin writes in this process): 20% headroom
          const fit = Math.floor(left / (rates.length * pairMs * 1.2) / 10) * 10;
          const n = Math.max(20, Math.min(CLAIMS_WANTED, fit));
          claimsReason =
            n < CLAIMS_WANTED
              ? `${n} instead of the targeted ${CLAIMS_WANTED}: at ${Math.round(pairMs)} ms per claim pair, ${CLAIMS_WANTED} per rate would not fit the 10-minute budget after the other sections (${Math.round(left / 1000)} s were left)`
              : `the targeted ${CLAIMS_WANTED}`;
          return n;
        },
        progress,
      ),
    );
    claim = c.rows;
    claimsPerRate = c.claimsPerRate;
    claimPairMs = c.pairMs;
  }
  if (perNode) perNode.notes = profileNotes(perNode);
  const planFindings = plan ? planNotes(plan) : [];

  const wallMs = Math.round(performance.now() - started);
  const targets = evaluate({
    claim,
    perNode,
    preflight,
    gates,
    converged,
    plan,
    startup,
    wasted,
    wallMs,
    claimsPerRate,
    withParallel: !!parallel,
  });
  if (parallel) targets.push(...parallelTargets(parallel));

  const results = {
    machine,
    bench: {
      wallMs,
      budgetMs: BUDGET_MS,
      sectionsMs: sections,
      claimsPerRate,
      claimsPerRateReason: claimsReason,
      claimPairMs,
      claimsNote:
        `${claimsPerRate} claims of each kind per rate, interleaved (action, one-shot alternately first); every 10th of each kind had a concurrent cordon injected between its read and its PATCH, ` +
        'so successRate and meanAttempts are over the other (benign) claims and conflicts are counted apart. Latency runs from the start of the read to the claim landing (successful claims). The node is released between claims by a direct write to the twin (KubeSim.mutateNode).',
      claimImplementation:
        "claimNode from src/pipeline/claim.ts (the action's own claim) through the Kubectl adapter, called by bench/claimLoop.ts",
      planSizes,
      startupRuns,
      sections: [...only],
      loadAverage: { start: loadStart, end: loadavg().map((l) => Math.round(l * 100) / 100) },
    },
    claim: claim ?? [],
    perNode: perNode ?? null,
    preflight: preflight ?? null,
    gates: gates ?? null,
    converged: converged?.rows ?? [],
    plan: plan?.rows ?? [],
    planDetail: plan
      ? {
          perNodeReads: plan.perNodeReads,
          perNodeReadKinds: plan.perNodeReadKinds,
          growthExponent: plan.growthExponent,
          processGrowthExponent: plan.processGrowthExponent,
          marginalTalosctlPerNode: marginal(plan),
          notes: planFindings,
        }
      : null,
    startupMs: startup?.startupMs ?? null,
    distBytes: startup?.distBytes ?? null,
    startup: startup ?? null,
    wasted: wasted ?? null,
    parallel: parallel ?? null,
    targets,
  };
  // The parallel roll alone (npm run bench:parallel) keeps its own files, so neither run overwrites the other's figures.
  const stem = only.size === 1 && only.has('parallel') ? 'results-parallel' : 'results';
  const out = join(repoRoot, 'bench', `${stem}.json`);
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);

  const loadEnd = loadavg().map((l) => l.toFixed(2));
  const machineLine = `${machine.cpuCount} × ${machine.cpuModel}, Node ${machine.node}, kubectl ${machine.kubectl}, ${machine.date}, load average ${loadStart.join(' / ')} at the start, ${loadEnd.join(' / ')} at the end`;
  const table = printTable(targets, {
    machineLine,
    claimsPerRate,
    claimsReason,
    wallMs,
    perNode,
    plan,
    startup,
    planFindings,
    wastedFindings: wasted ? wastedNotes(wasted) : [],
  });
  writeFileSync(join(repoRoot, 'bench', `${stem}.md`), await formatMarkdown(table));
  console.log(`\nwritten: ${out}`);
  return 0;
}

function marginal(plan: PlanResult): number | null {
  const r = plan.rows;
  if (r.length < 2) return null;
  const a = r[r.length - 2]!;
  const b = r[r.length - 1]!;
  return Math.round(((b.talosctlProcesses - a.talosctlProcesses) / (b.nodes - a.nodes)) * 1000) / 1000;
}

const pct = (v: number | null | undefined) => (v === null || v === undefined ? '–' : `${(v * 100).toFixed(v === 1 ? 0 : 1)}%`);
const ms = (v: number | null | undefined) => (v === null || v === undefined ? '–' : `${v} ms`);

function evaluate(r: {
  claim?: ClaimRow[];
  perNode?: PerNodeResult;
  preflight?: PreflightResult;
  gates?: GatesResult;
  converged?: ConvergedResult;
  plan?: PlanResult;
  startup?: StartupResult;
  wasted?: WastedResult;
  wallMs: number;
  claimsPerRate: number;
  /** the parallel roll ran: it alone takes over half an hour, so the 10-minute budget is not judged */
  withParallel: boolean;
}): Target[] {
  const t: Target[] = [];
  for (const row of r.claim ?? []) {
    const a = row.action;
    const o = row.oneShot;
    const sec = `claim @${row.writesPerSecond}/s`;
    t.push({
      section: sec,
      metric: `action: success within default attempts (${a.claims} claims)`,
      measured: pct(a.successRate),
      target: '100%',
      pass: a.successRate === 1,
    });
    t.push({
      section: sec,
      metric: 'action: mean attempts',
      measured: String(a.meanAttempts),
      target: '≤ 1.01',
      pass: a.meanAttempts !== null && a.meanAttempts <= 1.01,
    });
    t.push({
      section: sec,
      metric: 'action: p50 / p95 latency',
      measured: `${ms(a.p50Ms)} / ${ms(a.p95Ms)}`,
      target: '(shown)',
      pass: null,
    });
    t.push({
      section: sec,
      metric: 'one-shot RV claim: success / mean attempts',
      measured: `${pct(o.successRate)} / ${o.meanAttempts}`,
      target: '(beside)',
      pass: null,
    });
    t.push({
      section: sec,
      metric: 'one-shot RV claim: p50 / p95 latency',
      measured: `${ms(o.p50Ms)} / ${ms(o.p95Ms)}`,
      target: '(beside)',
      pass: null,
    });
    t.push({
      section: sec,
      metric: `genuine conflicts refused (action ${a.conflictsRefused}/${a.conflictsInjected}, one-shot ${o.conflictsRefused}/${o.conflictsInjected})`,
      measured: `${row.conflictsRefused}/${row.conflictsInjected}`,
      target: 'all',
      pass: row.conflictsInjected > 0 && row.conflictsRefused === row.conflictsInjected,
    });
  }
  if (r.preflight) {
    const p = r.preflight;
    t.push({
      section: 'per run',
      metric: `pre-flight check of one registry host, token flow + manifest HEAD (${p.withImage.requests} requests on loopback, 0 processes; once per run, never per node)`,
      measured: ms(p.withImage.ms),
      target: '(shown)',
      pass: null,
    });
    t.push({
      section: 'per run',
      metric: `pre-flight check, login only (${p.loginOnly.requests} requests; no preflight-image or verify-image)`,
      measured: ms(p.loginOnly.ms),
      target: '(shown)',
      pass: null,
    });
  }
  if (r.gates) {
    const g = r.gates;
    t.push({
      section: 'per node start',
      metric: `health-gate check: ${g.gates} gates (storage + one CEL gate) over ${g.objects} objects, ${g.checkProcesses} kubectl process (median of ${g.runs}); never in a run with nothing to roll`,
      measured: ms(g.checkMs),
      target: '(shown)',
      pass: null,
    });
    t.push({
      section: 'per run',
      metric: `health gates' discovery, kubectl api-resources (${g.discoveryProcesses} process, once per run that rolls)`,
      measured: ms(g.discoveryMs),
      target: '(shown)',
      pass: null,
    });
  }
  for (const row of r.converged?.rows ?? []) {
    const big = row.nodes === 500;
    const section = `converged ${row.nodes} nodes`;
    t.push({
      section,
      metric: `the bundle, nothing to roll (result ${row.result}), pre-flight on: wall time from spawn to exit, median of ${row.runs} (its kubectl proxy lived ${ms(row.childrenMs)} of it)`,
      measured: ms(row.wallMs),
      target: big ? '≤ 1000 ms' : '(shown)',
      pass: big ? row.wallMs !== null && row.wallMs <= 1000 : null,
    });
    t.push({
      section,
      metric: `processes: the bundle + ${row.children.join(', ')}; requests over the channel (${row.requestPaths.join(', ')})`,
      measured: `${row.processes}; ${row.requests}`,
      target: '≤ 2; (shown)',
      pass: row.processes <= 2,
    });
    t.push({
      section,
      metric: 'writes seen by the apiserver twin (node, Lease, Event); Talos API calls',
      measured: `${row.writes}; ${row.talosApiCalls}`,
      target: '0; 0',
      pass: row.writes === 0 && row.talosApiCalls === 0,
    });
    t.push({
      section,
      metric: 'requests seen by the registry twin',
      measured: String(row.registryRequests),
      target: '0',
      pass: row.registryRequests === 0,
    });
  }
  if (r.perNode) {
    t.push({
      section: 'per run',
      metric: `processes of the run outside the nodes: the channel's \`kubectl proxy\` (${r.perNode.runLevel.commands.map((c) => c.split(' --')[0]).join(', ') || 'none'}); its requests outside the nodes (listing, Lease, the run's Event)`,
      measured: `${r.perNode.runLevel.processes}; ${r.perNode.runLevelRequests}`,
      target: '1; (shown)',
      pass: r.perNode.runLevel.processes <= 1,
    });
    for (const kind of ['reboot', 'skip'] as const) {
      const k = r.perNode[kind];
      t.push({
        section: `per node (${kind})`,
        metric: `own time, waits excluded (median of ${k.nodes})`,
        measured: ms(k.ownMs),
        target: '≤ 1000 ms',
        pass: k.ownMs !== null && k.ownMs <= 1000,
      });
      t.push({
        section: `per node (${kind})`,
        metric: `processes started for the node (kubectl ${k.kubectl} + talosctl ${k.talosctl}; Lease commands ${k.leaseProofs}): every read and write is a request over the run's one channel`,
        measured: String(k.processesWithLeaseProofs),
        target: '0',
        pass: k.processesWithLeaseProofs === 0,
      });
      t.push({
        section: `per node (${kind})`,
        metric: `HTTP requests, as the apiserver twin counted them by the action's User-Agent, wait for Ready as one poll (${k.requestsByOp
          .filter((o) => (o.count ?? 0) > 0)
          .map((o) => `${o.op} ${o.count}`)
          .join(', ')}; all polls: ${k.requestsIncludingWaits}; outside the drain, reboot and Ready: ${k.requestsExcludingWaitSteps})`,
        measured: String(k.requests),
        target: '(shown)',
        pass: null,
      });
    }
  }
  if (r.plan) {
    for (const row of r.plan.rows) {
      const big = row.nodes === 500;
      t.push({
        section: `plan ${row.nodes} nodes`,
        metric: `wall time (median of ${row.runs})`,
        measured: ms(row.wallMs),
        target: big ? '< 15000 ms' : '(shown)',
        pass: big ? row.wallMs !== null && row.wallMs < 15_000 : null,
      });
      t.push({
        section: `plan ${row.nodes} nodes`,
        metric: `talosctl processes (through talosctl, one call per node per read: ${row.talosctlProcessesOnePerNode})`,
        measured: String(row.talosctlProcesses),
        target: '0',
        pass: row.talosctlProcesses === 0,
      });
      t.push({
        section: `plan ${row.nodes} nodes`,
        metric: `kubectl processes; Talos reads over API connections`,
        measured: `${row.kubectlProcesses}; ${row.talosReads} over ${row.apiConnections}`,
        target: '(shown)',
        pass: null,
      });
    }
    const m = marginal(r.plan);
    if (m !== null && r.plan.perNodeReads > 0) {
      const limit = r.plan.perNodeReads * 0.1;
      t.push({
        section: 'plan growth',
        metric: `talosctl processes per added node, ${r.plan.rows.at(-2)!.nodes}→${r.plan.rows.at(-1)!.nodes} (one per node: ${r.plan.perNodeReads}; exponent ${r.plan.growthExponent})`,
        measured: String(m),
        target: `sub-linear: ≤ ${limit.toFixed(1)} (10% of one per node)`,
        pass: m <= limit,
      });
    }
  }
  if (r.wasted) {
    const w = r.wasted;
    t.push({
      section: `wasted reboots (${w.nodes} nodes)`,
      metric: `provably current nodes rebooted anyway (${w.wastedReboots} of ${w.currentAtDecision}; twin truth, seed ${w.seed})`,
      measured: pct(w.wastedShare),
      target: '0%',
      pass: w.wastedReboots === 0,
    });
    t.push({
      section: `wasted reboots (${w.nodes} nodes)`,
      metric: `skips of nodes whose containerd had not loaded the credential (${w.correctSkips} correct skips, ${w.neededReboots} needed reboots)`,
      measured: String(w.unsafeSkips),
      target: '0',
      pass: w.unsafeSkips === 0,
    });
  }
  if (r.startup) {
    t.push({
      section: 'start-up',
      metric: `spawn → first stdout line (median of ${r.startup.startupRunsMs.length}; bare node: ${ms(r.startup.nodeBaselineMs)})`,
      measured: ms(r.startup.startupMs),
      target: '< 300 ms',
      pass: r.startup.startupMs !== null && r.startup.startupMs < 300,
    });
    t.push({
      section: 'size',
      metric: `dist/ bytes (${((r.startup.distBytes ?? 0) / 1024 / 1024).toFixed(2)} MiB)`,
      measured: String(r.startup.distBytes),
      target: `< ${DIST_LIMIT} (3 MB)`,
      pass: r.startup.distBytes !== null && r.startup.distBytes < DIST_LIMIT,
    });
  }
  t.push({
    section: 'bench',
    metric: `whole run (${r.claimsPerRate} claims per rate)`,
    measured: ms(r.wallMs),
    target: r.withParallel ? '(shown; the parallel roll is outside the budget)' : '< 600000 ms',
    pass: r.withParallel ? null : r.wallMs < BUDGET_MS,
  });
  return t;
}

/** The project's Prettier style, so the generated file passes `npm run format:check`. */
async function formatMarkdown(md: string): Promise<string> {
  try {
    const prettier = await import('prettier');
    const file = join(repoRoot, 'bench', 'results.md');
    const options = (await prettier.resolveConfig(file)) ?? {};
    return await prettier.format(md, { ...options, filepath: file });
  } catch {
    return md;
  }
}

/** Prints the table (and the profile) and returns the same as Markdown, for bench/results.md. */
function printTable(
  targets: Target[],
  ctx: {
    machineLine: string;
    claimsPerRate: number;
    claimsReason: string;
    wallMs: number;
    perNode?: PerNodeResult;
    plan?: PlanResult;
    startup?: StartupResult;
    planFindings: string[];
    wastedFindings: string[];
  },
): string {
  const rows = targets.map((t) => [t.section, t.metric, t.measured, t.target, t.pass === null ? '' : t.pass ? 'PASS' : 'MISS']);
  const head = ['', 'metric', 'measured', 'target', ''];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  const title = `Benchmarks against the cluster twin (real kubectl, the Talos API, no talosctl on PATH), ${ctx.machineLine}`;
  const claims = ctx.claimsPerRate
    ? `Claims: ${ctx.claimsPerRate} of each kind per rate (${ctx.claimsReason}); every 10th with a concurrent cordon injected.`
    : '';
  const tally = `${targets.filter((t) => t.pass === true).length} PASS, ${targets.filter((t) => t.pass === false).length} MISS`;
  console.log(`\n${title}`);
  if (claims) console.log(claims);
  console.log(line(head));
  console.log(widths.map((w) => '─'.repeat(w)).join('  '));
  let prev = '';
  const md = [`${title}.`, '', ...(claims ? [claims, ''] : []), '| | metric | measured | target | |', '|---|---|---|---|---|'];
  for (const r of rows) {
    const shown = [r[0] === prev ? '' : r[0]!, ...r.slice(1)];
    console.log(line(shown));
    md.push(`| ${shown.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`);
    prev = r[0]!;
  }
  console.log(`\n${tally}`);
  md.push('', tally);
  const sections: Array<[string, string[]]> = [
    ['Profile of the cost per node', ctx.perNode?.notes ?? []],
    ['Plan at scale', ctx.planFindings],
    ['Wasted reboots', ctx.wastedFindings],
  ];
  for (const [name, notes] of sections) {
    if (!notes.length) continue;
    console.log(`\n${name}:`);
    md.push('', `${name}:`, '');
    for (const n of notes) {
      console.log(`- ${n}`);
      md.push(`- ${n}`);
    }
  }
  return `${md.join('\n')}\n`;
}

process.exitCode = await main();
