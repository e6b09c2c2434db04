// Several workers at once: a 60-worker roll on the twin, every worker needing a reboot, with
// max-unavailable 1, 5 and 25%. Per setting: the wall time, the speed-up against 1, and the peak
// number of nodes out, counted from the TWIN's own node writes (a node is out while it is cordoned
// and carries the owner annotation), never from what the action reports.
// The twin's durations keep a cluster's proportions (sim/cluster.ts REALISTIC_MS: a 90 s reboot, a
// 30 s pod grace in the drain), scaled down by 1/BENCH_PARALLEL_SPEEDUP (default 6: the serial roll
// alone takes about 25 minutes); the action's own processes are never scaled, so they weigh about
// six times more against a reboot here than on a cluster, and with k nodes starting together they
// queue for the machine's cores: the speed-up measured here is a floor. The CPU the roll used is
// measured beside it, with the least wall time that CPU allows, so a miss can be told apart: the
// scheduler leaving slots idle, or the machine.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { resolveMaxUnavailable } from '../src/core/config.js';
import { runRollout } from '../src/pipeline/run.js';
import { SimCluster } from '../sim/cluster.js';
import { outOverTime } from '../sim/kube/index.js';
import { actionRollout, withClusterEnv } from './lib.js';

export interface ParallelRow {
  setting: string;
  /** max-unavailable resolved against the workers */
  k: number;
  wallMs: number;
  speedUp: number | null;
  /** speed-up if nothing but the waves counted: workers / ceil(workers / k) */
  idealSpeedUp: number;
  /** nodes out at once, from the twin's writes */
  peakOut: number;
  rebooted: number;
  result: string;
  /**
   * CPU seconds the roll used: this process (the action and the twin, which share it) plus every child
   * process it waited for (kubectl, talosctl), from /proc/self/stat; null where that cannot be read
   */
  cpuSeconds: number | null;
  /** the wall time the machine's cores allow at best: cpuSeconds / cores */
  cpuBoundMs: number | null;
  /** the wall time the waves allow at best: ceil(workers / k) × the mean node time at max-unavailable 1 */
  waveBoundMs: number | null;
}

export interface ParallelResult {
  workers: number;
  timeScale: number;
  pollIntervalMs: number;
  cores: number;
  rows: ParallelRow[];
}

export async function benchParallel(progress: (msg: string) => void): Promise<ParallelResult> {
  const workers = Number(process.env.BENCH_PARALLEL_NODES ?? 60);
  const timeScale = 1 / Number(process.env.BENCH_PARALLEL_SPEEDUP ?? 6);
  // the action runs with its own defaults: its poll interval is the action's setting, not a twin
  // timing, so it is not scaled (like the cost of its processes)
  const pollIntervalMs = Number(process.env.BENCH_PARALLEL_POLL_MS ?? 2000);
  const settings = (process.env.BENCH_PARALLEL_SETTINGS ?? '1,5,25%').split(',').map((s) => s.trim());
  const rows: ParallelRow[] = [];
  for (const setting of settings) {
    // boot gaps talosctl's second-rounded readings can order (as the e2e tests pin them): the
    // bench measures scheduling, not the read path
    const cluster = await SimCluster.start({ timeScale, seed: 7, bootGapMs: 8700, criRestartMs: 5000 });
    try {
      for (let i = 1; i <= workers; i++) {
        const name = `w-${String(i).padStart(3, '0')}`;
        cluster.addNode({ name, role: 'worker' });
        // one evictable pod per worker: the drain waits for its (scaled) termination grace
        cluster.kube.addPod({ namespace: 'default', name: `app-${i}`, nodeName: name, owner: { kind: 'ReplicaSet', name: 'app-1' } });
      }
      const composed = await actionRollout(
        cluster,
        { mode: 'apply', 'max-unavailable': setting, 'drain-timeout': '5m', 'ready-timeout': '5m' },
        { pollIntervalMs },
      );
      const d = composed.deps;
      const k = resolveMaxUnavailable(d.config.maxUnavailable, workers);
      progress(`parallel: ${workers} workers, max-unavailable ${setting} (${k}) …`);
      const cpu0 = cpuSecondsSoFar();
      const t0 = performance.now();
      const result = await withClusterEnv(cluster, () => runRollout(d)).finally(() => composed.close());
      const wallMs = Math.round(performance.now() - t0);
      const cpu1 = cpuSecondsSoFar();
      const cpuSeconds = cpu0 !== null && cpu1 !== null ? Math.round((cpu1 - cpu0) * 10) / 10 : null;
      if (process.env.BENCH_PARALLEL_STEPS)
        for (const r of result.records) progress(`${r.node}: ${r.steps.map((s) => `${s.name} ${s.durationMs}`).join(', ')}`);
      const rebooted = result.records.filter((r) => r.outcome === 'rebooted').length;
      const peakOut = outOverTime(cluster.kube.nodeWrites, d.keys.owner).peak;
      rows.push({
        setting,
        k,
        wallMs,
        speedUp: null,
        idealSpeedUp: Math.round((workers / Math.ceil(workers / k)) * 100) / 100,
        peakOut,
        rebooted,
        result: result.result,
        cpuSeconds,
        cpuBoundMs: cpuSeconds === null ? null : Math.round((cpuSeconds * 1000) / cores),
        waveBoundMs: null,
      });
      progress(
        `parallel: max-unavailable ${setting}: ${(wallMs / 1000).toFixed(1)} s, peak out ${peakOut}, ${rebooted} rebooted, ${result.result}${result.error ? ` (${result.error.message.split('\n')[0]})` : ''}`,
      );
    } finally {
      await cluster.stop();
    }
  }
  const base = rows.find((r) => r.k === 1)?.wallMs;
  for (const r of rows) {
    r.speedUp = base ? Math.round((base / r.wallMs) * 100) / 100 : null;
    r.waveBoundMs = base ? Math.round(Math.ceil(workers / r.k) * (base / workers)) : null;
  }
  return { workers, timeScale, pollIntervalMs, cores, rows };
}

