// 2. Cost per node: roll 20 workers through runRollout (mode apply, with the run Lease, as src/action/main.ts
// does), half of them booted with the current credential (their reboot is skipped), on a twin whose
// reboot takes 50 ms. Per node: the action's own wall time (the decision record's duration minus the
// drain, reboot and wait-for-Ready steps) and the child processes it started, per binary and per step.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { CommandRecord } from '../src/adapters/exec.js';
import type { DecisionRecord } from '../src/core/model/record.js';
import { runRollout } from '../src/pipeline/run.js';
import { SimCluster } from '../sim/cluster.js';
import { actionRollout, attributeToSteps, median, round, WAIT_STEPS, withClusterEnv, type AttributedCommand } from './lib.js';
import { USER_AGENT } from '../src/adapters/kube/http/request.js';
import { STEP } from '../src/core/steps.js';

export interface KindCost {
  nodes: number;
  /** median over the nodes of this kind */
  ownMs: number | null;
  /**
   * child processes per node, with the wait for Ready counted as the one poll an instantaneous reboot
   * needs (its extra polls depend only on how fast the twin's kubelet reports back)
   */
  processes: number | null;
  kubectl: number | null;
  talosctl: number | null;
  /**
   * median Lease commands of their own per node, started inside the node's log group: the proof
   * before each Talos mutation, the drain and the verified release rides on the node read before it
   * (`kubectl get node/X lease/Y`, counted in `processes`); a renewal is left only where that read
   * did not prove the Lease, or a background renewal tick fell inside the group
   */
  leaseProofs: number | null;
  /** `processes` plus the node's Lease proofs: every process the node costs */
  processesWithLeaseProofs: number | null;
  /** every process started for the node, all Ready polls included */
  processesIncludingWaits: number | null;
  /** without any process of the drain, reboot and wait-for-Ready steps */
  processesExcludingWaitSteps: number | null;
  totalMs: number | null;
  waitMs: number | null;
  /** own time spent inside child processes (sum of their durations; the evidence batch runs concurrently) */
  childProcessMs: number | null;
  /** own time during which no child process was running: the action's in-process work (JS, JSON, waiting on nothing) */
  inProcessMs: number | null;
  /** per step: median processes and ms per node, in roll order */
  steps: Array<{ step: string; ms: number | null; processes: number | null; commands: string }>;
  /** per command kind (outside the waits): median count and median summed ms per node, most expensive first */
  commands: Array<{ kind: string; count: number | null; ms: number | null }>;
  /** the node's Kubernetes Event batches (`kubectl create … -o name`, src/adapters/kube/eventList.ts): median count and summed ms */
  events: { processes: number | null; ms: number | null };
  /**
   * HTTP requests over the run's channel for the node, as the apiserver twin received them (its request
   * log, told apart by the action's User-Agent; the wait for Ready counted as one poll, as `processes`)
   */
  requests: number | null;
  /** every request of the node, all Ready polls included */
  requestsIncludingWaits: number | null;
  /** without the requests of the drain, reboot and wait-for-Ready steps (the drain's evictions and its waits for the pods) */
  requestsExcludingWaitSteps: number | null;
  /** per operation (the User-Agent's comment: `read`, `patch`, `drain`, `event`…): median count per node, wait for Ready as one poll */
  requestsByOp: Array<{ op: string; count: number | null }>;
}

export interface PerNodeResult {
  reboot: KindCost;
  skip: KindCost;
  nodes: number;
  wallMs: number;
  rebootMs: number;
  pollIntervalMs: number;
  runLevel: {
    processes: number;
    commands: string[];
    /** the run-level Event batches (the Lease's run Event) and their summed ms */ events: { processes: number; ms: number };
  };
  /** the channel's requests outside any node's log group: the listing, the Lease, the run's Event */
  runLevelRequests: number;
  /** median wall time of a process that only starts and prints its client version (no network): the per-process floor */
  processFloorMs: { kubectl: number | null; talosctl: number | null };
  outcomes: Record<string, number>;
  definitions: Record<string, string>;
  notes: string[];
}

/** One request the apiserver twin received from the action, labelled with the step it fell in. */
interface NodeRequest {
  op: string;
  at: number;
  step?: string;
}

interface NodeCost {
  record: DecisionRecord;
  commands: AttributedCommand[];
  requests: NodeRequest[];
  /** Lease commands started inside the node's log group */
  leaseCommands: number;
}

