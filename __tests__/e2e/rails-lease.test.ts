// End to end: one run at a time. The bundle through the real kubectl on the twin, with the
// run Lease (coordination.k8s.io/v1) created, held and stolen by other "runs".
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import type { ActionRun, RunActionOptions } from '../../runner/runAction.js';
import { annotationPath } from '../../src/rules/pointer.js';
import {
  A,
  act,
  ann,
  byName,
  fromAction,
  isDrainRequest,
  node,
  REVISION,
  requireKubectl,
  startCluster,
  TEST_KNOBS,
  verifiedRev,
} from './helpers.js';

const LEASE_NS = 'kube-system';
const LEASE_NAME = 'registry-auth-rollout';
const LEASE_PATH = `/apis/coordination.k8s.io/v1/namespaces/${LEASE_NS}/leases`;

let c: SimCluster | undefined;
const timers: Array<ReturnType<typeof setInterval>> = [];
beforeAll(() => requireKubectl());
afterEach(async () => {
  for (const t of timers.splice(0)) clearInterval(t);
  await c?.stop();
  c = undefined;
});

/** The bundle as a run with a fixed GITHUB_RUN_ID (so its owner token and run URL are known). */
function actAs(
  cluster: SimCluster,
  runId: string,
  inputs: Record<string, string>,
  extra: Partial<RunActionOptions> = {},
  env: Record<string, string> = {},
): Promise<ActionRun> {
  return act(cluster, inputs, {
    env: { ...cluster.env(), ...TEST_KNOBS, GITHUB_RUN_ID: runId, ...env },
    ...extra,
  });
}

/** Another actor writing through the twin's HTTP API (no kubectl): shows in c.kube.requests without a kubectl command. */
async function api(
  cluster: SimCluster,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${cluster.kube.url}${path}`, {
    method,
    headers: { 'content-type': contentType, accept: 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** A Kubernetes Event the action wrote (a create in any namespace's events). */
function isEventWrite(r: { method: string; path: string }): boolean {
  return r.method === 'POST' && /\/api\/v1\/namespaces\/[^/]+\/events$/.test(r.path);
}

function microTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 23)}000Z`;
}

/** Resolves when `cond` holds (polled), rejects after `ms`. */
function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const start = Date.now();
    const t = setInterval(() => {
      if (cond()) {
        clearInterval(t);
        resolve();
      } else if (Date.now() - start > ms) {
        clearInterval(t);
        reject(new Error(`timed out waiting for ${what}`));
      }
    }, 50);
    timers.push(t);
  });
}

interface Step {
  name: string;
  ok: boolean;
  detail?: string;
}
/** The steps of one node's decision, read from the `decisions` output. */
const stepsOf = (r: ActionRun, name: string): Step[] =>
  (JSON.parse(r.outputs.decisions ?? '[]') as Array<{ name: string; steps?: Step[] }>).find((d) => d.name === name)?.steps ?? [];
const ownerOf = (run: ActionRun): string => /claim token for this run: (\S+)/.exec(run.stdout)?.[1] ?? '';
const leaseRequests = (cluster: SimCluster) => cluster.kube.requests.filter((r) => r.path.startsWith(LEASE_PATH));