const cores = cpus().length;

/** This process's CPU seconds plus those of its waited-for children (Linux /proc; null elsewhere). */
function cpuSecondsSoFar(): number | null {
  try {
    // fields after the command name: state is the 1st, so utime..cstime are the 12th..15th
    const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    return Number.isFinite(ticks) ? ticks / 100 : null;
  } catch {
    return null;
  }
}

/** The section's rows of the bench table (the shape of bench/run.ts's Target). */
export function parallelTargets(
  p: ParallelResult,
): Array<{ section: string; metric: string; measured: string; target: string; pass: boolean | null }> {
  const out = [];
  for (const r of p.rows) {
    const section = `parallel ${p.workers} workers @${r.setting}`;
    out.push({
      section,
      metric: `wall time (${r.rebooted} rebooted, result ${r.result})`,
      measured: `${(r.wallMs / 1000).toFixed(1)} s`,
      target: '(shown)',
      pass: null,
    });
    if (r.cpuSeconds !== null) {
      const bounds = [`cores: ${(r.cpuBoundMs! / 1000).toFixed(1)} s`];
      if (r.waveBoundMs !== null) bounds.push(`waves: ${(r.waveBoundMs / 1000).toFixed(1)} s`);
      out.push({
        section,
        metric: `CPU used (action + twin + child processes) on ${p.cores} cores; the least wall time it allows (${bounds.join(', ')})`,
        measured: `${r.cpuSeconds.toFixed(1)} s`,
        target: '(shown)',
        pass: null,
      });
    }
    out.push({
      section,
      metric: "peak nodes out (from the twin's writes)",
      measured: String(r.peakOut),
      target: `= ${r.k}`,
      pass: r.peakOut === r.k,
    });
    if (r.k === 1) continue;
    const speedUp = r.speedUp ?? 0;
    const atFive = r.setting === '5';
    out.push({
      section,
      metric: `speed-up vs max-unavailable 1 (ideal ${r.idealSpeedUp}×)`,
      measured: `${speedUp}×`,
      target: atFive ? '≥ 4×' : `≥ ${Math.round(r.idealSpeedUp * 0.8 * 100) / 100}× (within 20 % of ideal)`,
      pass: atFive ? speedUp >= 4 : speedUp >= r.idealSpeedUp * 0.8,
    });
  }
  return out;
}