const NODES = 20;
const REBOOT_MS = 50;
const POLL_MS = 50;

export async function benchPerNode(progress: (msg: string) => void): Promise<PerNodeResult> {
  const cluster = await SimCluster.start({ rebootMs: REBOOT_MS, heartbeatMs: 10_000 });
  try {
    for (let i = 1; i <= NODES; i++) {
      cluster.addNode({ name: `node-${String(i).padStart(2, '0')}`, role: 'worker', current: i % 2 === 0 });
    }
    const d = await actionRollout(cluster, { mode: 'apply', 'drain-timeout': '60s', 'ready-timeout': '60s' }, { pollIntervalMs: POLL_MS });
    const commands: CommandRecord[] = [];
    d.runner.onCommand((c) => commands.push(c));
    const windows: Array<{ name: string; start: number; end: number }> = [];
    const t0 = performance.now();
    const result = await withClusterEnv(cluster, () =>
      runRollout({
        ...d.deps,
        // each node's group timed as it opens and closes: the port's own groups, one node at a time
        // (the action's NodeLogs write a node's group only when it ends)
        nodeLogs: undefined,
        log: {
          info: () => undefined,
          group: (title) => {
            const w = { name: title.split(' ')[0]!, start: Date.now(), end: Number.POSITIVE_INFINITY };
            windows.push(w);
            return () => {
              w.end = Date.now();
            };
          },
        },
      }).finally(() => d.close()),
    );
    const wallMs = performance.now() - t0;
    if (result.result !== 'processed') throw new Error(`the roll did not complete: ${result.result}: ${result.error?.message ?? ''}`);

    const isLease = (c: CommandRecord) => / lease /.test(c.command) || /kind":"Lease/.test(c.command);
    const perNode: NodeCost[] = [];
    const assigned = new Set<CommandRecord>();
    // A command belongs to the last node group that had started when it started, if that group had not ended.
    const owner = (c: CommandRecord) => {
      let w: (typeof windows)[number] | undefined;
      for (const x of windows) if (x.start <= c.startedAtMs) w = x;
      return w && c.startedAtMs <= w.end ? w.name : undefined;
    };
    for (const record of result.records) {
      const mine = commands.filter((c) => !isLease(c) && owner(c) === record.node);
      mine.forEach((c) => assigned.add(c));
      const leaseMine = commands.filter((c) => isLease(c) && owner(c) === record.node);
      leaseMine.forEach((c) => assigned.add(c));
      perNode.push({ record, commands: attributeToSteps(record, mine), requests: [], leaseCommands: leaseMine.length });
    }
    // the requests as the apiserver twin received them, by the action's User-Agent (`talos-registry-auth-rollout (op)`)
    const fromAction = cluster.kube.requests.filter((r) => (r.userAgent ?? '').startsWith(USER_AGENT));
    const requestsOf = (record: DecisionRecord): NodeRequest[] =>
      fromAction
        .filter((r) => owner({ startedAtMs: r.at } as CommandRecord) === record.node)
        .map((r) => ({ op: /\((\S+)\)$/.exec(r.userAgent ?? '')?.[1] ?? '?', at: r.at, step: stepAt(record, r.at) }));
    for (const n of perNode) n.requests = requestsOf(n.record);
    const runLevelRequests = fromAction.filter(
      (r) => !perNode.some((n) => owner({ startedAtMs: r.at } as CommandRecord) === n.record.node),
    );
    const runLevel = commands.filter((c) => !assigned.has(c));
    const outcomes: Record<string, number> = {};
    for (const r of result.records) outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;

    const processFloorMs = await withClusterEnv(cluster, async () => ({
      kubectl: await floor('kubectl', ['version', '--client', '-o', 'json']),
      // the twin's fake talosctl by its path: with the API, the roll ran with no talosctl on PATH
      talosctl: await floor(join(cluster.talos.binDir, 'talosctl'), ['version', '--client']),
    }));
    const reboot = summarize(perNode.filter((n) => n.record.outcome === 'rebooted'));
    const skip = summarize(perNode.filter((n) => n.record.outcome === 'reboot-skipped'));
    progress(
      `per node: reboot ${reboot.ownMs} ms / ${reboot.processes} processes / ${reboot.requests} requests, skip ${skip.ownMs} ms / ${skip.processes} processes / ${skip.requests} requests; ${(wallMs / 1000).toFixed(1)} s`,
    );
    return {
      reboot,
      skip,
      nodes: NODES,
      wallMs: Math.round(wallMs),
      rebootMs: REBOOT_MS,
      pollIntervalMs: POLL_MS,
      runLevel: {
        processes: runLevel.length,
        commands: runLevel.map((c) => c.command.replace(/ -p '.*'/, " -p '…'").slice(0, 120)),
        events: {
          processes: runLevel.filter(isEventBatch).length,
          ms: Math.round(runLevel.filter(isEventBatch).reduce((a, c) => a + c.durationMs, 0)),
        },
      },
      outcomes,
      runLevelRequests: runLevelRequests.length,
      processFloorMs,
      definitions: {
        ownMs:
          'median over the nodes of the kind: the decision record durationMs minus the durations of the steps drain, talosctl reboot (the step keeps that name over the API) and wait for Ready',
        processes:
          'median child processes started for the node (between its log group start and end, Lease-only commands excluded), with the wait for Ready counted as one poll: what an instantaneous reboot needs; processesIncludingWaits counts every poll, processesExcludingWaitSteps drops the drain, the reboot and every poll',
        processesWithLeaseProofs:
          "processes plus the node's Lease commands of their own (renewals started inside the node's log group; the proof before each mutation rides on the node read before it, already in processes): what the targets are judged on",
        readPath:
          "every Talos call over the API (openTalosClient on the twin's talosconfig, as src/action/main.ts opens it): reads, ApplyConfiguration and Reboot; no talosctl on PATH",
        requests:
          "median HTTP requests for the node as the apiserver twin received them (its request log, the action's by its User-Agent), started between the node's log group start and end, with the wait for Ready counted as one poll; requestsIncludingWaits counts every poll, requestsExcludingWaitSteps drops the drain, the reboot and every poll",
        reboot: 'nodes booted with the old credential (outcome rebooted)',
        skip: 'nodes booted with the current credential, addNode({current: true}) (outcome reboot-skipped)',
      },
      notes: [],
    };
  } finally {
    await cluster.stop();
  }
}

