// End to end: one run at a time. The bundle through the real kubectl on the twin, with the
// run Lease (coordination.k8s.io/v1) created, held and stolen by other "runs".
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import type { ActionRun, RunActionOptions } from '../../runner/runAction.js';
import {
  A,
  act,
  ann,
  byName,
  drainRequests,
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
  it('a Lease held by another run, even long expired, refuses the run before any mutation, naming the holder and its run URL', async () => {
    c = await startCluster();
    const holder = 'acme/platform/runs/4242/attempts/2/0c0ffee0';
    const renewed = microTime(Date.now() - 3_600_000); // an hour ago: far past its 120 s duration
    const created = await api(c, 'POST', LEASE_PATH, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: LEASE_NAME, namespace: LEASE_NS },
      spec: { holderIdentity: holder, leaseDurationSeconds: 120, acquireTime: renewed, renewTime: renewed, leaseTransitions: 3 },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const rvBefore = c.kube.lease(LEASE_NS, LEASE_NAME).metadata.resourceVersion;
    const seen = c.kube.requests.length;

    const run = await actAs(c, '5151', { nodes: 'worker-1' });
    expect(run.exitCode).toBe(1);
    expect(run.outputs.result).toBe('failed');
    expect(run.outputs.decisions).toBe('[]');
    expect(run.outputs.rebooted).toBe('0');
    const error = run.annotations.find((a) => a.kind === 'error');
    expect(error?.message).toContain(`Lease ${LEASE_NS}/${LEASE_NAME} is held by ${holder}`);
    expect(error?.message).toContain('https://github.com/acme/platform/actions/runs/4242/attempts/2');
    expect(error?.message).toMatch(/never taken over by time/);
    expect(run.summary).toContain(holder);
    // Nothing touched: no write of any kind, no Talos mutation, the Lease exactly as it was.
    expect(c.kube.requests.slice(seen).filter((r) => r.method !== 'GET')).toEqual([]);
    expect(c.talos.mutatingCommands()).toEqual([]);
    const lease = c.kube.lease(LEASE_NS, LEASE_NAME);
    expect(lease.metadata.resourceVersion).toBe(rvBefore);
    expect(lease.spec.holderIdentity).toBe(holder);
    expect(lease.spec.renewTime).toBe(renewed);
    expect(ann(c, 'worker-1')[A.owner]).toBeUndefined();
    expect(node(c, 'worker-1').spec.unschedulable).toBeFalsy();
    // The post step of the refused run has nothing of its own to clean up (it never held the Lease).
    expect(run.state.lease ?? '').toBe('');
  });

  it('a second run while the first holds the Lease (between its nodes): refused naming the first run; the first finishes untouched', async () => {
    c = await startCluster();
    const cluster = c;
    // Run A rolls worker-3 (its credential is current: patched, no reboot), then pauses 5 s before its
    // closing listing: it holds the Lease and no node claim.
    const first = actAs(cluster, '4242', { nodes: 'worker-3' }, {}, { RAR_RELIST_PAUSE_MS: '5000' });
    await until(() => verifiedRev(ann(cluster, 'worker-3')) === REVISION, 40_000, 'run A to release worker-3');
    const holderNow = cluster.kube.lease(LEASE_NS, LEASE_NAME)?.spec?.holderIdentity ?? '';
    expect(holderNow).toMatch(/^acme\/platform\/runs\/4242\/attempts\/1\/[0-9a-f]+$/);
    const seen = cluster.kube.requests.length;
    const talosSeen = cluster.talos.mutatingCommands().length;

    const second = await actAs(cluster, '5151', { nodes: 'cp-1' });
    const secondWrites = cluster.kube.requests.slice(seen).filter((r) => r.method !== 'GET');
    const secondTalos = cluster.talos.mutatingCommands().slice(talosSeen);
    const a = await first;

    expect(second.exitCode).toBe(1);
    expect(second.outputs.result).toBe('failed');
    const error = second.annotations.find((x) => x.kind === 'error');
    expect(error?.message).toContain(`is held by ${holderNow}`);
    expect(error?.message).toContain('https://github.com/acme/platform/actions/runs/4242/attempts/1');
    // B wrote nothing (the only writes while it ran are A's own Lease release, if A ended first, and
    // A's Kubernetes Events, which name A's run: B's would name run 5151).
    expect(secondWrites.filter((r) => !(r.method === 'PATCH' && r.path === `${LEASE_PATH}/${LEASE_NAME}`) && !isEventWrite(r))).toEqual([]);
    expect(cluster.kube.events().filter((e) => String(e.reportingInstance).includes('/runs/5151/'))).toEqual([]);
    expect(secondTalos).toEqual([]);
    expect(ann(cluster, 'cp-1')[A.owner]).toBeUndefined();
    expect(ann(cluster, 'cp-1')[A.verified]).toBeUndefined();
    expect(drainRequests(cluster, 'cp-1')).toEqual([]);

    // A was not disturbed: it finished, and released its own Lease (B never touched it).
    expect(a.exitCode, a.stdout).toBe(0);
    expect(ownerOf(a)).toBe(holderNow);
    expect(byName(a)['worker-3'].outcome).toBe('reboot-skipped');
    expect(cluster.kube.lease(LEASE_NS, LEASE_NAME).spec.holderIdentity ?? '').toBe('');
  });

  it('a second run while the first is draining a node: refused before any mutation, naming the first run and its run URL', async () => {
    c = await startCluster();
    const cluster = c;
    cluster.kube.setPdbAllowed('default', 'web', 0);
    let startSecond!: () => void;
    const secondMayStart = new Promise<void>((r) => (startSecond = r));
    // B starts once A's drain runs (its first eviction), after A's renewal just before the drain.
    cluster.kube.beforeWrite({ method: 'POST', path: /\/eviction$/, once: true }, () => startSecond());
    const first = actAs(cluster, '4242', { nodes: 'worker-1', 'drain-timeout': '40s' });
    await secondMayStart;
    const holderNow = cluster.kube.lease(LEASE_NS, LEASE_NAME)?.spec?.holderIdentity ?? '';
    expect(holderNow).toMatch(/^acme\/platform\/runs\/4242\/attempts\/1\//);
    const seen = cluster.kube.requests.length;
    const talosSeen = cluster.talos.mutatingCommands().length;

    const second = await actAs(cluster, '5151', { nodes: 'cp-1' });
    // Only A's drain (its eviction retries) may write while B runs.
    const secondWrites = cluster.kube.requests.slice(seen).filter((r) => r.method !== 'GET' && !isDrainRequest(r));
    const secondTalos = cluster.talos.mutatingCommands().slice(talosSeen);
    cluster.kube.setPdbAllowed('default', 'web', 1);
    const a = await first;

    expect(second.exitCode).toBe(1);
    expect(second.outputs.result).toBe('failed');
    expect(secondWrites).toEqual([]);
    expect(secondTalos).toEqual([]);
    expect(ann(cluster, 'cp-1')[A.owner]).toBeUndefined();
    const error = second.annotations.find((x) => x.kind === 'error');
    expect(error?.message).toContain(holderNow);
    // Held by another run: refused before any mutation, naming the holder and the URL of its workflow run.
    expect(error?.message).toContain('https://github.com/acme/platform/actions/runs/4242/attempts/1');

    expect(a.exitCode, a.stdout).toBe(0);
    expect(byName(a)['worker-1'].outcome).toBe('rebooted');
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
    await until(
      () => stolenAt > 0 && leaseRequests(cluster).some((r) => r.method === 'PATCH' && r.status === 422 && r.at > stolenAt),
      45_000,
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
