// Shared setup of the end-to-end tests: the bundled action, the real kubectl, the cluster twin.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { addDefaultNodes, SimCluster, type SimClusterOptions } from '../../sim/cluster.js';
import { repoRoot, runAction, type ActionRun, type RunActionOptions } from '../../runner/runAction.js';
import { readReport } from '../report/reportSchema.js';
import { expect, vi } from 'vitest';

export { readReport };

export const PREFIX = 'registry-auth-rollout';
export const A = {
  owner: `${PREFIX}/owner`,
  phase: `${PREFIX}/phase`,
  wasCordoned: `${PREFIX}/was-cordoned`,
  verified: `${PREFIX}/verified`,
  /** the old single-key marker (before the per-host markers): the revision alone */
  verifiedRevision: `${PREFIX}/verified-revision`,
};

/** The revision a node's verified marker (one JSON map, host → proof) records for `host`; undefined: none. */
export function verifiedRev(annotations: Record<string, string>, host = 'ghcr.io'): string | undefined {
  const raw = annotations[A.verified];
  if (raw === undefined) return undefined;
  return (JSON.parse(raw) as Record<string, { revision?: string }>)[host]?.revision;
}
export const REVISION = '2026-11-30.1';

/** A node's verified marker as a release writes it (src/rules/marker.ts): `host` proven at `revision` by the evidence. */
export function verifiedMarker(host: string, revision = REVISION, at = '2026-11-30T12:00:00.000Z'): Record<string, string> {
  return { [A.verified]: JSON.stringify({ [host]: { revision, at, proof: 'evidence' } }) };
}

/** set once kubectl answered in this worker: the files of a worker share their modules (`isolate: false`) and PATH */
let kubectlFound = false;

/** The e2e tests need the real kubectl; say how to get it instead of skipping. */
export function requireKubectl(): void {
  if (kubectlFound && existsSync(join(repoRoot, 'dist', 'index.js'))) return;
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'pipe' });
  } catch {
    throw new Error(
      'kubectl is not on PATH: the end-to-end tests drive the real kubectl against the simulated cluster. ' +
        "Install it (Debian: `apt-get install kubernetes-client`; or the Google Cloud SDK's kubectl) and run again.",
    );
  }
  kubectlFound = true;
  if (!existsSync(join(repoRoot, 'dist', 'index.js'))) throw new Error('dist/index.js is missing: run `npm run build`');
}

/**
 * The twin reads like a real cluster by default: the Talos API over mutual TLS (nanosecond instants)
 * and realistic, seeded timings (sub-second gaps, sim/talos/timing.ts). `cliPath` gives a talosconfig
 * without a client certificate, so the action falls back to talosctl: for tests of that path. Its
 * 1-second readings cannot order a sub-second gap, so CLI-path tests about something other than the
 * gap pin timings it can order (a boot's launch 8.7 s after cri.toml, a 1.14 restart 5 s after it)
 * unless they ask for `realisticTimings`.
 */
export const CLI_DECIDABLE_TIMINGS = { bootGapMs: 8700, criRestartMs: 5000 } as const;

/**
 * The kubelets' heartbeat in the end-to-end twin: a status patch of the Node and a renewal of its node
 * Lease every 2 s. A real kubelet renews the Lease every 10 s and patches the Node's status on a change
 * or every 5 minutes (docs/kubernetes-facts.md#k10-kubelet-heartbeats), so the runs still meet far more
 * concurrent Node writes than a cluster makes: one per node every 2 s lands inside every claim-to-release
 * (a 2-node roll: about 20). The behaviours that must survive such a write are each tested with one
 * placed where it hurts (a heartbeat between the claim's read and its PATCH, e2e/claim-races; a status
 * write during the drain's watch, pipeline/drainWatch), not left to the timer; at 500 ms the timer
 * cost the twin about 10 ms of CPU a second per default cluster (docs/testing.md).
 */
export const E2E_HEARTBEAT_MS = 2000;

