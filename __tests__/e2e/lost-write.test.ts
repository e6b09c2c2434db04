// End to end: one answer to a write whose answer was lost, for the claim, phase=mutating and the
// verified release alike (src/pipeline/write.ts, src/rules/lostWrite.ts; the argument:
// docs/decision-rules.md#a-write-whose-answer-was-lost). The bundle through the one channel to the
// twin, whose apiserver applies a node PATCH and then loses its answer (`land: true`: its own 504, etcd's
// 500 "request timed out", a dropped connection), or loses it without applying it. Each of the three
// writes is armed only once the one before it was applied (a write hook), so each fault hits its write.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { ETCD_REQUEST_TIMEOUT, type FaultAction } from '../../sim/kube/faults.js';
import { A, act, ann, byName, fromAction, node, REVISION, requireKubectl, startCluster, verifiedRev } from './helpers.js';

const NODE = /^\/api\/v1\/nodes\/worker-1$/;

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

/** The claim's answer is `claim`; once the claim is applied, phase=mutating's is `phase`; once that is applied, the release's is `release`. */
function loseAnswers(cluster: SimCluster, claim: FaultAction, phase: FaultAction, release: FaultAction): void {
  cluster.kube.failNext({ method: 'PATCH', path: NODE }, claim);
  let applied = 0;
  cluster.kube.beforeWrite({ method: 'PATCH', path: NODE }, () => {
    applied++;
    if (applied === 1) cluster.kube.failNext({ method: 'PATCH', path: NODE }, phase);
    if (applied === 2) cluster.kube.failNext({ method: 'PATCH', path: NODE }, release);
  });
}

const patches = (cluster: SimCluster) =>
  cluster.kube.requests.filter((r) => fromAction(r) && r.method === 'PATCH' && NODE.test(r.path)).map((r) => r.status);

describe('e2e: a write whose answer was lost is judged by a re-read, for the claim, a phase patch and the release alike', () => {
  it('each applied, its answer lost (504, etcd timeout, dropped): each sent once, the node rolled, verified and released', async () => {
    const cluster = (c = await startCluster());
    loseAnswers(cluster, { status: 504, land: true }, { ...ETCD_REQUEST_TIMEOUT, land: true }, { drop: true, land: true });
    const r = await act(cluster, { nodes: 'worker-1' });
    expect(r.exitCode, r.stdout).toBe(0);
    const d = byName(r)['worker-1'];
    expect(d.outcome).toMatch(/rebooted|reboot-skipped/);
    expect(d.steps.find((s) => s.name === 'claim')?.detail).toMatch(/its answer was lost \(.*\), a re-read showed it landed: adopted/);
    expect(r.stdout).toMatch(
      /phase=mutating of worker-1: .*etcdserver: request timed out.*; a re-read shows it applied \(the answer was lost\)/,
    );
    expect(r.stdout).toMatch(/the release of worker-1: .*; a re-read shows it applied \(the answer was lost\)/);
    // three writes, each sent once and none answered: the re-reads decided
    expect(patches(cluster)).toEqual([504, 500, 0]);
    expect(verifiedRev(ann(cluster, 'worker-1'))).toBe(REVISION);
    expect(ann(cluster, 'worker-1')[A.owner]).toBeUndefined();
    expect(node(cluster, 'worker-1').spec.unschedulable).toBeFalsy();
  });

  it('each lost before it was applied: the tests still hold, so each is sent again once, and the node is rolled', async () => {
    const cluster = (c = await startCluster());
    loseAnswers(cluster, { status: 504 }, ETCD_REQUEST_TIMEOUT, { drop: true });
    const r = await act(cluster, { nodes: 'worker-1' });
    expect(r.exitCode, r.stdout).toBe(0);
    const d = byName(r)['worker-1'];
    expect(d.outcome).toMatch(/rebooted|reboot-skipped/);
    expect(d.steps.find((s) => s.name === 'claim')?.detail).toMatch(
      /attempts 2; retried after: the claim's outcome was unknown \(.*\) and the re-read showed it had not landed/,
    );
    expect(r.stdout).toMatch(
      /phase=mutating of worker-1 failed \(.*etcdserver: request timed out.*\); its tests still hold, trying again in/,
    );
    expect(r.stdout).toMatch(/the release of worker-1 failed \(.*\); still ours, trying again in/);
    expect(patches(cluster)).toEqual([504, 200, 500, 200, 0, 200]);
    expect(verifiedRev(ann(cluster, 'worker-1'))).toBe(REVISION);
    expect(ann(cluster, 'worker-1')[A.owner]).toBeUndefined();
    expect(node(cluster, 'worker-1').spec.unschedulable).toBeFalsy();
  });
});
