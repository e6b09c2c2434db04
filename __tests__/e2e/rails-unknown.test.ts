// End to end: a write whose outcome is unknown is not a write that did not happen, and a node whose
// owner another actor replaced is reported as theirs. The bundle (dist/index.js, then dist/cleanup.js
// with the state the main step saved) through the real kubectl on the twin, whose apiserver applies a
// request and then answers it with its own 504 Timeout, or never answers it.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { A, act, ann, byName, node, postStep, REVISION, requireKubectl, startCluster, verifiedRev } from './helpers.js';

const LEASE_NS = 'kube-system';
const LEASE_NAME = 'registry-auth-rollout';
const NODE_PATH = /^\/api\/v1\/nodes\/worker-1$/;
const run = promisify(execFile);

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

const ownerOf = (stdout: string): string => /claim token for this run: (\S+)/.exec(stdout)?.[1] ?? '';
const leaseHolder = (cluster: SimCluster): string => cluster.kube.lease(LEASE_NS, LEASE_NAME)?.spec?.holderIdentity ?? '';
const mirrorTaint = (cluster: SimCluster, name: string) =>
  (node(cluster, name).spec.taints ?? []).some((t: any) => t.key === 'node.kubernetes.io/unschedulable');

describe('e2e: a claim whose outcome is unknown', () => {
  it('the claim lands and the apiserver answers 504 Timeout: the re-read adopts it and the node is rolled', async () => {
    c = await startCluster();
    c.kube.failNext({ method: 'PATCH', path: NODE_PATH }, { status: 504, land: true });
    const r = await act(c, { nodes: 'worker-1' });
    expect(r.exitCode, r.stdout).toBe(0);
    // the apiserver's own words for its timeout (the Status message of its timeout filter), in the claim step's record
    const claim = byName(r)['worker-1'].steps.find((s) => s.name === 'claim');
    expect(claim?.detail).toContain('its answer was lost (Timeout: request did not complete within requested timeout');
    expect(claim?.detail).toMatch(/re-read showed it landed: adopted/);
    expect(byName(r)['worker-1'].outcome).toMatch(/rebooted|reboot-skipped/);
    expect(verifiedRev(ann(c, 'worker-1'))).toBe(REVISION);
    expect(ann(c, 'worker-1')[A.owner]).toBeUndefined();
    expect(node(c, 'worker-1').spec.unschedulable).toBeFalsy();
    expect(leaseHolder(c)).toBe('');
  });

  it('cancelled while two claim PATCHes hang after landing: main publishes both as claiming and keeps the Lease; the post step releases both', async () => {
    c = await startCluster();
    const cluster = c;
    const workers = ['worker-1', 'worker-2'];
    const claims = /^\/api\/v1\/nodes\/worker-[12]$/;
    let landed = 0;
    let bothLanded!: () => void;
    const cancelNow = new Promise<void>((resolve) => (bothLanded = resolve));
    // Both claims are applied, then the twin stops answering them: the cancellation comes mid-request.
    cluster.kube.failNext({ method: 'PATCH', path: claims, count: 2 }, { hang: true, land: true });
    cluster.kube.beforeWrite({ method: 'PATCH', path: claims }, () => {
      if (++landed === 2) setTimeout(bothLanded, 200);
    });
    const main = await act(cluster, { nodes: 'worker-1,worker-2,worker-3', 'max-unavailable': '2' }, { killOn: cancelNow });
    const owner = ownerOf(main.stdout);
    expect(main.stdout).toMatch(/received SIGINT/);
    expect(main.exitCode).toBe(1);
    expect(main.outputs.result).toBe('failed');
    const held = JSON.parse(main.state.held) as Array<{ node: string; phase: string; owner: string }>;
    expect(held.map((h) => [h.node, h.phase, h.owner]).sort(), main.stdout).toEqual(workers.map((w) => [w, 'claiming', owner]));
    expect(JSON.parse(main.state.lease)).toEqual({ namespace: LEASE_NS, name: LEASE_NAME, owner });
    for (const w of workers) {
      const d = byName(main)[w];
      expect(d.nextStep).toMatch(/may be on the node/);
      expect(d.nextStep).not.toMatch(/Nothing on the node was changed/);
      // The claims did land: cordoned and ours.
      expect(node(cluster, w).spec.unschedulable).toBe(true);
      expect(ann(cluster, w)[A.owner]).toBe(owner);
      expect(ann(cluster, w)[A.phase]).toBe('claimed');
    }
    expect(main.stdout).toMatch(/run Lease: kept/);
    expect(ann(cluster, 'worker-3')[A.owner]).toBeUndefined();
    expect(cluster.talos.mutatingCommands()).toEqual([]);

    const post = await postStep(cluster, main);
    expect(post.exitCode, post.stdout).toBe(0);
    for (const w of workers) {
      const notice = post.annotations.find((a) => a.kind === 'notice' && a.title === `${w}: released by the post step`);
      expect(notice?.message, post.stdout).toMatch(/claim had landed/);
      for (const k of [A.owner, A.phase, A.wasCordoned, A.verified]) expect(ann(cluster, w)[k]).toBeUndefined();
    }
    // Each cordon state as before the run: worker-2 was cordoned by someone else and stays so.
    expect(node(cluster, 'worker-1').spec.unschedulable).toBeFalsy();
    expect(node(cluster, 'worker-2').spec.unschedulable).toBe(true);
    expect(ann(cluster, 'worker-2')['ops.acme.io/cordon-reason']).toBe('disk replacement scheduled');
    await expect.poll(() => mirrorTaint(cluster, 'worker-1'), { timeout: 5000, interval: 100 }).toBe(false);
    expect(leaseHolder(cluster)).toBe('');
  });

  it('the Lease create lands and is answered 504: the run proves it by a re-read, holds it, and releases it at the end', async () => {
    c = await startCluster();
    c.kube.failNext({ method: 'POST', path: new RegExp(`/namespaces/${LEASE_NS}/leases$`) }, { status: 504, land: true });
    const r = await act(c, { nodes: 'worker-1' });
    expect(r.exitCode, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/its answer was lost .*Timeout.* and a re-read showed our token/);
    expect(verifiedRev(ann(c, 'worker-1'))).toBe(REVISION);
    expect(leaseHolder(c)).toBe('');
  });
});

