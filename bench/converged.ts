// 8. What a merge-queue run with nothing to roll costs: the bundle (`node dist/index.js`, as a runner
// starts it: runner/runAction.ts) in `mode: apply` with the pre-flight check on, against a twin whose
// nodes all carry the verified revision, at 50 and 500 nodes. Wall time from spawn to exit; the
// processes it starts, counted from its own log of every command it runs (each `kubectl`/`talosctl` line),
// plus the bundle itself; and, from the twins, not the action's report: the apiserver writes (node,
// Lease, Event: every non-GET request), the registry twin's requests and the Talos API calls. The
// registry twin is up and counts every request, so a check that ran would show.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { NEW_CREDENTIAL, SimCluster } from '../sim/cluster.js';
import { RegistrySim } from '../sim/registry/server.js';
import { runAction } from '../runner/runAction.js';
import { median, round } from './lib.js';

const REVISION = '2026-11-30.1';
/** the per-host verified marker, proven by the evidence (src/rules/marker.ts): nothing to roll or to prove */
const VERIFIED = 'registry-auth-rollout/verified';

export interface ConvergedRow {
  nodes: number;
  runs: number;
  /** median ms from spawning the bundle to its exit */
  wallMs: number | null;
  wallRunsMs: number[];
  /** the bundle itself and every child it started (the largest of the runs) */
  processes: number;
  /** the children by command (`kubectl get`), from the action's log */
  children: string[];
  /** requests over the cluster channel (docs/kube-channel.md), from the action's log (the last run) */
  requests: number;
  requestPaths: string[];
  /** median ms the children ran, one after another (the rest of the wall time is the bundle's own: Node start-up, loading, the inputs) */
  childrenMs: number | null;
  /** non-GET requests the apiserver twin received: node, Lease and Event writes */
  writes: number;
  registryRequests: number;
  talosApiCalls: number;
  result: string;
}

export interface ConvergedResult {
  rows: ConvergedRow[];
}

/**
 * `    0.12s  exit 0   kubectl get nodes -o json …` → `kubectl get`, 120 ms: the runner logs every
 * process it starts this way, with its duration (src/report/log.ts).
 */
function childCommands(stdout: string): Array<{ command: string; ms: number }> {
  const out: Array<{ command: string; ms: number }> = [];
  for (const line of stdout.split('\n')) {
    const m = /^\s*([\d.]+)s\s+(?:exit \d+|killed)\s+(kubectl|talosctl)\b((?:\s+--?[\w-]+=\S+)*)\s+(\S+)/.exec(line);
    if (m) out.push({ command: `${m[2]} ${m[4]}`, ms: Math.round(Number(m[1]) * 1000) });
  }
  return out;
}

/** `    0.01s  HTTP 200  GET /api/v1/nodes` → the requests over the cluster channel (src/report/log.ts formatRequestLine). */
function channelRequests(stdout: string): string[] {
  const out: string[] = [];
  for (const line of stdout.split('\n')) {
    const m = /^\s*[\d.]+s\s+(?:HTTP \d+|no answer)\s+(GET|POST|PATCH|DELETE) (\S+)/.exec(line);
    if (m) out.push(`${m[1]} ${m[2]}`);
  }
  return out;
}

export async function benchConverged(sizes: number[], runs: number, progress: (msg: string) => void): Promise<ConvergedResult> {
  const rows: ConvergedRow[] = [];
  for (const n of sizes) {
    // no kubelet heartbeat during the runs: nothing but the action could write
    const cluster = await SimCluster.start({ heartbeatMs: 3_600_000 });
    const reg = await RegistrySim.start({
      username: NEW_CREDENTIAL.username,
      password: NEW_CREDENTIAL.password,
      repositories: { 'acme/app': ['1.4.2'] },
    });
    const dir = mkdtempSync(join(tmpdir(), 'rar-bench-converged-'));
    try {
      for (let i = 1; i <= n; i++) {
        const name = `w-${String(i).padStart(3, '0')}`;
        cluster.addNode({
          name,
          role: 'worker',
          current: true,
          annotations: { [VERIFIED]: JSON.stringify({ [reg.host]: { revision: REVISION, proof: 'evidence' } }) },
        });
      }
      const caFile = join(dir, 'ca.pem');
      writeFileSync(caFile, reg.caPem);
      const patch = join(dir, 'auth.yaml');
      writeFileSync(
        patch,
        `apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: "${reg.host}"\nusername: ${NEW_CREDENTIAL.username}\npassword: ${NEW_CREDENTIAL.password}\n`,
        { mode: 0o600 },
      );
      const inputs = {
        mode: 'apply',
        'auth-patch': patch,
        registry: reg.host,
        revision: REVISION,
        preflight: 'true',
        'preflight-image': `${reg.host}/acme/app:1.4.2`,
        'registry-ca-file': caFile,
      };
      const walls: number[] = [];
      const childTimes: number[] = [];
      let processes = 0;
      let children: string[] = [];
      let requests: string[] = [];
      let result = '';
      const writesBefore = cluster.kube.mutatingRequests().length;
      // one unmeasured run first: kubectl's discovery cache of the twin, as a runner that ran kubectl before
      for (let r = 0; r <= runs; r++) {
        const t0 = performance.now();
        const run = await runAction({ inputs, env: cluster.env() });
        const ms = performance.now() - t0;
        if (run.exitCode !== 0) throw new Error(`the converged run failed: ${run.stdout.slice(-2000)}`);
        result = run.outputs.result ?? '';
        const spawned = childCommands(run.stdout);
        if (r === 0) continue;
        requests = channelRequests(run.stdout);
        walls.push(ms);
        childTimes.push(spawned.reduce((a, c) => a + c.ms, 0));
        if (1 + spawned.length > processes) {
          processes = 1 + spawned.length;
          children = spawned.map((c) => c.command);
        }
      }
      const row: ConvergedRow = {
        nodes: n,
        runs,
        wallMs: round(median(walls)),
        wallRunsMs: walls.map((w) => Math.round(w)),
        processes,
        children,
        requests: requests.length,
        requestPaths: requests,
        childrenMs: round(median(childTimes)),
        writes: cluster.kube.mutatingRequests().length - writesBefore,
        registryRequests: reg.count(),
        talosApiCalls: cluster.talos.apiCalls.length,
        result,
      };
      progress(
        `converged ${n} nodes: ${row.wallMs} ms (children ${row.childrenMs} ms), ${row.processes} processes (${children.join(', ')}), ${row.requests} requests (${requests.join(', ')}), ${row.writes} writes, ${row.registryRequests} registry requests, result ${result}`,
      );
      rows.push(row);
    } finally {
      await reg.stop();
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return { rows };
}
