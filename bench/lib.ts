// Shared helpers of the benchmark: statistics, the twin's environment, the action's run composed by the
// action's own composition (src/action/rollout.ts), and the attribution of child processes to nodes and steps.
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { Runner, type CommandRecord } from '../src/adapters/exec.js';
import { readInputs } from '../src/action/inputs.js';
import { MaskedCore, type CorePort } from '../src/action/masked.js';
import { composeRollout } from '../src/action/rollout.js';
import { errorMessage } from '../src/core/errors.js';
import { STEP } from '../src/core/steps.js';
import type { DecisionRecord } from '../src/core/model/record.js';
import type { TalosClient } from '../src/adapters/types.js';
import type { RolloutDeps } from '../src/pipeline/context.js';
import type { SimCluster } from '../sim/cluster.js';

// --- statistics ------------------------------------------------------------------------------------

/** Linear-interpolated percentile (p in 0..100) of the values; undefined for an empty list. */
export function percentile(values: number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const s = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (s.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return s[lo]! + (s[hi]! - s[lo]!) * (rank - lo);
}

export function median(values: number[]): number | undefined {
  return percentile(values, 50);
}

export function mean(values: number[]): number | undefined {
  return values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0) / values.length;
}

export function round(v: number | undefined, digits = 0): number | null {
  if (v === undefined || !Number.isFinite(v)) return null;
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

// --- the twin's environment ------------------------------------------------------------------------

/**
 * Run `fn` with the twin's environment in process.env (the Runner passes process.env to every child:
 * KUBECONFIG, KUBECACHEDIR, TALOSCONFIG, and PATH, with the fake talosctl first only on the CLI path), then restore it.
 */
export async function withClusterEnv<T>(cluster: SimCluster, fn: () => Promise<T>): Promise<T> {
  const env = cluster.env();
  const saved = new Map(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return await fn();
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

// --- the action's composition ---------------------------------------------------------------------

/** A runner that shows nothing: the benchmarks print timings, never the action's log, summary or state. */
const silentRunner: CorePort = {
  getInput: () => '',
  getState: () => '',
  setSecret: () => undefined,
  info: () => undefined,
  notice: () => undefined,
  warning: () => undefined,
  error: () => undefined,
  startGroup: () => undefined,
  endGroup: () => undefined,
  setOutput: () => undefined,
  setFailed: () => undefined,
  saveState: () => undefined,
  summary: { addRaw: () => ({ write: () => Promise.resolve(undefined) }) },
};

export interface ActionRollout {
  /** runs every command of the run; `onCommand` sees each one */
  runner: Runner;
  /** the apply or plan run's deps exactly as src/action/main.ts composes them (`composeRollout`) */
  deps: RolloutDeps;
  /** closes the API connection; call once the run is over */
  close(): void;
}

/**
 * The run src/action/main.ts composes from its inputs, through the same functions: `readInputs` (config,
 * credential, owner token, knobs) and `composeRollout` (kubectl, the Talos client opened from the twin's
 * talosconfig: reads over the API on one connection, the credential patch through ApplyConfiguration and
 * the reboot through Reboot; the node logs; the run Lease in apply mode). The runner is a silent one, and
 * the knobs are the action's own test knobs: the poll interval when given, no pause between the two
 * empty listings that end a run.
 */
export async function actionRollout(
  cluster: SimCluster,
  inputs: Record<string, string>,
  knobs: { pollIntervalMs?: number } = {},
): Promise<ActionRollout> {
  const runner = new Runner();
  const all: Record<string, string> = {
    'auth-patch': cluster.writeAuthPatch(),
    revision: '2026-11-30.1',
    talosconfig: cluster.env().TALOSCONFIG ?? '',
    ...inputs,
  };
  const core = new MaskedCore(silentRunner);
  const env: NodeJS.ProcessEnv = {
    GITHUB_REPOSITORY: 'acme/platform',
    GITHUB_RUN_ID: '4242',
    GITHUB_RUN_ATTEMPT: '1',
    RAR_RELIST_PAUSE_MS: '0',
    ...(knobs.pollIntervalMs === undefined ? {} : { RAR_POLL_INTERVAL_MS: String(knobs.pollIntervalMs) }),
  };
  const read = readInputs(
    (name) => all[name] ?? '',
    env,
    (s) => core.addSecret(s),
  );
  const composed = composeRollout(read, { core, runner, cancelled: () => false, path: process.env.PATH, tempDir: undefined });
  return { runner, deps: composed.deps, close: () => composed.close() };
}

/**
 * The deps with the Talos client the run opens wrapped by `wrap` (a counter, a probe of the twin's
 * state): the action opens it only once the run has a node to roll (src/pipeline/run.ts).
 */
export function withTalosWrapped(deps: RolloutDeps, wrap: (client: TalosClient) => TalosClient): RolloutDeps {
  const open = deps.openTalos;
  if (!open) throw new Error('the composed deps open no Talos client');
  return {
    ...deps,
    openTalos: async () => {
      const opened = await open();
      return { ...opened, client: wrap(opened.client) };
    },
  };
}

// --- attribution of child processes ----------------------------------------------------------------

/**
 * `kubectl get node NAME -o json …` → `kubectl get node`; the fence read with the Lease beside it,
 * `kubectl get node/NAME lease/L …` → `kubectl get node+lease`; `talosctl --nodes A,B get servicepids
 * cri` → `talosctl get servicepids`.
 */
export function commandKind(command: string): string {
  const words = command.split(' ');
  const tool = words[0]!.split('/').pop()!;
  const rest: string[] = [];
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    if (w === '--nodes' || w === '-n' || w === '--talosconfig' || w === '--kubeconfig') {
      i++;
      continue;
    }
    if (w.startsWith('-')) continue;
    rest.push(w);
  }
  if (tool === 'talosctl') {
    if (rest[0] === 'get' || rest[0] === 'patch' || rest[0] === 'service' || rest[0] === 'etcd')
      return `talosctl ${rest.slice(0, 2).join(' ')}`;
    return `talosctl ${rest[0] ?? ''}`;
  }
  if (tool === 'kubectl') {
    if (rest[0] === 'get' && rest[1]?.startsWith('node/') && rest[2]?.startsWith('lease/')) return 'kubectl get node+lease';
    if (rest[0] === 'get' && (rest[1] === 'node' || rest[1]?.startsWith('node/'))) return 'kubectl get node';
    if (rest[0] === 'get' || rest[0] === 'patch' || rest[0] === 'create') return `kubectl ${rest.slice(0, 2).join(' ')}`;
    return `kubectl ${rest[0] ?? ''}`;
  }
  return tool;
}

export function toolOf(command: string): string {
  return command.split(' ')[0]!.split('/').pop()!;
}

export interface AttributedCommand extends CommandRecord {
  kind: string;
  tool: string;
  /** the step of the decision record that was running when the command started */
  step?: string;
}

/**
 * Steps whose duration and processes are waits (excluded from the action's own cost): the drain, the
 * reboot, the boot's cri coming up, Ready, and the settle gate's wait for evicted workloads.
 */
export const WAIT_STEPS = new Set<string>([STEP.drain, STEP.drainRetry, STEP.reboot, STEP.waitProofFinal, STEP.waitReady, STEP.settleWait]);

/** The commands that started within the step windows of a decision record, each labelled with its step. */
export function attributeToSteps(record: DecisionRecord, commands: CommandRecord[]): AttributedCommand[] {
  const windows = record.steps.map((s) => {
    const start = Date.parse(s.startedAt);
    return { name: s.name, start, end: start + s.durationMs };
  });
  return commands.map((c) => {
    // steps are sequential; a command belongs to the last step that started at or before it
    let step: string | undefined;
    for (const w of windows) if (w.start <= c.startedAtMs + 1) step = w.name;
    return { ...c, kind: commandKind(c.command), tool: toolOf(c.command), step };
  });
}

// --- machine ---------------------------------------------------------------------------------------

export function machineInfo(): Record<string, unknown> {
  let kubectlVersion: string;
  try {
    const out = execFileSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8', timeout: 20_000 });
    const v = JSON.parse(out) as { clientVersion?: { gitVersion?: string } };
    kubectlVersion = v.clientVersion?.gitVersion ?? 'unknown';
  } catch (e) {
    kubectlVersion = `unavailable: ${errorMessage(e).split('\n')[0]}`;
  }
  const c = cpus();
  return {
    cpuCount: c.length,
    cpuModel: c[0]?.model ?? 'unknown',
    node: process.version,
    platform: `${process.platform}/${process.arch}`,
    date: new Date().toISOString(),
    kubectl: kubectlVersion,
    talosctl:
      'fake talosctl of the twin (sim/bin/talosctl, client v1.13.8 format): a bash process per call, the client run inside the twin (sim/talos/frontDoor.ts)',
  };
}