describe('e2e: another actor replaced the owner annotation right after our claim', () => {
  it('main and post name the holder, say our cordon stands, print no command testing our token, and release the Lease', async () => {
    c = await startCluster();
    const cluster = c;
    const other = 'maintenance-bot/ticket-4711';
    let patches = 0;
    // The second PATCH of worker-1 is phase=mutating: another tool writes the owner just before it applies.
    cluster.kube.beforeWrite({ method: 'PATCH', path: NODE_PATH }, () => {
      if (++patches === 2) cluster.kube.mutateNode('worker-1', (o: any) => (o.metadata.annotations[A.owner] = other));
    });
    const main = await act(cluster, { nodes: 'worker-1' });
    const owner = ownerOf(main.stdout);
    expect(main.exitCode).toBe(1);
    const d = byName(main)['worker-1'];
    expect(d.outcome, main.stdout).toBe('failed');
    expect(d.nextStep).toContain(other);
    expect(d.nextStep).toMatch(/cordon still stands/);
    expect(d.nextStep).toMatch(/Nothing on Talos was changed/);
    expect(d.nextStep).not.toContain(`"value":"${owner}"`);
    expect(cluster.talos.mutatingCommands()).toEqual([]);
    // Nothing of this run is on Talos: the Lease went back at the end of the main step.
    expect(leaseHolder(cluster)).toBe('');
    expect(main.state.lease ?? '').toBe('');
    expect(JSON.parse(main.state.held)).toMatchObject([{ node: 'worker-1', phase: 'left-as-set', stoppedIn: 'claimed' }]);
    const before = JSON.stringify({ spec: node(cluster, 'worker-1').spec, ann: ann(cluster, 'worker-1') });

    const post = await postStep(cluster, main);
    const err = post.annotations.find((a) => a.kind === 'error' && a.title === 'worker-1: left as another actor set it');
    expect(err?.message, post.stdout).toContain(other);
    expect(err!.message).not.toMatch(/still carries this run's claim/);
    expect(err!.message).not.toContain(`"value":"${owner}"`);
    expect(err!.message).toMatch(/cordon still stands/);
    expect(post.annotations.some((a) => a.title === 'run Lease kept')).toBe(false);
    // The post step wrote nothing to the node.
    expect(JSON.stringify({ spec: node(cluster, 'worker-1').spec, ann: ann(cluster, 'worker-1') })).toBe(before);

    // The next step works as printed: once the other tool is done, our cordon is given back.
    const uncordon = /give back this run's cordon if they did not: `([^`]+)`/.exec(err!.message)?.[1];
    expect(uncordon).toBe('kubectl uncordon worker-1');
    await run('bash', ['-c', uncordon!], { env: { ...process.env, ...cluster.env() } });
    expect(node(cluster, 'worker-1').spec.unschedulable).toBeFalsy();
  });
});
