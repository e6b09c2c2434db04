// End to end: cancellation and the post step, the fence report and recovery (GitHub API
// answered by a local stub), a connection reset during the drain, and nodes that appear or are
// replaced mid-roll. The bundle (dist/index.js, dist/cleanup.js) through the real kubectl on the twin.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import type { ActionRun } from '../../runner/runAction.js';
import { startGitHubStub, type GitHubStub } from './githubStub.js';
import {
  A,
  act,
  ann,
  byName,
  drainRequests,
  node,
  postFindsNothingHeld,
  postStep,
  rebootReached,
  reboots,
  REVISION,
  requireKubectl,
  startCluster,
  verifiedRev,
} from './helpers.js';

const LEASE_NS = 'kube-system';
const LEASE_NAME = 'registry-auth-rollout';
const LEASE_PATH = `/apis/coordination.k8s.io/v1/namespaces/${LEASE_NS}/leases`;
const run = promisify(execFile);

let c: SimCluster | undefined;
let gh: GitHubStub | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await gh?.stop();
  gh = undefined;
  await c?.stop();
  c = undefined;
});

interface Step {
  name: string;
  ok: boolean;
  detail?: string;
}
/** The steps of one node's decision, read from the `decisions` output. */
const stepsOf = (r: ActionRun, name: string): Step[] =>
  (JSON.parse(r.outputs.decisions ?? '[]') as Array<{ name: string; steps?: Step[] }>).find((d) => d.name === name)?.steps ?? [];
const ownerOf = (r: ActionRun): string => /claim token for this run: (\S+)/.exec(r.stdout)?.[1] ?? '';
const leaseHolder = (cluster: SimCluster): string => cluster.kube.lease(LEASE_NS, LEASE_NAME)?.spec?.holderIdentity ?? '';
const writesSince = (cluster: SimCluster, seen: number) => cluster.kube.requests.slice(seen).filter((r) => r.method !== 'GET');
const ipOf = (cluster: SimCluster, name: string): string => cluster.talos.node(name).ip;
const talosMutationsOn = (cluster: SimCluster, name: string) =>
  cluster.talos.mutatingCommands().filter((x) => x.nodes.includes(ipOf(cluster, name)));

/** A command the action printed for people, run as a person would (bash, real kubectl, the twin's kubeconfig). */
async function runPrinted(cluster: SimCluster, command: string): Promise<string> {
  const { stdout } = await run('bash', ['-c', command], { env: { ...process.env, ...cluster.env() } });
  return stdout;
}

