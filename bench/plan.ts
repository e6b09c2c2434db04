// 3. Plan at scale: `mode: plan` through runRollout on N workers (half current), wall time and
// processes, with the Talos client opened as src/action/main.ts opens it (reads over the API, one
// connection). The per-node cost of "one talosctl call per node per read" is measured, not assumed: a
// plan on ONE node read through talosctl (the CLI fallback path) shows how many talosctl calls one
// node's evidence takes; times N is what reading node by node through the CLI would cost.
import { performance } from 'node:perf_hooks';
import type { CommandRecord } from '../src/adapters/exec.js';
import { join } from 'node:path';
import { Talosctl } from '../src/adapters/talos/cli/talosctl.js';
import type { TalosClient } from '../src/adapters/types.js';
import { runRollout } from '../src/pipeline/run.js';
import { SimCluster } from '../sim/cluster.js';
import { actionRollout, commandKind, median, toolOf, round, withClusterEnv, withTalosWrapped } from './lib.js';

export interface PlanRow {
  nodes: number;
  /** median over `runs` */
  wallMs: number | null;
  talosctlProcesses: number;
  talosctlProcessesOnePerNode: number;
  kubectlProcesses: number;
  /** TLS connections the run opened to the Talos API (one client connection carries every read) */
  apiConnections: number;
  /** calls of the Talos client's read methods (each one or a few gRPC calls on that connection) */
  talosReads: number;
  runs: number;
  wallMsRuns: number[];
  /** talosctl processes per command kind, in one run */
  talosctlByKind: Record<string, number>;
  /** summed duration of the `talosctl read` processes (they run one after another) */
  readMs: number;
  planned: { reboot: number; skip: number };
}

export interface PlanResult {
  rows: PlanRow[];
  /** talosctl processes of a plan on one node read through talosctl (the CLI path): the per-node reads */
  perNodeReads: number;
  perNodeReadKinds: Record<string, number>;
  /** log(processes ratio) / log(nodes ratio) between the smallest and the largest size: 1 is linear */
  growthExponent: number | null;
  /** the same over all child processes (kubectl + talosctl): 0 is a constant count */
  processGrowthExponent: number | null;
}

async function planOnce(
  cluster: SimCluster,
  opts: { cli?: boolean } = {},
): Promise<{
  wallMs: number;
  commands: CommandRecord[];
  records: Awaited<ReturnType<typeof runRollout>>['records'];
  apiConnections: number;
  talosReads: number;
}> {
  const d = await actionRollout(cluster, { mode: 'plan' });
  const commands: CommandRecord[] = [];
  d.runner.onCommand((c) => commands.push(c));
  // the CLI path by the fake talosctl's own path: the twin with the API puts no talosctl on PATH
  const cli = () => new Talosctl({ runner: d.runner, binary: join(cluster.talos.binDir, 'talosctl') });
  let talosReads = 0;
  const counted = (base: TalosClient): TalosClient =>
    new Proxy(base, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          talosReads++;
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  const deps = opts.cli ? { ...d.deps, openTalos: undefined, talos: counted(cli()) } : withTalosWrapped(d.deps, counted);
  const connectionsBefore = cluster.talos.apiConnections;
  const t0 = performance.now();
  const res = await runRollout(deps).finally(() => d.close());
  const wallMs = performance.now() - t0;
  if (res.result !== 'planned') throw new Error(`plan did not complete: ${res.result} ${res.error?.message ?? ''}`);
  return { wallMs, commands, records: res.records, apiConnections: cluster.talos.apiConnections - connectionsBefore, talosReads };
}

function byKind(commands: CommandRecord[], tool: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of commands) {
    if (toolOf(c.command) !== tool) continue;
    const k = commandKind(c.command);
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

export async function benchPlan(sizes: Array<{ nodes: number; runs: number }>, progress: (msg: string) => void): Promise<PlanResult> {
  const withCluster = async <T>(n: number, fn: (c: SimCluster) => Promise<T>): Promise<T> => {
    // Kubelet heartbeats every 60 s: the apiserver twin runs in this process and must not steal the CPU.
    const cluster = await SimCluster.start({ heartbeatMs: 60_000 });
    try {
      for (let i = 1; i <= n; i++) cluster.addNode({ name: `w-${String(i).padStart(3, '0')}`, role: 'worker', current: i % 2 === 0 });
      return await withClusterEnv(cluster, () => fn(cluster));
    } finally {
      await cluster.stop();
    }
  };

  const one = await withCluster(1, (c) => planOnce(c, { cli: true }));
  const perNodeReadKinds = byKind(one.commands, 'talosctl');
  const perNodeReads = one.commands.filter((c) => toolOf(c.command) === 'talosctl').length;

  const rows: PlanRow[] = [];
  for (const size of sizes) {
    const row = await withCluster(size.nodes, async (c) => {
      const runs: Array<Awaited<ReturnType<typeof planOnce>>> = [];
      for (let r = 0; r < size.runs; r++) runs.push(await planOnce(c));
      const last = runs[runs.length - 1]!;
      const talos = last.commands.filter((x) => toolOf(x.command) === 'talosctl');
      return {
        nodes: size.nodes,
        wallMs: round(median(runs.map((x) => x.wallMs))),
        talosctlProcesses: talos.length,
        talosctlProcessesOnePerNode: perNodeReads * size.nodes,
        kubectlProcesses: last.commands.filter((x) => x.command.startsWith('kubectl')).length,
        apiConnections: last.apiConnections,
        talosReads: last.talosReads,
        runs: size.runs,
        wallMsRuns: runs.map((x) => Math.round(x.wallMs)),
        talosctlByKind: byKind(last.commands, 'talosctl'),
        readMs: talos.filter((x) => commandKind(x.command) === 'talosctl read').reduce((a, x) => a + x.durationMs, 0),
        planned: {
          reboot: last.records.filter((r) => r.outcome === 'planned-reboot').length,
          skip: last.records.filter((r) => r.outcome === 'planned-skip').length,
        },
      } satisfies PlanRow;
    });
    rows.push(row);
    progress(
      `plan ${row.nodes} nodes: ${row.wallMs} ms, ${row.talosctlProcesses} talosctl + ${row.kubectlProcesses} kubectl processes (talosctl per node on the CLI path: ${row.talosctlProcessesOnePerNode}); ${row.talosReads} Talos reads over ${row.apiConnections} API connection(s)`,
    );
  }
  const a = rows[0];
  const b = rows[rows.length - 1];
  const growthExponent =
    a && b && b.nodes > a.nodes ? round(Math.log(b.talosctlProcesses / a.talosctlProcesses) / Math.log(b.nodes / a.nodes), 3) : null;
  const procs = (r: PlanRow) => r.talosctlProcesses + r.kubectlProcesses;
  const processGrowthExponent =
    a && b && b.nodes > a.nodes && procs(a) > 0 ? round(Math.log(procs(b) / procs(a)) / Math.log(b.nodes / a.nodes), 3) : null;
  return { rows, perNodeReads, perNodeReadKinds, growthExponent, processGrowthExponent };
}