describe('e2e rails: one run at a time (the run Lease)', () => {
  // A Lease another run holds is never judged by its own times (another machine's clock): the run
  // watches it on its own clock. Written during the watch: its holder is alive, refused. Left unrenewed
  // for its whole duration and the margin: taken over (docs/recovery.md).
  it('a Lease another run renews while this run watches it (its times say long expired): refused naming the holder, its run URL and the nodes it holds; nothing touched', async () => {
    c = await startCluster();
    const cluster = c;
    const holder = 'acme/platform/runs/4242/attempts/2/0c0ffee0';
    const renewed = microTime(Date.now() - 3_600_000); // an hour ago: far past its 120 s duration, by its own clock
    const created = await api(cluster, 'POST', LEASE_PATH, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: LEASE_NAME, namespace: LEASE_NS },
      spec: { holderIdentity: holder, leaseDurationSeconds: 120, acquireTime: renewed, renewTime: renewed, leaseTransitions: 3 },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // The holder has worker-2 claimed (a claim this run could adopt, were the Lease abandoned).
    const claimed = await api(
      cluster,
      'PATCH',
      '/api/v1/nodes/worker-2',
      [
        { op: 'add', path: annotationPath(A.owner), value: holder },
        { op: 'add', path: annotationPath(A.phase), value: 'claimed' },
        { op: 'add', path: annotationPath(A.wasCordoned), value: 'false' },
        { op: 'add', path: '/spec/unschedulable', value: true },
      ],
      'application/json-patch+json',
    );
    expect(claimed.status, JSON.stringify(claimed.body)).toBe(200);
    const seen = cluster.kube.requests.length;
    // The holder renews once the run has started watching (its first read of the Lease), from the twin's log.
    let renewedAt = 0;
    const renewal = until(
      () => cluster.kube.requests.slice(seen).some((r) => r.method === 'GET' && r.path === `${LEASE_PATH}/${LEASE_NAME}` && fromAction(r)),
      240_000,
      "the run's first read of the Lease",
    ).then(async () => {
      const r = await api(
        cluster,
        'PATCH',
        `${LEASE_PATH}/${LEASE_NAME}`,
        [{ op: 'replace', path: '/spec/renewTime', value: microTime(Date.now()) }],
        'application/json-patch+json',
      );
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      renewedAt = Date.now();
    });
    const rvRenewed = () => cluster.kube.lease(LEASE_NS, LEASE_NAME).metadata.resourceVersion;

    const run = await actAs(cluster, '5151', { nodes: 'worker-1,worker-2' });
    await renewal;
    expect(run.exitCode, run.stdout).toBe(1);
    expect(run.outputs.result).toBe('failed');
    expect(run.outputs.decisions).toBe('[]');
    expect(run.outputs.rebooted).toBe('0');
    // Refused only after the renewal it saw (not on the holder's times, which said expired).
    expect(renewedAt).toBeGreaterThan(0);
    expect(run.stdout).toMatch(/it changed while watched/);
    const error = run.annotations.find((a) => a.kind === 'error');
    expect(error?.message).toContain(`Lease ${LEASE_NS}/${LEASE_NAME} is held by ${holder}`);
    expect(error?.message).toContain('https://github.com/acme/platform/actions/runs/4242/attempts/2');
    expect(error?.message).toMatch(/renewed recently/);
    expect(error?.message).toMatch(/The Lease is kept for node\(s\) that run left claimed:\n- worker-2 \(phase=claimed, cordoned\)/);
    expect(run.summary).toContain(holder);
    // Nothing touched by the run: no write of its own, no Talos mutation, the Lease as the holder renewed it.
    expect(cluster.kube.requests.slice(seen).filter((r) => r.method !== 'GET' && fromAction(r))).toEqual([]);
    expect(cluster.talos.mutatingCommands()).toEqual([]);
    const lease = cluster.kube.lease(LEASE_NS, LEASE_NAME);
    expect(lease.metadata.resourceVersion).toBe(rvRenewed());
    expect(lease.spec.holderIdentity).toBe(holder);
    expect(lease.spec.leaseTransitions).toBe(3);
    expect(ann(cluster, 'worker-2')[A.owner]).toBe(holder);
    expect(ann(cluster, 'worker-1')[A.owner]).toBeUndefined();
    expect(node(cluster, 'worker-1').spec.unschedulable).toBeFalsy();
    // The post step of the refused run has nothing of its own to clean up (it never held the Lease).
    expect(run.state.lease ?? '').toBe('');
  });

  it('a Lease nobody renews (its job was killed; its own times say fresh) is taken over once unchanged for its duration and the margin on the twin clock; the run then rolls', async () => {
    c = await startCluster();
    const cluster = c;
    const holder = 'acme/platform/runs/4242/attempts/2/0c0ffee0';
    const durationS = 3;
    const now = microTime(Date.now()); // fresh by its own times: a run killed a moment ago looks exactly so
    const created = await api(cluster, 'POST', LEASE_PATH, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: LEASE_NAME, namespace: LEASE_NS },
      spec: { holderIdentity: holder, leaseDurationSeconds: durationS, acquireTime: now, renewTime: now, leaseTransitions: 3 },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const seen = cluster.kube.requests.length;

    const run = await actAs(cluster, '5151', { nodes: 'worker-3' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('processed');
    expect(run.stdout).toContain(`took over the Lease from ${holder}`);
    // The first write to the Lease is the take-over, sent only after the Lease stayed unchanged for its
    // duration and the margin (max(1 s, a tenth)) since the run's first read of it, on the twin's clock.
    const leaseReqs = cluster.kube.requests.slice(seen).filter((r) => r.path === `${LEASE_PATH}/${LEASE_NAME}` && fromAction(r));
    const firstRead = leaseReqs.find((r) => r.method === 'GET');
    const takeOver = leaseReqs.find((r) => r.method !== 'GET');
    expect(firstRead, run.stdout).toBeDefined();
    expect(takeOver?.method).toBe('PATCH');
    expect(takeOver?.status).toBe(200);
    expect(takeOver!.at - firstRead!.at).toBeGreaterThanOrEqual(durationS * 1000 + 1000);
    // The run rolled its node and released the Lease it took over (one transition more than it had).
    expect(byName(run)['worker-3'].outcome).toBe('reboot-skipped');
    expect(verifiedRev(ann(cluster, 'worker-3'))).toBe(REVISION);
    const lease = cluster.kube.lease(LEASE_NS, LEASE_NAME);
    expect(lease.spec.holderIdentity ?? '').toBe('');
    expect(lease.spec.leaseTransitions).toBe(4);
  });

  it('a second run while the first is draining a node: watched, refused at the first renewal it sees, before any mutation, naming the first run and its run URL; the first finishes untouched', async () => {
    c = await startCluster();
    const cluster = c;
    cluster.kube.setPdbAllowed('default', 'web', 0);
    let startSecond!: () => void;
    const secondMayStart = new Promise<void>((r) => (startSecond = r));
    // B starts once A's drain runs (its first eviction), after A's renewal just before the drain.
    cluster.kube.beforeWrite({ method: 'POST', path: /\/eviction$/, once: true }, () => startSecond());
    // A renews every 2 s (30 s in production), so B, which reads the Lease every 5 s while it watches,
    // sees a renewal at its second read; drain-timeout leaves A's drain waiting on the PDB until B ended.
    const first = actAs(cluster, '4242', { nodes: 'worker-1', 'drain-timeout': '120s' }, {}, { RAR_LEASE_RENEW_MS: '2000' });
    await secondMayStart;
    const holderNow = cluster.kube.lease(LEASE_NS, LEASE_NAME)?.spec?.holderIdentity ?? '';
    expect(holderNow).toMatch(/^acme\/platform\/runs\/4242\/attempts\/1\//);
    const seen = cluster.kube.requests.length;
    const talosSeen = cluster.talos.mutatingCommands().length;

    // B selects the very node A is draining: A's claim on it would be adopted were A's Lease abandoned,
    // so B takes the Lease path and watches it; A alive, B is refused at the first renewal it sees.
    const second = await actAs(cluster, '5151', { nodes: 'worker-1' });
    const secondLease = cluster.kube.requests.slice(seen).filter((r) => r.path === `${LEASE_PATH}/${LEASE_NAME}`);
    const holderAfterSecond = cluster.kube.lease(LEASE_NS, LEASE_NAME).spec.holderIdentity;
    const ownerAfterSecond = ann(cluster, 'worker-1')[A.owner];
    // Only A may write while B runs: its drain (the eviction retries) and its renewals of the Lease (still
    // A's once B ended, so none of those PATCHes was B's take-over).
    const secondWrites = cluster.kube.requests
      .slice(seen)
      .filter((r) => r.method !== 'GET' && !isDrainRequest(r) && !(r.method === 'PATCH' && r.path === `${LEASE_PATH}/${LEASE_NAME}`));
    const secondTalos = cluster.talos.mutatingCommands().slice(talosSeen);
    cluster.kube.setPdbAllowed('default', 'web', 1);
    const a = await first;

    expect(second.exitCode).toBe(1);
    expect(second.outputs.result).toBe('failed');
    expect(secondWrites).toEqual([]);
    expect(holderAfterSecond).toBe(holderNow);
    expect(cluster.kube.events().filter((e) => String(e.reportingInstance).includes('/runs/5151/'))).toEqual([]);
    expect(secondTalos).toEqual([]);
    // worker-1 still A's claim (never adopted by B), and B drained nothing (its own Events name none).
    expect(ownerAfterSecond).toBe(holderNow);
    const error = second.annotations.find((x) => x.kind === 'error');
    expect(error?.message).toContain(holderNow);
    // Held by another run: refused before any mutation, naming the holder and the URL of its workflow run.
    expect(error?.message).toContain('https://github.com/acme/platform/actions/runs/4242/attempts/1');
    // B was refused on what it watched: A's renewal (a PATCH of the Lease, the only Lease writes in B's
    // time, B wrote none) landed between two of B's reads, and B said so.
    const firstRead = secondLease.find((r) => r.method === 'GET');
    expect(secondLease.some((r) => r.method === 'PATCH' && r.at > firstRead!.at)).toBe(true);
    expect(second.stdout).toMatch(/it changed while watched/);

    // A was not disturbed: it finished, and released its own Lease (B never touched it).
    expect(a.exitCode, a.stdout).toBe(0);
    expect(ownerOf(a)).toBe(holderNow);
    expect(byName(a)['worker-1'].outcome).toBe('rebooted');
    expect(cluster.kube.lease(LEASE_NS, LEASE_NAME).spec.holderIdentity ?? '').toBe('');
  });

  it('the Lease stolen mid-run: the renewal finds another holder and the run stops before its next mutation', async () => {
    c = await startCluster();
    const cluster = c;
    const thief = 'acme/platform/runs/777/attempts/1/5ca1ab1e';
    cluster.kube.setPdbAllowed('default', 'web', 0);
    let stolenAt = 0;
    let talosAtSteal = -1;
    const steal = async () => {
      talosAtSteal = cluster.talos.mutatingCommands().length;
      const r = await api(
        cluster,
        'PATCH',
        `${LEASE_PATH}/${LEASE_NAME}`,
        [{ op: 'replace', path: '/spec/holderIdentity', value: thief }],
        'application/json-patch+json',
      );
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      stolenAt = Date.now();
    };
    let stealing: Promise<void> | undefined;
    // Stolen once the drain runs (its first eviction): the renewal just before the drain still proved the Lease ours.
    cluster.kube.beforeWrite({ method: 'POST', path: /\/eviction$/, once: true }, () => {
      stealing ??= steal();
    });
    const running = actAs(
      cluster,
      '4242',
      // the drain waits on the PDB past the next renewal (renewed every 2 s here, 30 s in production)
      { nodes: 'worker-1', 'drain-timeout': '60s' },
      {},
      { RAR_LEASE_RENEW_MS: '2000' },
    );
    // The renewal that finds the thief is a 422 on our holder `test`; then the PDB lets the drain finish.
    // A hang detector, not a speed check: a loaded runner takes long to reach the drain (the steal is the event).
    await until(
      () => stolenAt > 0 && leaseRequests(cluster).some((r) => r.method === 'PATCH' && r.status === 422 && r.at > stolenAt),
      240_000,
      'the failed renewal',
    );
    cluster.kube.setPdbAllowed('default', 'web', 1);
    const run = await running;
    await stealing;

    expect(run.exitCode).toBe(1);
    expect(run.outputs.result).toBe('failed');
    const d = byName(run)['worker-1'];
    expect(d.outcome).toBe('failed');
    expect(d.reason).toMatch(/Lease kube-system\/registry-auth-rollout\) lost/);
    expect(d.reason).toContain(thief);
    // The drain that was running finished; the next mutation (the reboot) was never started.
    expect(stepsOf(run, 'worker-1').map((s) => s.name)).toContain('drain');
    const rebootStep = stepsOf(run, 'worker-1').find((s) => s.name === 'reboot');
    expect(rebootStep?.ok).toBe(false);
    expect(c.talos.mutatingCommands().slice(talosAtSteal)).toEqual([]);
    expect(c.talos.mutatingCommands().filter((x) => x.command === 'reboot')).toEqual([]);
    // No write of ours after the drain: no release of the Lease (not ours), no node patch. Only the
    // run's Kubernetes Events, which change nothing and say what happened (the node's failure with its
    // next step, the run's end), each naming this run.
    const drainEnded = Math.max(...c.kube.requests.filter(isDrainRequest).map((r) => r.at));
    expect(c.kube.requests.filter((r) => r.at > drainEnded && r.method !== 'GET' && fromAction(r) && !isEventWrite(r))).toEqual([]);
    expect(c.kube.events().map((e) => e.reportingInstance)).toEqual(c.kube.events().map(() => ownerOf(run)));
    // The Talos config was patched before the steal, so the node stays fenced for a person; the Lease stays the thief's.
    const a = ann(c, 'worker-1');
    expect(a[A.owner]).toBe(ownerOf(run));
    expect(a[A.phase]).toBe('mutating');
    expect(node(c, 'worker-1').spec.unschedulable).toBe(true);
    expect(c.kube.lease(LEASE_NS, LEASE_NAME).spec.holderIdentity).toBe(thief);
    expect(run.stdout).toMatch(/run Lease: kept/);
  });
});
