// `npm run demo`: start the cluster twin, run the BUNDLED action on it exactly as a GitHub runner
// would (INPUT_* variables, GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, GITHUB_STATE, RUNNER_TEMP; the
// real kubectl; the fake talosctl first on PATH), and print what a user would see.
// The options: `npm run demo -- --help` (demo/options.ts); the whole story: docs/demo.md.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addDefaultNodes, describeNodes, SimCluster } from '../sim/cluster.js';
import { repoRoot, runAction, type ActionRun } from '../runner/runAction.js';
import { SCENARIOS } from './scenarios.js';
import type { DrainForecast } from '../src/core/model/record.js';
import { forecastLines } from '../src/report/forecast.js';
import { configChangesOf, timelineOf } from './summaryText.js';
import { actionInputNames, helpText, parseDemoArgs, UsageError, type DemoOptions } from './options.js';
import { lineByLine, ProgressPrinter } from './progress.js';
import { firstSignal, keepLines } from './keep.js';

async function main(): Promise<number> {
  let opts: DemoOptions | 'help';
  try {
    opts = parseDemoArgs(process.argv.slice(2), SCENARIOS, actionInputNames());
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`demo: ${e.message}\nrun \`npm run demo -- --help\` for the options and scenarios`);
    return 2;
  }
  if (opts === 'help') {
    process.stdout.write(helpText(SCENARIOS));
    return 0;
  }
  const bundle = join(repoRoot, 'dist', 'index.js');
  if (!existsSync(bundle)) {
    console.error('dist/index.js is missing: run `npm run build` first');
    return 2;
  }
  const scenario = SCENARIOS[opts.scenario];
  const total = opts.nodes;

  // Ctrl-C or SIGTERM at any moment: the action's run is cancelled (SIGINT, as a runner cancels a
  // step), it gives back what it held (its post step what it could not), and the twin is shut down below.
  const interrupt = firstSignal();
  // Everything the demo writes (the runs' directories, a scenario's files) under one directory: a
  // kept twin's shutdown removes it; without --keep the job summary stays to be read.
  const session = mkdtempSync(join(tmpdir(), 'rar-demo-'));
  process.env.RAR_RUNNER_TMP = session;
  // Durations in a cluster's proportions (a reboot 90 s, a drain's pod grace 30 s), 60 times faster;
  // the boot itself as Talos runs it (sim/talos/timing.ts): a rebooted node answers with its new boot
  // id 0.3–1.5 s before machined has written the CRI files of its rebuilt /etc, and before cri runs.
  // The action polls at its own default interval, as on a runner.
  const cluster = await SimCluster.start({ timeScale: 1 / 60 });
  const zoneKey = opts.topologyKey;
  const stopChurn: Array<() => void> = [];
  const stopAsync: Array<() => Promise<void>> = [];
  const scenarioDir = mkdtempSync(join(session, 'scenario-'));
  try {
    addDefaultNodes(cluster, { mixedVersions: true });
    // extra workers alternate between Talos 1.13 and 1.14, like a cluster mid-upgrade
    for (let i = 4; total !== undefined && i <= total - 3; i++) {
      cluster.addNode({
        name: `worker-${i}`,
        role: 'worker',
        version: i % 2 === 0 ? '1.14' : '1.13',
        labels: zoneKey ? { [zoneKey]: `zone-${'abc'[i % 3]}` } : undefined,
      });
    }
    // the scenario's own lines (what the twin does on its side) print among the action's
    stopChurn.push(...scenario.setup(cluster, (line) => console.log(`    (the twin: ${line})`)));
    const prepared = await scenario.prepare?.(cluster, scenarioDir);
    if (prepared) stopAsync.push(prepared.stop);

    console.log(
      `cluster twin: ${cluster.kube.url} (kubectl ${process.env.KUBECTL ?? 'on PATH'}), Talos API at ${cluster.talos.endpoint}; talosctl on PATH: ${talosctlOnPath(cluster.env().PATH)}`,
    );
    console.log(`scenario "${opts.scenario}": ${scenario.description}`);
    const inputs: Record<string, string> = {
      mode: opts.mode,
      'auth-patch': cluster.writeAuthPatch(),
      revision: '2026-11-30.1',
      'drain-timeout': '60s',
      'ready-timeout': '90s',
      'cri-restart-wait': '20s',
      'max-unavailable': opts.maxUnavailable,
      ...(zoneKey ? { 'topology-key': zoneKey } : {}),
      // the twin's auth patch names ghcr.io, which the demo cannot reach: the pre-flight check is
      // shown by --scenario bad-credential, against the registry twin
      preflight: 'false',
      ...scenario.inputs,
      ...prepared?.inputs,
      ...opts.inputs,
    };
    if (Object.keys(opts.inputs).length > 0)
      console.log(
        `inputs from --input: ${Object.entries(opts.inputs)
          .map(([k, v]) => `${k}=${v}`)
          .join(', ')}`,
      );
    console.log(`running node dist/index.js (mode ${inputs.mode}) …\n`);
    const started = Date.now();
    const printer = new ProgressPrinter((l) => console.log(l), opts.verbose);
    const runOptions: Parameters<typeof runAction>[0] = {
      inputs,
      env: { ...cluster.env(), RAR_RELIST_PAUSE_MS: '1000' },
      onStdout: lineByLine((line) => printer.line(line)),
      killOn: interrupt.signal,
    };
    const run = await runAction(runOptions);
    printer.end();
    // The post step runs in a fresh process with the state the main step saved, as on a runner.
    await runAction({ entry: join(repoRoot, 'dist', 'cleanup.js'), inputs: {}, env: cluster.env(), state: run.state });
    const exitCode = report(cluster, run, inputs, opts.keep, started);
    if (scenario.rerun && !(await settledYet(interrupt.signal))) {
      scenario.rerun.setup(cluster);
      console.log(`\n── rerun: ${scenario.rerun.description}`);
      const again = await runAction({ ...runOptions, onStdout: undefined });
      await runAction({ entry: join(repoRoot, 'dist', 'cleanup.js'), inputs: {}, env: cluster.env(), state: again.state });
      const d = JSON.parse(again.outputs.decisions ?? '[]') as Array<{ name: string; outcome: string }>;
      console.log(
        `   exit code ${again.exitCode}, result ${again.outputs.result}; decisions: ${d.map((x) => `${x.name}=${x.outcome}`).join(', ') || '[]'}`,
      );
      for (const line of describeNodes(cluster)) console.log(`  ${line}`);
    }
    if (opts.keep && !(await settledYet(interrupt.signal))) {
      console.log('\n── the twin is kept up');
      for (const line of keepLines(cluster)) console.log(line ? `   ${line}` : '');
      const signal = await interrupt.signal;
      console.log(`\n${signal}: shutting the twin down`);
    }
    return exitCode;
  } finally {
    for (const s of stopChurn) s();
    for (const s of stopAsync) await s();
    await cluster.stop();
    rmSync(scenarioDir, { recursive: true, force: true });
    if (opts.keep) rmSync(session, { recursive: true, force: true });
    interrupt.dispose();
  }
}

