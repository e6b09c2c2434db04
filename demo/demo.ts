// `npm run demo`: start the cluster twin, run the BUNDLED action on it exactly as a GitHub runner
// would (INPUT_* variables, GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, GITHUB_STATE, RUNNER_TEMP; the
// real kubectl; the fake talosctl first on PATH), and print what a user would see.
//
//   npm run demo                       the default 6-node cluster, mode apply
//   npm run demo -- --mode plan        read-only (scenario plan: a drain forecast a PDB and a bare pod block)
//   npm run demo -- --nodes 12         a bigger cluster (3 control planes + N-3 workers)
//   npm run demo -- --scenario NAME    one of: default, plan, churn, pdb, quarantine, settle, etcd-alarm, etcd-orphan, talos-1.14, bad-credential
//   npm run demo -- --verbose          every command the action runs, with its duration
//   npm run demo -- --nodes 60 --max-unavailable 25%   several workers at once (the input of the same name)
//   npm run demo -- --topology-key topology.kubernetes.io/zone   workers spread over 3 zones, one zone out at a time
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { addDefaultNodes, describeNodes, SimCluster } from '../sim/cluster.js';
import { repoRoot, runAction } from '../runner/runAction.js';
import { SCENARIOS } from './scenarios.js';
import type { DrainForecast } from '../src/core/model/record.js';
import { forecastLines } from '../src/report/forecast.js';
import { configChangesOf, timelineOf } from './summaryText.js';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      mode: { type: 'string', default: 'apply' },
      nodes: { type: 'string' },
      // plan runs the `plan` scenario (a PDB allowing nothing, a bare pod) unless told otherwise
      scenario: { type: 'string' },
      verbose: { type: 'boolean', default: false },
      'max-unavailable': { type: 'string', default: '1' },
      'topology-key': { type: 'string' },
    },
  });
  values.scenario ??= values.mode === 'plan' ? 'plan' : 'default';
  const scenario = SCENARIOS[values.scenario];
  if (!scenario) {
    console.error(`unknown scenario "${values.scenario}"; known: ${Object.keys(SCENARIOS).join(', ')}`);
    return 2;
  }
  if (!['apply', 'plan', 'fences'].includes(values.mode!)) {
    console.error(`--mode must be apply, plan or fences (got "${values.mode}")`);
    return 2;
  }
  const total = values.nodes === undefined ? undefined : Number(values.nodes);
  if (total !== undefined && (!Number.isInteger(total) || total < 4 || total > 500)) {
    console.error(`--nodes must be a whole number from 4 to 500 (got "${values.nodes}")`);
    return 2;
  }
  const bundle = join(repoRoot, 'dist', 'index.js');
  if (!existsSync(bundle)) {
    console.error('dist/index.js is missing: run `npm run build` first');
    return 2;
  }

  // Durations in a cluster's proportions (a reboot 90 s, a drain's pod grace 30 s), 60 times faster;
  // the boot itself as Talos runs it (sim/talos/timing.ts): a rebooted node answers with its new boot
  // id 0.3–1.5 s before machined has written the CRI files of its rebuilt /etc, and before cri runs.
  // The action polls at its own default interval, as on a runner.
  const cluster = await SimCluster.start({ timeScale: 1 / 60 });
  const zoneKey = values['topology-key'];
  const stopChurn: Array<() => void> = [];
  const stopAsync: Array<() => Promise<void>> = [];
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
    stopChurn.push(...scenario.setup(cluster));
    const prepared = await scenario.prepare?.(cluster, mkdtempSync(join(tmpdir(), 'demo-')));
    if (prepared) stopAsync.push(prepared.stop);

    console.log(
      `cluster twin: ${cluster.kube.url} (kubectl ${process.env.KUBECTL ?? 'on PATH'}), Talos API at ${cluster.talos.endpoint}; talosctl on PATH: ${talosctlOnPath(cluster.env().PATH)}`,
    );
    console.log(`scenario "${values.scenario}": ${scenario.description}`);
    console.log(`running node dist/index.js (mode ${values.mode}) …\n`);
    const started = Date.now();
    const runOptions: Parameters<typeof runAction>[0] = {
      inputs: {
        mode: values.mode!,
        'auth-patch': cluster.writeAuthPatch(),
        revision: '2026-11-30.1',
        'drain-timeout': '60s',
        'ready-timeout': '90s',
        'cri-restart-wait': '20s',
        'max-unavailable': values['max-unavailable']!,
        ...(zoneKey ? { 'topology-key': zoneKey } : {}),
        // the twin's auth patch names ghcr.io, which the demo cannot reach: the pre-flight check is
        // shown by --scenario bad-credential, against the registry twin
        preflight: 'false',
        ...scenario.inputs,
        ...prepared?.inputs,
      },
      env: { ...cluster.env(), RAR_RELIST_PAUSE_MS: '1000' },
      onStdout: lineByLine((line) => {
        if (values.verbose) console.log(`  │ ${line}`);
        // several nodes run at once: one line per step start as it happens, one per node as it ends
        else if (line.startsWith('::group::')) console.log(`  ✔ ${line.slice(9)}`);
        else if (/^[^\s:]+: ▶ /.test(line)) console.log(`    ${line.replace(/ \(.*\)$/, '')}`);
        else if (line.includes('settle gate: ')) console.log(`    ${line}`);
        // what the post-reboot proof waited for: a boot answers before cri and its CRI files are there
        else if (/after the reboot .*; reading it again/.test(line)) console.log(`    ${line.replace(/^([^\s:]+): \1: /, '$1: ')}`);
      }),
    };
    const run = await runAction(runOptions);
    // The post step runs in a fresh process with the state the main step saved, as on a runner.
    await runAction({ entry: join(repoRoot, 'dist', 'cleanup.js'), inputs: {}, env: cluster.env(), state: run.state });

    console.log(
      `\n── finished in ${((Date.now() - started) / 1000).toFixed(1)} s, exit code ${run.exitCode}; at most ${run.outputs['in-flight-max']} node(s) in flight (max-unavailable ${values['max-unavailable']})`,
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
    console.log(`\n── job summary (HTML, ${run.summary.length} bytes): ${run.summaryPath}`);
    if (!scenario.rerun) return run.exitCode ?? 1;
    scenario.rerun.setup(cluster);
    console.log(`\n── rerun: ${scenario.rerun.description}`);
    const again = await runAction({ ...runOptions, onStdout: undefined });
    await runAction({ entry: join(repoRoot, 'dist', 'cleanup.js'), inputs: {}, env: cluster.env(), state: again.state });
    const d = JSON.parse(again.outputs.decisions ?? '[]') as Array<{ name: string; outcome: string }>;
    console.log(
      `   exit code ${again.exitCode}, result ${again.outputs.result}; decisions: ${d.map((x) => `${x.name}=${x.outcome}`).join(', ') || '[]'}`,
    );
    for (const line of describeNodes(cluster)) console.log(`  ${line}`);
    return run.exitCode ?? 1;
  } finally {
    for (const s of stopChurn) s();
    for (const s of stopAsync) await s();
    await cluster.stop();
  }
}

/** Chunks of a stream → whole lines. */
function lineByLine(f: (line: string) => void): (chunk: string) => void {
  let buf = '';
  return (chunk) => {
    buf += chunk;
    const lines = buf.split('\n');
    buf = lines.pop() ?? '';
    for (const l of lines) f(l);
  };
}

/** Where `talosctl` resolves on `path`, as a shell would find it ("none" when it does not). */
function talosctlOnPath(path: string): string {
  const found = spawnSync('sh', ['-c', 'command -v talosctl'], { env: { PATH: path }, encoding: 'utf8' });
  return found.stdout.trim() || 'none';
}

process.exitCode = await main();