/** Median wall time of `file args` (its client version only: no network; the talosconfig is hidden so the fake records nothing). */
async function floor(file: string, args: string[], runs = 10): Promise<number | null> {
  const env = { ...process.env };
  delete env.TALOSCONFIG;
  const once = () =>
    new Promise<number>((resolve, reject) => {
      const t0 = performance.now();
      const child = spawn(file, args, { env, stdio: 'ignore' });
      child.on('error', reject);
      child.on('close', () => resolve(performance.now() - t0));
    });
  await once();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(await once());
  return med(times);
}

function med(values: number[]): number | null {
  return round(median(values));
}

function summarize(nodes: NodeCost[]): KindCost {
  const own = (n: NodeCost) =>
    n.record.durationMs - n.record.steps.filter((s) => WAIT_STEPS.has(s.name)).reduce((a, s) => a + s.durationMs, 0);
  const readyPolls = (n: NodeCost) => n.commands.filter((c) => c.step === 'wait for Ready').length;
  const counted = (n: NodeCost) => n.commands.length - Math.max(0, readyPolls(n) - 1);
  const outsideWaits = (n: NodeCost) => n.commands.filter((c) => !WAIT_STEPS.has(c.step ?? ''));
  const countedCommands = (n: NodeCost) => {
    // the counted set: everything, with only the first Ready poll
    let seenPoll = false;
    return n.commands.filter((c) => {
      if (c.step !== 'wait for Ready') return true;
      if (seenPoll) return false;
      seenPoll = true;
      return true;
    });
  };

  const stepNames: string[] = [];
  for (const n of nodes) for (const s of n.record.steps) if (!stepNames.includes(s.name)) stepNames.push(s.name);
  const steps = stepNames.map((step) => {
    const perNode = nodes.map((n) => {
      const s = n.record.steps.filter((x) => x.name === step);
      const cs = n.commands.filter((c) => c.step === step);
      return { ms: s.reduce((a, x) => a + x.durationMs, 0), processes: cs.length, kinds: cs.map((c) => c.kind) };
    });
    const kinds = new Map<string, number>();
    for (const k of perNode[0]?.kinds ?? []) kinds.set(k, (kinds.get(k) ?? 0) + 1);
    return {
      step,
      ms: med(perNode.map((p) => p.ms)),
      processes: med(perNode.map((p) => p.processes)),
      commands: [...kinds].map(([k, c]) => `${c}× ${k}`).join(', '),
    };
  });

  const kinds = new Set<string>();
  for (const n of nodes) for (const c of outsideWaits(n)) kinds.add(c.kind);
  const commands = [...kinds]
    .map((kind) => ({
      kind,
      count: med(nodes.map((n) => outsideWaits(n).filter((c) => c.kind === kind).length)),
      ms: med(
        nodes.map((n) =>
          outsideWaits(n)
            .filter((c) => c.kind === kind)
            .reduce((a, c) => a + c.durationMs, 0),
        ),
      ),
    }))
    .sort((a, b) => (b.ms ?? 0) - (a.ms ?? 0));

  return {
    nodes: nodes.length,
    ownMs: med(nodes.map(own)),
    processes: med(nodes.map(counted)),
    leaseProofs: med(nodes.map((n) => n.leaseCommands)),
    processesWithLeaseProofs: med(nodes.map((n) => counted(n) + n.leaseCommands)),
    kubectl: med(nodes.map((n) => countedCommands(n).filter((c) => c.tool === 'kubectl').length)),
    talosctl: med(nodes.map((n) => countedCommands(n).filter((c) => c.tool === 'talosctl').length)),
    processesIncludingWaits: med(nodes.map((n) => n.commands.length)),
    processesExcludingWaitSteps: med(nodes.map((n) => outsideWaits(n).length)),
    totalMs: med(nodes.map((n) => n.record.durationMs)),
    waitMs: med(nodes.map((n) => n.record.durationMs - own(n))),
    childProcessMs: med(nodes.map((n) => outsideWaits(n).reduce((a, c) => a + c.durationMs, 0))),
    // the node's Event batch is written once its record is closed, outside the own time it would be subtracted from
    inProcessMs: med(nodes.map((n) => own(n) - unionMs(outsideWaits(n).filter((c) => !isEventBatch(c))))),
    steps,
    commands,
    events: {
      processes: med(nodes.map((n) => n.commands.filter(isEventBatch).length)),
      ms: med(nodes.map((n) => n.commands.filter(isEventBatch).reduce((a, c) => a + c.durationMs, 0))),
    },
    requests: med(nodes.map((n) => countedRequests(n).length)),
    requestsIncludingWaits: med(nodes.map((n) => n.requests.length)),
    requestsExcludingWaitSteps: med(nodes.map((n) => n.requests.filter((r) => !WAIT_STEPS.has(r.step ?? '')).length)),
    requestsByOp: [...new Set(nodes.flatMap((n) => n.requests.map((r) => r.op)))].map((op) => ({
      op,
      count: med(nodes.map((n) => countedRequests(n).filter((r) => r.op === op).length)),
    })),
  };
}