export async function startCluster(
  opts: SimClusterOptions & { defaultNodes?: boolean; cliPath?: boolean; realisticTimings?: boolean } = {},
): Promise<SimCluster> {
  const { defaultNodes, cliPath, realisticTimings, ...sim } = opts;
  const timings = cliPath && !realisticTimings ? CLI_DECIDABLE_TIMINGS : {};
  const c = await SimCluster.start({
    heartbeatMs: E2E_HEARTBEAT_MS,
    rebootMs: 1000,
    ...timings,
    ...(cliPath ? { api: false } : {}),
    ...sim,
  });
  if (defaultNodes !== false) addDefaultNodes(c);
  return c;
}

export interface Decision {
  name: string;
  outcome: string;
  reason: string;
  claim: { attempts: number; conflicts: string[] } | null;
  evidence: { verdict: string; reason: string } | null;
  proof: { verdict: string; reason: string } | null;
  nextStep: string | null;
  steps: Array<{ name: string; startedAt?: string; durationMs: number; ok: boolean; detail?: string }>;
  startedAt?: string;
  endedAt?: string;
}

export function decisions(run: ActionRun): Decision[] {
  return JSON.parse(run.outputs.decisions ?? '[]') as Decision[];
}

export function byName(run: ActionRun): Record<string, Decision> {
  return Object.fromEntries(decisions(run).map((d) => [d.name, d]));
}

/**
 * The test knobs every run gets: a short pause between the passes of a run (the list again until
 * nothing new). The poll interval (RAR_POLL_INTERVAL_MS: the proof read again, the wait for Ready,
 * the settle gate) is the run's default, 2 s: a shortened poll hid the proof's failure after a real
 * boot, whose CRI files are written a second after Talos answers.
 */
export const TEST_KNOBS = { RAR_RELIST_PAUSE_MS: '300' } as const;

/**
 * Run the bundle against the twin (the run's own poll interval, TEST_KNOBS); `inputs` override the
 * defaults. The report file the run writes, if any, is held to its schema before the test sees the run
 * (readReport): every end-to-end run's report is validated, and one the schema refuses fails the test.
 */
export async function act(c: SimCluster, inputs: Record<string, string> = {}, extra: Partial<RunActionOptions> = {}): Promise<ActionRun> {
  const run = await runAction({
    inputs: {
      'auth-patch': c.writeAuthPatch(),
      revision: REVISION,
      'drain-timeout': '30s',
      'ready-timeout': '60s',
      'cri-restart-wait': '20s',
      'settle-timeout': '30s',
      // The twin's auth patch names ghcr.io, which no test can reach: the pre-flight check is off
      // unless a test turns it on against the registry twin (__tests__/e2e/preflight.test.ts).
      preflight: 'false',
      ...inputs,
    },
    env: { ...c.env(), ...TEST_KNOBS },
    ...extra,
  });
  const report = run.outputs['report-file'];
  if (report) readReport(report);
  return run;
}

export function postStep(c: SimCluster, run: ActionRun): Promise<ActionRun> {
  return runAction({ entry: join(repoRoot, 'dist', 'cleanup.js'), inputs: {}, env: c.env(), state: run.state });
}

/**
 * The post step after a main step that gave back everything itself (the channel to the API server
 * outlives the cancellation, docs/kube-channel.md): it runs, exits 0, and releases no node.
 */
export async function postFindsNothingHeld(c: SimCluster, run: ActionRun): Promise<ActionRun> {
  const post = await postStep(c, run);
  expect(post.exitCode, post.stdout).toBe(0);
  const released = post.annotations.filter((a) => /released by the post step/.test(a.title ?? '')).map((a) => a.title);
  expect(released, post.stdout).toEqual([]);
  return post;
}

export function node(c: SimCluster, name: string): any {
  return c.kube.node(name);
}

export function ann(c: SimCluster, name: string): Record<string, string> {
  return node(c, name)?.metadata?.annotations ?? {};
}