/** Whether `p` has settled by now (a signal already came). */
async function settledYet(p: Promise<unknown>): Promise<boolean> {
  const pending = Symbol('pending');
  return (await Promise.race([p, Promise.resolve(pending)])) !== pending;
}

/** Everything printed after the run: the run's numbers, annotations, outputs, the cluster; the run's exit code. */
function report(cluster: SimCluster, run: ActionRun, inputs: Record<string, string>, keep: boolean, started: number): number {
  console.log(
    `\n── finished in ${((Date.now() - started) / 1000).toFixed(1)} s, exit code ${run.exitCode}; at most ${run.outputs['in-flight-max']} node(s) in flight (max-unavailable ${inputs['max-unavailable']})`,
  );
  // With a client certificate in the talosconfig nothing needs talosctl: the twin's log proves none ran.
  console.log(`   talosctl processes in the twin's log: ${cluster.talos.commands.filter((x) => x.command !== '').length}`);
  // what the twin saw written: a run stopped by the pre-flight check wrote nothing at all
  const lease = cluster.kube.lease('kube-system', 'registry-auth-rollout') ? 'created' : 'never created';
  console.log(`   run Lease: ${lease}; writes to the apiserver: ${cluster.kube.mutatingRequests().length}`);
  console.log('\n── annotations');
  for (const a of run.annotations) console.log(`  ${a.kind.padEnd(7)} ${a.title ? `${a.title}: ` : ''}${a.message.split('\n')[0]}`);
  console.log('\n── outputs');
  for (const [k, v] of Object.entries(run.outputs)) {
    if (k === 'decisions') {
      const d = JSON.parse(v) as Array<{ name: string; outcome: string }>;
      console.log(`  decisions: ${d.map((x) => `${x.name}=${x.outcome}`).join(', ') || '[]'}`);
    } else console.log(`  ${k}: ${v}`);
  }
  console.log('\n── cluster afterwards');
  for (const line of describeNodes(cluster)) console.log(`  ${line}`);
  const changes = configChangesOf(run.summary);
  if (changes.length > 0) {
    console.log("\n── machine config changes (the action's own change list, as the job summary shows it)");
    for (const c of changes) {
      if (c.lines.length === 1) console.log(`  ${c.node}: ${c.lines[0]}`);
      else for (const [i, l] of c.lines.entries()) console.log(i === 0 ? `  ${c.node}: ${l}` : `  ${' '.repeat(c.node.length)}  ${l}`);
    }
  }
  const forecasts = JSON.parse(run.outputs.decisions ?? '[]') as Array<{ name: string; drainForecast?: DrainForecast }>;
  if (forecasts.some((d) => d.drainForecast)) {
    console.log('\n── drain forecast (dry-run evictions: nothing was evicted), as the job summary shows it');
    for (const d of forecasts) for (const l of d.drainForecast ? forecastLines(d.drainForecast) : []) console.log(`  ${d.name}: ${l}`);
  }
  const timeline = timelineOf(run.summary);
  if (timeline) {
    console.log('\n── timeline of the roll (as the job summary shows it)');
    for (const line of timeline.split('\n')) console.log(`  ${line}`);
  }
  console.log(
    `\n── job summary (HTML, ${run.summary.length} bytes): ${run.summaryPath}${keep ? ' (removed when the twin is shut down)' : ''}`,
  );
  return run.exitCode ?? 1;
}

/** Where `talosctl` resolves on `path`, as a shell would find it ("none" when it does not). */
function talosctlOnPath(path: string): string {
  const found = spawnSync('sh', ['-c', 'command -v talosctl'], { env: { PATH: path }, encoding: 'utf8' });
  return found.stdout.trim() || 'none';
}

process.exitCode = await main();