/** The node's requests with only the first of the wait for Ready's polls (how many more depends on the twin's kubelet). */
function countedRequests(n: NodeCost): NodeRequest[] {
  let seenPoll = false;
  return n.requests.filter((r) => {
    if (r.step !== STEP.waitReady) return true;
    if (seenPoll) return false;
    seenPoll = true;
    return true;
  });
}

/** The step of the record that was running at `at`: the last one that had started. */
function stepAt(record: DecisionRecord, at: number): string | undefined {
  let step: string | undefined;
  for (const s of record.steps) if (Date.parse(s.startedAt) <= at + 1) step = s.name;
  return step;
}

/** An Event batch: the one `kubectl create` whose output is `-o name` (a Pod or a Lease is created with `-o json`). */
function isEventBatch(c: CommandRecord): boolean {
  return /^\S*kubectl .*\bcreate\b.* -o name\b/.test(c.command);
}

/** Wall time covered by at least one of the commands. */
function unionMs(commands: CommandRecord[]): number {
  const iv = commands.map((c) => [c.startedAtMs, c.startedAtMs + c.durationMs] as const).sort((a, b) => a[0] - b[0]);
  let total = 0;
  let end = Number.NEGATIVE_INFINITY;
  for (const [a, b] of iv) {
    if (b <= end) continue;
    total += b - Math.max(a, end);
    end = b;
  }
  return total;
}