/** The secret must never reach the logs, the summary or the outputs. */
export function assertNoSecret(run: ActionRun, secret: string): void {
  // `::add-mask::` is how core.setSecret hands the value to the runner, which swallows the line.
  const stdout = run.stdout
    .split('\n')
    .filter((l) => !l.startsWith('::add-mask::'))
    .join('\n');
  if (!run.stdout.includes(`::add-mask::${secret}`)) throw new Error('the credential was never masked with core.setSecret');
  for (const [what, text] of [
    ['stdout', stdout],
    ['stderr', run.stderr],
    ['summary', run.summary],
    ['outputs', JSON.stringify(run.outputs)],
  ] as const) {
    if (text.includes(secret)) throw new Error(`the credential leaked into ${what}`);
  }
}

/** the reboots talosctl ran on the node (the twin's record of mutating commands) */
export function reboots(c: SimCluster, name: string) {
  return c.talos.mutatingCommands().filter((x) => x.command === 'reboot' && x.nodes.includes(c.talos.node(name).ip));
}

/**
 * Resolves once `cond` holds on the twin's state, checked every 10 ms (the moment is the twin's, not a
 * timer's; vitest's own `vi.waitUntil`); rejects, naming `what`, when it has not held within `timeoutMs`
 * (a hang bound).
 */
export async function when(cond: () => boolean, what = 'the awaited state', timeoutMs = 120_000): Promise<void> {
  await vi.waitUntil(cond, { timeout: timeoutMs, interval: 10 }).catch(() => {
    throw new Error(`${what}: not within ${timeoutMs} ms`);
  });
}

/**
 * Settles once the twin received a reboot of the node (for `act`'s `killOn`): a run cancelled then has
 * sent it. The action's `▶ reboot` line comes before the boot id read and the Lease proof, and a run
 * stopped there sent no reboot and gives the node back (or tries to, as its channel is being ended); it
 * prints nothing between the Reboot's request and the step's end, so the twin is watched.
 */
export function rebootReached(c: SimCluster, name: string): Promise<void> {
  return when(() => reboots(c, name).length > 0, `${name}: a reboot reaching the twin`);
}

/** A request the action sent (its User-Agent), for `op` when given (`drain`, `event`…: the User-Agent's comment, src/adapters/kube/http/request.ts). */
export function fromAction(r: { userAgent?: string }, op?: string): boolean {
  const ua = r.userAgent ?? '';
  return ua.startsWith('talos-registry-auth-rollout') && (op === undefined || ua.endsWith(`(${op})`));
}

/** A request of a drain (its listing, DaemonSet reads, evictions, the waits for the pods to go). */
export const isDrainRequest = (r: { userAgent?: string }) => fromAction(r, 'drain');

/** The drain's listing of the node's pods (`fieldSelector=spec.nodeName=N`): one per drain of the node. */
export function drainRequests(c: SimCluster, nodeName: string) {
  return c.kube.requests.filter(
    (r) => isDrainRequest(r) && `${r.path}?${decodeURIComponent(r.query)}`.includes(`spec.nodeName=${nodeName}`),
  );
}

/**
 * The node's containerd (PID, the credential it loaded for `host`) at each write to the Node object,
 * taken right before the apiserver applies it: the last entry is what ran when the node was released.
 */
export function containerdAtNodeWrites(c: SimCluster, name: string, host = 'ghcr.io'): Array<{ pid: number; loaded: unknown }> {
  const seen: Array<{ pid: number; loaded: unknown }> = [];
  c.kube.beforeWrite({ method: 'PATCH', path: new RegExp(`^/api/v1/nodes/${name}$`) }, () => {
    const cd = c.talos.node(name).containerd;
    seen.push({ pid: cd.pid, loaded: structuredClone(cd.loadedCredential[host]) });
  });
  return seen;
}

/** Whether something accepts a TCP connection on `port` of the loopback (a twin still up, or shut down). */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}