function unescapeHtml(s: string): string {
  return s
    .replace(/&#124;/g, '|')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The release command the fences summary shows for `name` (inside its <details>). */
function summaryReleaseCommand(summary: string, name: string): string {
  const m = new RegExp(`<summary>${name}: how to release it</summary>.*?<pre><code>(.*?)</code></pre>`, 's').exec(summary);
  if (!m) throw new Error(`no release command for ${name} in the summary:\n${summary}`);
  return unescapeHtml(m[1]);
}

async function createLease(cluster: SimCluster, holder: string): Promise<void> {
  const now = `${new Date().toISOString().slice(0, 23)}000Z`;
  const res = await fetch(`${cluster.kube.url}${LEASE_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: LEASE_NAME, namespace: LEASE_NS },
      spec: { holderIdentity: holder, leaseDurationSeconds: 120, acquireTime: now, renewTime: now },
    }),
  });
  expect(res.status).toBe(201);
}

const fence = (owner: string, phase: string, wasCordoned: string) => ({ [A.owner]: owner, [A.phase]: phase, [A.wasCordoned]: wasCordoned });
const tok = (runId: number, nonce: string) => `acme/platform/runs/${runId}/attempts/1/${nonce}`;

describe('e2e rails: cancellation and the post step', () => {
  it('cancelled during a drain: the drain ends at once, the main step gives the node back itself and releases the Lease; the post step has nothing left to do', async () => {
    c = await startCluster();
    c.kube.setPdbAllowed('default', 'web', 0);
    let killedAt = 0;
    const main = await act(
      c,
      { nodes: 'worker-1', 'drain-timeout': '120s' },
      { killWhen: (out) => out.includes('▶ drain') && (killedAt ||= Date.now()) > 0 },
    );
    const ended = Date.now();
    const owner = ownerOf(main);
    expect(owner).toMatch(/^acme\/platform\/runs\/\d+\/attempts\/1\/[0-9a-f]+$/);
    // The main step stopped long before the drain's own timeout (120 s) could end it, counted from the
    // SIGINT sent as the drain started (not from the test's start: a loaded runner takes 25 s and more
    // to get to the drain), and said why.
    expect(killedAt).toBeGreaterThan(0);
    expect(ended - killedAt).toBeLessThan(60_000);
    expect(main.exitCode).toBe(1);
    expect(main.outputs.result).toBe('failed');
    expect(main.stdout).toMatch(/received SIGINT/);
    const d = byName(main)['worker-1'];
    expect(d.outcome).toBe('failed');
    expect(d.reason).toMatch(/^drain ended: the run was cancelled/);
    expect(d.nextStep).toMatch(/^The run was cancelled during the drain: the node was uncordoned again/);
    expect(d.steps.map((s) => [s.name, s.ok])).toContainEqual(['release (restore)', true]);
    // The channel to the API server outlives the cancellation (docs/kube-channel.md), so the step's own
    // release, its Events and the Lease's release are sent after the signal and answered: nothing is
    // left held, and no Lease is handed to the post step.
    expect(main.state.held ?? '').toBe('');
    expect(main.state.lease ?? '').toBe('');
    expect(leaseHolder(c)).toBe('');
    expect(c.talos.mutatingCommands().filter((x) => x.command === 'reboot')).toEqual([]);
    expect(c.kube.pods().some((p: any) => p.metadata.name === 'web-1')).toBe(true);
    // The main step told the cluster: its release is on the node, as the run's own.
    const told = c.kube.events().filter((e: any) => e.involvedObject?.name === 'worker-1' && e.reportingInstance === owner);
    expect(told.map((e: any) => e.type)).toContain('Warning');
    expect(told[0].involvedObject.uid).toBe(node(c, 'worker-1').metadata.uid);
    // Schedulable as before the run, no claim left, not marked verified (it was never rebooted), and
    // the autoscaler marks it carried while held are gone.
    const marks = ['cluster-autoscaler.kubernetes.io/scale-down-disabled', 'karpenter.sh/do-not-disrupt'];
    const n = node(c, 'worker-1');
    expect(n.spec.unschedulable).toBeFalsy();
    // The lifecycle controller drops the cordon's mirror taint asynchronously, a moment after the uncordon.
    await expect
      .poll(() => (node(c!, 'worker-1').spec.taints ?? []).map((t: any) => t.key), { timeout: 5000, interval: 100 })
      .not.toContain('node.kubernetes.io/unschedulable');
    for (const k of [A.owner, A.phase, A.wasCordoned, A.verified, ...marks, 'registry-auth-rollout/autoscaler-marks']) {
      expect(ann(c, 'worker-1')[k]).toBeUndefined();
    }
    await postFindsNothingHeld(c, main);
    expect(c.kube.events().filter((e: any) => String(e.message).startsWith('post step:'))).toEqual([]);
  });

  it('cancelled during a drain, and the release after it lands with its answer never coming: main waits 3 s at most, says the node may still carry its claim, and the post step finds it given back', async () => {
    c = await startCluster();
    const cluster = c;
    cluster.kube.setPdbAllowed('default', 'web', 0);
    const main = await act(
      cluster,
      { nodes: 'worker-1', 'drain-timeout': '120s' },
      {
        killWhen: (out) => {
          if (!out.includes('▶ drain')) return false;
          // the next write of worker-1 is main's release: applied by the API server, never answered
          cluster.kube.failNext({ method: 'PATCH', path: /^\/api\/v1\/nodes\/worker-1$/ }, { hang: true, land: true });
          return true;
        },
      },
    );
    expect(main.stdout).toMatch(/received SIGINT/);
    expect(main.exitCode).toBe(1);
    // the release landed: nothing of this run is left on the node
    expect(ann(cluster, 'worker-1')[A.owner]).toBeUndefined();
    expect(node(cluster, 'worker-1').spec.unschedulable).toBeFalsy();
    // main could not see it land: it never says it gave the node back, and hands it to the post step
    const d = byName(main)['worker-1'];
    expect(d.reason).toMatch(/releasing the claim failed too/);
    expect(d.reason).toMatch(/no answer within \d+ ms/);
    expect(d.nextStep).toMatch(/may still carry this run's claim/);
    expect(JSON.parse(main.state.held).map((h: { node: string }) => h.node)).toEqual(['worker-1']);
    expect(main.outputs['old-credential-revocable']).toBe('false');
    // its report was still published within the runner's grace
    expect(main.outputs.result).toBe('failed');
    const post = await postStep(cluster, main);
    expect(post.exitCode, post.stdout).toBe(0);
    expect(ann(cluster, 'worker-1')[A.owner]).toBeUndefined();
    expect(leaseHolder(cluster)).toBe('');
    expect(reboots(cluster, 'worker-1')).toEqual([]);
  });

  it('killed during a drain (no handler runs): the post step gives the node back and releases the Lease', async () => {
    c = await startCluster();
    c.kube.setPdbAllowed('default', 'web', 0);
    const main = await act(
      c,
      { nodes: 'worker-1', 'drain-timeout': '120s' },
      { killWhen: (out) => out.includes('▶ drain'), killSignal: 'SIGKILL' },
    );
    const owner = ownerOf(main);
    expect(main.exitCode).toBeNull();
    expect(JSON.parse(main.state.held)).toMatchObject([{ node: 'worker-1', phase: 'draining', owner }]);
    expect(JSON.parse(main.state.lease)).toEqual({ namespace: LEASE_NS, name: LEASE_NAME, owner });
    expect(c.talos.mutatingCommands().filter((x) => x.command === 'reboot')).toEqual([]);
    // Left held by the killed main step: the autoscalers are kept off it until the post step releases it.
    const marks = ['cluster-autoscaler.kubernetes.io/scale-down-disabled', 'karpenter.sh/do-not-disrupt'];
    for (const k of marks) expect(ann(c, 'worker-1')[k]).toBe('true');

    const post = await postStep(c, main);
    expect(post.exitCode, post.stdout).toBe(0);
    expect(post.annotations.some((a) => a.kind === 'notice' && a.title === 'worker-1: released by the post step')).toBe(true);
    expect(post.stdout).toMatch(/released the run Lease kube-system\/registry-auth-rollout/);
    // The main step was stopped before it told the cluster; the post step's release is on the node.
    const told = c.kube.events().filter((e: any) => e.involvedObject?.name === 'worker-1' && String(e.message).startsWith('post step:'));
    expect(told.map((e: any) => [e.reason, e.type, e.reportingInstance])).toEqual([['Released', 'Normal', owner]]);
    expect(told[0].involvedObject.uid).toBe(node(c, 'worker-1').metadata.uid);
    expect(node(c, 'worker-1').spec.unschedulable).toBeFalsy();
    for (const k of [A.owner, A.phase, A.wasCordoned, A.verified, ...marks, 'registry-auth-rollout/autoscaler-marks']) {
      expect(ann(c, 'worker-1')[k]).toBeUndefined();
    }
    expect(leaseHolder(c)).toBe('');
  });

  it('cancelled after the drain, while the boot id is read before the Reboot: no reboot sent, and the main step gives the node back itself', async () => {
    c = await startCluster();
    const cluster = c;
    // The boot id read that precedes the Reboot is held until the run is stopped: the window a loaded
    // machine opens between the step's `▶ reboot` line and the Reboot, made certain.
    const hold = cluster.talos.holdNextCall('/machine.MachineService/Read', {
      node: 'worker-1',
      matches: (req) => String(req.path).includes('boot_id'),
    });
    const main = await act(cluster, { nodes: 'worker-1' }, { killOn: hold.reached });
    hold.release();
    expect(main.exitCode).toBe(1);
    expect(main.stdout).toMatch(/received SIGINT/);
    expect(reboots(cluster, 'worker-1')).toEqual([]);
    const d = byName(main)['worker-1'];
    expect(d.outcome, main.stdout).toBe('failed');
    expect(d.reason).toMatch(/^the reboot was not sent, so its containerd still holds the old credential/);
    // the read the run's own cancellation ended is said as such, not as the node's failure or an outage
    expect(d.reason).toMatch(/could not be read \(read once\): \S+ for \S+ via \S+ failed \(cancelled: rpc error: code = Canceled/);
    // Its config carries the new credential, its running containerd the old one: nothing may revoke it.
    expect(main.outputs['old-credential-revocable']).toBe('false');
    // The main step gives the node back as after a failed drain, itself: the channel to the API server
    // outlives the cancellation (docs/kube-channel.md), so its release is sent and answered, and nothing
    // is left held for the post step.
    expect(main.state.held ?? '', main.stdout).toBe('');
    expect(d.reason).not.toMatch(/releasing the claim failed too/);
    expect(d.steps.map((s) => [s.name, s.ok])).toContainEqual(['release (restore)', true]);
    await postFindsNothingHeld(cluster, main);
    // Given back: schedulable, no claim, not verified, the Lease free; never rebooted.
    expect(node(cluster, 'worker-1').spec.unschedulable).toBeFalsy();
    for (const k of [A.owner, A.phase, A.wasCordoned, A.verified]) expect(ann(cluster, 'worker-1')[k]).toBeUndefined();
    expect(leaseHolder(cluster)).toBe('');
    expect(reboots(cluster, 'worker-1')).toEqual([]);
  });

  it('cancelled during the reboot: the post step leaves the node fenced, says what to check and how to release it, keeps the Lease', async () => {
    c = await startCluster();
    // Stopped once the Reboot has reached the machine (rebootReached says why not at the step's start line).
    const main = await act(c, { nodes: 'worker-1' }, { killOn: rebootReached(c, 'worker-1') });
    const owner = ownerOf(main);
    expect(main.exitCode).toBe(1);
    expect(main.outputs.result).toBe('failed');
    // The main step ended on it and left it fenced; it was stopped while rebooting.
    expect(JSON.parse(main.state.held)).toMatchObject([{ node: 'worker-1', phase: 'left-fenced', stoppedIn: 'rebooting', owner }]);
    expect(main.stdout).toMatch(/run Lease: kept/);

    const post = await postStep(c, main);
    expect(post.exitCode).toBe(1);
    const err = post.annotations.find((a) => a.kind === 'error' && a.title === 'worker-1: left fenced by a stopped run');
    expect(err, post.stdout).toBeDefined();
    const ip = ipOf(c, 'worker-1');
    expect(err!.message).toContain('phase=mutating');
    expect(err!.message).toContain('`kubectl get node worker-1`');
    expect(err!.message).toContain(`\`talosctl -n ${ip} service cri\``);
    expect(err!.message).toContain(`\`talosctl -n ${ip} version\``);
    expect(err!.message).toMatch(/recover-fences/);
    expect(post.annotations.some((a) => a.kind === 'warning' && a.title === 'run Lease kept')).toBe(true);
    // `kubectl describe node` shows the same: a Warning whose message is the annotation's next step.
    const told = c.kube.events().filter((e: any) => e.involvedObject?.name === 'worker-1' && String(e.message).startsWith('post step:'));
    expect(told.map((e: any) => [e.reason, e.type])).toEqual([['RolloutFailed', 'Warning']]);
    expect(told[0].message).toContain(`\`talosctl -n ${ip} service cri\``);
    // Fenced: cordoned, still claimed by the cancelled run in phase mutating, not verified; the Lease still its.
    expect(node(c, 'worker-1').spec.unschedulable).toBe(true);
    expect(ann(c, 'worker-1')[A.owner]).toBe(owner);
    expect(ann(c, 'worker-1')[A.phase]).toBe('mutating');
    expect(ann(c, 'worker-1')[A.wasCordoned]).toBe('false');
    expect(ann(c, 'worker-1')[A.verified]).toBeUndefined();
    expect(leaseHolder(c)).toBe(owner);

    // The printed release command does what it says, as a person would run it.
    const cmd = /release it: `([^`]+)`/.exec(err!.message)?.[1];
    expect(cmd).toMatch(/^kubectl patch node worker-1 --type=json -p '/);
    await runPrinted(c, cmd!);
    expect(node(c, 'worker-1').spec.unschedulable).toBeFalsy();
    for (const k of [A.owner, A.phase, A.wasCordoned]) expect(ann(c, 'worker-1')[k]).toBeUndefined();
  });
});

describe('e2e rails: fences and recover-fences (GitHub API on a local stub)', () => {
  it('mode fences on two leftover fences: exit 0, a summary row and a working release command for each, no write anywhere', async () => {
    c = await startCluster({ defaultNodes: false });
    const t101 = tok(101, 'aaaa01');
    const t102 = tok(102, 'bbbb02');
    c.addNode({ name: 'worker-1', role: 'worker', cordoned: true, annotations: fence(t101, 'claimed', 'false') });
    c.addNode({ name: 'worker-2', role: 'worker', cordoned: true, annotations: fence(t102, 'mutating', 'true') });
    c.addNode({ name: 'worker-3', role: 'worker' });
    await createLease(c, t102);
    gh = await startGitHubStub({
      'acme/platform/runs/101/attempts/1': { status: 'completed', conclusion: 'cancelled' },
      'acme/platform/runs/102/attempts/1': { status: 'in_progress' },
    });
    const seen = c.kube.requests.length;
    const before = { w1: ann(c, 'worker-1'), w2: ann(c, 'worker-2') };

    const r = await act(
      c,
      { mode: 'fences', 'github-token': 'ghs_stubtoken123' },
      { env: { ...c.env(), GITHUB_API_URL: gh.url, NO_PROXY: '127.0.0.1' } },
    );
    expect(r.exitCode, r.stdout).toBe(0);
    expect(r.outputs.result).toBe('clean');
    expect(r.outputs.refused).toBe('0');
    // every mode sets every output: the fences modes roll no node, so none is left or was in flight
    expect([r.outputs.left, r.outputs['in-flight-max'], r.outputs.rebooted, r.outputs['reboots-skipped']]).toEqual(['0', '0', '0', '0']);
    expect(r.stdout).toContain('::add-mask::ghs_stubtoken123');
    // Read-only: no write request at all, nothing on Talos.
    expect(writesSince(c, seen)).toEqual([]);
    expect(c.talos.mutatingCommands()).toEqual([]);
    expect(ann(c, 'worker-1')).toEqual(before.w1);
    expect(ann(c, 'worker-2')).toEqual(before.w2);
    // Both owners' runs were looked up with the token.
    expect(gh.requests.map((q) => q.path).sort()).toEqual([
      '/repos/acme/platform/actions/runs/101/attempts/1',
      '/repos/acme/platform/actions/runs/102/attempts/1',
    ]);
    for (const q of gh.requests) expect(q.headers.authorization).toBe('token ghs_stubtoken123');

    const rows = JSON.parse(r.outputs.decisions);
    expect(rows.map((x: any) => [x.node, x.owner, x.phase, x.wasCordoned, x.schedulableNow, x.run?.state])).toEqual([
      ['worker-1', t101, 'claimed', 'false', false, 'completed'],
      ['worker-2', t102, 'mutating', 'true', false, 'in_progress'],
    ]);
    const s = r.summary;
    expect(s).toMatch(/2 nodes carrying a claim/);
    expect(s).toContain(t101);
    expect(s).toContain(t102);
    expect(s).toMatch(/completed \(cancelled\)/);
    expect(s).toMatch(/in progress/);
    expect(s).not.toContain('worker-3');
    // The Lease and its holder, with the command that frees it.
    expect(s).toContain('kube-system/registry-auth-rollout');
    expect(unescapeHtml(s)).toContain(`kubectl patch lease -n 'kube-system' 'registry-auth-rollout' --type=json`);
    const cmd1 = summaryReleaseCommand(s, 'worker-1');
    const cmd2 = summaryReleaseCommand(s, 'worker-2');
    expect(cmd1).toMatch(/^kubectl patch node worker-1 --type=json -p '/);
    expect(cmd2).toMatch(/^kubectl patch node worker-2 --type=json -p '/);
    // CAS-guarded on the uid and the owner token.
    expect(cmd1).toContain(node(c, 'worker-1').metadata.uid);
    expect(cmd1).toContain(t101);
    expect(cmd2).toContain(t102);

    // The printed commands work: worker-1 (was-cordoned=false) is uncordoned, worker-2 (true) stays cordoned.
    await runPrinted(c, cmd1);
    await runPrinted(c, cmd2);
    expect(node(c, 'worker-1').spec.unschedulable).toBeFalsy();
    expect(node(c, 'worker-2').spec.unschedulable).toBe(true);
    for (const n of ['worker-1', 'worker-2']) for (const k of [A.owner, A.phase, A.wasCordoned]) expect(ann(c, n)[k]).toBeUndefined();
  });

  it('recover-fences releases only completed runs’ claimed fences (restoring schedulability), refuses a mutating one and one whose run is in progress', async () => {
    c = await startCluster({ defaultNodes: false });
    const t101 = tok(101, 'aaaa01');
    const t102 = tok(102, 'bbbb02');
    const t103 = tok(103, 'cccc03');
    const t104 = tok(104, 'dddd04');
    c.addNode({ name: 'worker-1', role: 'worker', cordoned: true, annotations: fence(t101, 'claimed', 'false') });
    c.addNode({ name: 'worker-2', role: 'worker', cordoned: true, annotations: fence(t102, 'mutating', 'false') });
    c.addNode({ name: 'worker-3', role: 'worker', cordoned: true, annotations: fence(t103, 'claimed', 'false') });
    c.addNode({
      name: 'worker-4',
      role: 'worker',
      cordoned: true,
      annotations: { ...fence(t104, 'claimed', 'true'), 'ops.acme.io/cordon-reason': 'RMA' },
    });
    // The Lease is still held by run 101, which has completed (killed runner): it is released too.
    await createLease(c, t101);
    gh = await startGitHubStub({
      'acme/platform/runs/101/attempts/1': { status: 'completed', conclusion: 'cancelled' },
      'acme/platform/runs/102/attempts/1': { status: 'completed', conclusion: 'failure' },
      'acme/platform/runs/103/attempts/1': { status: 'in_progress' },
      'acme/platform/runs/104/attempts/1': { status: 'completed', conclusion: 'success' },
    });
    const seen = c.kube.requests.length;
    const before = { w2: node(c, 'worker-2'), w3: node(c, 'worker-3') };

    const r = await act(
      c,
      { mode: 'recover-fences', 'github-token': 'ghs_stubtoken123' },
      { env: { ...c.env(), GITHUB_API_URL: gh.url, NO_PROXY: '127.0.0.1' } },
    );
    expect(r.exitCode, r.stdout).toBe(0);
    expect(r.outputs.result).toBe('processed');
    expect(r.outputs.refused).toBe('2');
    expect([r.outputs.left, r.outputs['in-flight-max']]).toEqual(['0', '0']);
    expect(gh.requests.length).toBe(4);

    // Exactly three writes: the Lease release and the two node releases, each a CAS-guarded JSON patch.
    const writes = writesSince(c, seen);
    expect(writes.map((w) => `${w.method} ${w.path} ${w.status}`)).toEqual([
      `PATCH ${LEASE_PATH}/${LEASE_NAME} 200`,
      'PATCH /api/v1/nodes/worker-1 200',
      'PATCH /api/v1/nodes/worker-4 200',
    ]);
    expect(c.talos.mutatingCommands()).toEqual([]);
    expect(leaseHolder(c)).toBe('');

    // Released: no claim left; worker-1 uncordoned (was-cordoned=false), worker-4 kept cordoned with its operator note.
    for (const n of ['worker-1', 'worker-4']) for (const k of [A.owner, A.phase, A.wasCordoned]) expect(ann(c, n)[k]).toBeUndefined();
    expect(node(c, 'worker-1').spec.unschedulable).toBeFalsy();
    expect(node(c, 'worker-4').spec.unschedulable).toBe(true);
    expect(ann(c, 'worker-4')['ops.acme.io/cordon-reason']).toBe('RMA');
    // Refused and untouched (the write list above has no request on them either).
    for (const [n, b] of [
      ['worker-2', before.w2],
      ['worker-3', before.w3],
    ] as const) {
      expect(ann(c, n)).toEqual(b.metadata.annotations);
      expect(node(c, n).spec.unschedulable).toBe(true);
    }
    const w2 = r.annotations.find((a) => a.title === 'worker-2: fence left in place');
    const w3 = r.annotations.find((a) => a.title === 'worker-3: fence left in place');
    expect(w2?.kind).toBe('warning');
    expect(w2?.message).toMatch(/phase is mutating/);
    expect(w3?.message).toMatch(/in progress/);
    expect(r.annotations.some((a) => a.title.startsWith('worker-1') || a.title.startsWith('worker-4'))).toBe(false);
    // Every release is reported.
    expect(r.stdout).toMatch(/Lease kube-system\/registry-auth-rollout: released from acme\/platform\/runs\/101\//);
    expect(r.stdout).toMatch(/worker-1: released/);
    expect(r.stdout).toMatch(/worker-4: released/);
    expect(r.summary).toMatch(/worker-2.*refused: /s);
  });
});

describe('e2e rails: transport interruptions and a cluster that changes mid-roll', () => {
  it('a connection reset on the drain’s eviction: /readyz, guard, one retry under the same claim, the roll succeeds', async () => {
    c = await startCluster();
    c.kube.failNext({ method: 'POST', path: /\/pods\/web-1\/eviction$/ }, { drop: true });
    const r = await act(c, { nodes: 'worker-1' });
    expect(r.exitCode, r.stdout).toBe(0);
    const d = byName(r)['worker-1'];
    expect(d.outcome).toBe('rebooted');
    const all = stepsOf(r, 'worker-1');
    const steps = all.map((s) => s.name);
    const i = steps.indexOf('drain');
    expect(steps.slice(i, i + 4)).toEqual([
      'drain',
      'wait for the apiserver (/readyz)',
      'guard (after the drain was cut off)',
      'drain (retry after a transport failure)',
    ]);
    expect(steps.filter((s) => s.startsWith('drain'))).toHaveLength(2);
    expect(all[i].ok).toBe(false);
    expect(all[i].detail).toMatch(/transport/);
    expect(all[i + 3].ok).toBe(true);
    // The dropped eviction, then the retried one that succeeded; exactly one reboot; one claim (no re-claim).
    expect(c.kube.requests.filter((q) => q.method === 'POST' && q.path.endsWith('/pods/web-1/eviction')).map((q) => q.status)).toEqual([
      0, 201,
    ]);
    expect(c.talos.mutatingCommands().filter((x) => x.command === 'reboot')).toHaveLength(1);
    expect(d.claim?.attempts).toBe(1);
    expect(verifiedRev(ann(c, 'worker-1'))).toBe(REVISION);
    expect(ann(c, 'worker-1')[A.owner]).toBeUndefined();
    expect(node(c, 'worker-1').spec.unschedulable).toBeFalsy();
    expect(leaseHolder(c)).toBe('');
  });

  it('a node added by the autoscaler mid-roll is listed again and rolled before the run ends (once)', async () => {
    c = await startCluster({ defaultNodes: false });
    const cluster = c;
    cluster.addNode({ name: 'worker-1', role: 'worker' });
    cluster.kube.addPod({
      namespace: 'default',
      name: 'web-1',
      nodeName: 'worker-1',
      owner: { kind: 'ReplicaSet', name: 'web-7d4b9' },
      labels: { app: 'web' },
    });
    cluster.kube.addPdb({ namespace: 'default', name: 'web', selector: { app: 'web' }, disruptionsAllowed: 1 });
    let added = 0;
    cluster.kube.beforeWrite({ method: 'POST', path: /\/eviction$/, once: true }, () => {
      added++;
      // a scale-out node: booted from the current machine config, so it is patched and verified, not rebooted
      cluster.addNode({ name: 'worker-9', role: 'worker', current: true });
    });
    const r = await act(cluster, {});
    expect(added).toBe(1);
    expect(r.exitCode, r.stdout).toBe(0);
    expect(r.outputs.result).toBe('processed');
    expect(r.stdout).toMatch(/listing again found 1 more node\(s\) to roll: worker-9/);
    expect(Object.keys(byName(r))).toEqual(['worker-1', 'worker-9']);
    expect(byName(r)['worker-1'].outcome).toBe('rebooted');
    expect(byName(r)['worker-9'].outcome).toBe('reboot-skipped');
    expect(r.outputs.rebooted).toBe('1');
    expect(r.outputs['reboots-skipped']).toBe('1');
    for (const n of ['worker-1', 'worker-9']) {
      expect(verifiedRev(ann(cluster, n))).toBe(REVISION);
      expect(ann(cluster, n)[A.owner]).toBeUndefined();
      expect(node(cluster, n).spec.unschedulable).toBeFalsy();
      // Processed exactly once each: one credential patch per node.
      expect(talosMutationsOn(cluster, n).filter((x) => x.command === 'patch')).toHaveLength(1);
    }
    expect(talosMutationsOn(cluster, 'worker-9').filter((x) => x.command === 'reboot')).toEqual([]);
    expect(r.summary).toContain('worker-9');
    expect(leaseHolder(cluster)).toBe('');
  });

  it('a node replaced while an earlier node is drained: refused at its turn, nothing done to it', async () => {
    // rebootMs 2000: worker-1's drain is near-instant, and with the default 1 s reboot the new containerd
    // can start within the 2 s evidence margin of the patch, failing the proof (a twin-speed artefact).
    c = await startCluster({ defaultNodes: false, rebootMs: 2000 });
    const cluster = c;
    cluster.addNode({ name: 'worker-1', role: 'worker' });
    cluster.addNode({ name: 'worker-2', role: 'worker' });
    cluster.kube.addPod({
      namespace: 'default',
      name: 'web-1',
      nodeName: 'worker-1',
      owner: { kind: 'ReplicaSet', name: 'web-7d4b9' },
      labels: { app: 'web' },
    });
    const uidBefore = node(cluster, 'worker-2').metadata.uid;
    cluster.kube.beforeWrite({ method: 'POST', path: /\/eviction$/, once: true }, () => cluster.kube.replaceNode('worker-2'));
    const r = await act(cluster, { nodes: 'worker-1,worker-2' });
    expect(node(cluster, 'worker-2').metadata.uid).not.toBe(uidBefore);
    expect(
      Object.values(byName(r)).map((d) => [d.name, d.outcome]),
      r.stdout,
    ).toEqual([
      ['worker-1', 'rebooted'],
      ['worker-2', 'refused'],
    ]);
    expect(r.exitCode).toBe(1);
    expect(r.outputs.result).toBe('failed');
    expect(r.outputs.refused).toBe('1');
    const d = byName(r)['worker-2'];
    expect(d.outcome).toBe('refused');
    expect(d.reason).toMatch(/uid/);
    expect(talosMutationsOn(cluster, 'worker-2')).toEqual([]);
    expect(cluster.kube.mutatingRequests().filter((q) => q.path === '/api/v1/nodes/worker-2')).toEqual([]);
    expect(drainRequests(cluster, 'worker-2')).toEqual([]);
    expect(node(cluster, 'worker-2').spec.unschedulable).toBeFalsy();
    expect(ann(cluster, 'worker-2')[A.owner]).toBeUndefined();
    expect(ann(cluster, 'worker-2')[A.verified]).toBeUndefined();
    expect(leaseHolder(cluster)).toBe('');
  });

  it('a node replaced right after this run claimed it: the run fails before any Talos mutation on it', async () => {
    c = await startCluster();
    const cluster = c;
    let replaced = 0;
    // The hook runs just before the claim PATCH is applied; the replacement happens just after it.
    cluster.kube.beforeWrite({ method: 'PATCH', path: /^\/api\/v1\/nodes\/worker-1$/, once: true }, () =>
      setImmediate(() => {
        replaced++;
        cluster.kube.replaceNode('worker-1');
      }),
    );
    const r = await act(cluster, { nodes: 'worker-1' });
    expect(replaced).toBe(1);
    expect(r.exitCode).toBe(1);
    expect(r.outputs.result).toBe('failed');
    const d = byName(r)['worker-1'];
    expect(['refused', 'failed']).toContain(d.outcome);
    expect(d.claim?.attempts).toBe(1);
    // phase=mutating is CAS-guarded on the uid: it fails, and nothing on Talos or the pods is touched.
    expect(stepsOf(r, 'worker-1').find((s) => s.name === 'phase=mutating')?.ok).toBe(false);
    expect(cluster.talos.mutatingCommands()).toEqual([]);
    expect(drainRequests(cluster, 'worker-1')).toEqual([]);
    expect(ann(cluster, 'worker-1')[A.verified]).toBeUndefined();
    expect(r.annotations.some((a) => a.kind === 'error' && a.title.startsWith('worker-1'))).toBe(true);
    // What the report tells the user must be true. The restore (uid-guarded) cannot apply to the new
    // object, which (in the twin, re-registered with the old object's metadata) still carries this
    // run's claim: the next step must not say the claim was released.
    const restore = stepsOf(r, 'worker-1').find((s) => s.name === 'release (restore)');
    if (restore && !restore.ok && ann(cluster, 'worker-1')[A.owner] === ownerOf(r)) {
      expect(d.nextStep).not.toMatch(/claim was released/i);
    }
  });

  it('a node replaced right after phase=mutating: re-bound before the credential patch, no Talos mutation, left fenced with the Lease kept', async () => {
    c = await startCluster();
    const cluster = c;
    let patches = 0;
    // The second PATCH of worker-1 is phase=mutating; the replacement happens just after it is applied.
    cluster.kube.beforeWrite({ method: 'PATCH', path: /^\/api\/v1\/nodes\/worker-1$/ }, () => {
      if (++patches === 2) setImmediate(() => cluster.kube.replaceNode('worker-1'));
    });
    const r = await act(cluster, { nodes: 'worker-1' });
    expect(r.exitCode).toBe(1);
    const d = byName(r)['worker-1'];
    expect(d.outcome).toBe('failed');
    expect(d.reason).toMatch(/node changed before the credential patch: uid changed .* \(the node was re-created\)/);
    expect(
      stepsOf(r, 'worker-1')
        .map((s) => s.name)
        .slice(-2),
    ).toEqual(['phase=mutating', 're-read node (before the credential patch)']);
    expect(cluster.talos.mutatingCommands()).toEqual([]);
    expect(drainRequests(cluster, 'worker-1')).toEqual([]);
    expect(ann(cluster, 'worker-1')[A.verified]).toBeUndefined();
    expect(leaseHolder(cluster)).toBe(ownerOf(r));
    expect(r.stdout).toMatch(/run Lease: kept/);
  });
});
