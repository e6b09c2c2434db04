// End to end, shared by recovery-*.test.ts: recovery never needs the post step. The bundle is force-killed (SIGKILL to its whole
// process group, as the runner kills a job whose post step's grace ran out: no signal handler, no
// post step) at each phase of a node's roll, then run again as the merge queue or a workflow_dispatch
// rerun would (the same run id, the next attempt). The rerun must wait until the killed run's Lease has
// expired unrenewed, take it over, complete the node's roll from where the killed run left it, and end
// with the node released, uncordoned and verified, the Lease released, and one reboot in all.
// The kill's moment is a twin event (a write the twin receives, a command Talos records), never a sleep.
// docs/recovery.md has the argument.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import type { ActionRun } from '../../runner/runAction.js';
import {
  A,
  act,
  ann,
  node,
  rebootReached,
  reboots,
  REVISION,
  requireKubectl,
  startCluster,
  TEST_KNOBS,
  verifiedRev,
  when,
} from './helpers.js';

const LEASE_PATH = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/registry-auth-rollout';
const NODE_PATH = /^\/api\/v1\/nodes\/worker-1$/;
/** a short Lease (seconds) and its renewal, so the rerun's wait for its expiry stays short; long enough that a renewal kubectl slowed by a loaded machine (seen: 8 s with both cores busy) does not lose it */
const LEASE_S = 20;
const KNOBS = { ...TEST_KNOBS, RAR_LEASE_DURATION_S: String(LEASE_S), RAR_LEASE_RENEW_MS: '2000' };
const RUN_ID = '7070';

let c: SimCluster | undefined;
const bootId = (cluster: SimCluster): string => node(cluster, 'worker-1')?.status?.nodeInfo?.bootID ?? '';
const isReady = (cluster: SimCluster) =>
  (node(cluster, 'worker-1')?.status?.conditions ?? []).some((x: any) => x.type === 'Ready' && x.status === 'True');
/** the reboot was sent and the node is back: another boot id, Ready */
const backAfterReboot = (cluster: SimCluster, before: string) =>
  reboots(cluster, 'worker-1').length > 0 && bootId(cluster) !== before && isReady(cluster);

interface Phase {
  name: string;
  /** the twin event at which the run is killed; `before` is worker-1's boot id before the run */
  killAt: (cluster: SimCluster, before: string) => Promise<void>;
  /** the phase annotation the killed run leaves on the node */
  leftPhase: 'claimed' | 'mutating';
}

export const PHASES: Phase[] = [
  {
    name: 'after the claim',
    // the claim is the run's first write to the node: killed as the twin applies it
    killAt: (cluster) =>
      new Promise<void>((resolve) => cluster.kube.beforeWrite({ method: 'PATCH', path: NODE_PATH, once: true }, resolve)),
    leftPhase: 'claimed',
  },
  {
    name: 'after the credential patch',
    killAt: (cluster) => when(() => cluster.talos.mutatingCommands().some((x) => x.command === 'patch' && x.exitCode === 0)),
    leftPhase: 'mutating',
  },
  {
    name: 'during the drain',
    killAt: (cluster) =>
      new Promise<void>((resolve) => cluster.kube.beforeWrite({ method: 'POST', path: /\/pods\/web-1\/eviction$/, once: true }, resolve)),
    leftPhase: 'mutating',
  },
  {
    name: 'after the reboot was sent',
    killAt: (cluster) => rebootReached(cluster, 'worker-1'),
    leftPhase: 'mutating',
  },
  {
    name: 'while waiting for Ready and the proof',
    killAt: (cluster, before) => when(() => backAfterReboot(cluster, before)),
    leftPhase: 'mutating',
  },
  {
    name: 'before the release',
    // Once the node is back, the run's next write to it is the release: that request is left hanging
    // (never applied), and the run killed while it waits for the answer.
    killAt: async (cluster, before) => {
      await when(() => backAfterReboot(cluster, before));
      const seen = cluster.kube.requests.length;
      cluster.kube.failNext({ method: 'PATCH', path: NODE_PATH }, { hang: true });
      await when(() => cluster.kube.requests.slice(seen).some((r) => r.method === 'PATCH' && NODE_PATH.test(r.path)));
    },
    leftPhase: 'mutating',
  },
];

function rerun(cluster: SimCluster, attempt: string): Promise<ActionRun> {
  return act(cluster, { nodes: 'worker-1' }, { env: { ...cluster.env(), ...KNOBS, GITHUB_RUN_ID: RUN_ID, GITHUB_RUN_ATTEMPT: attempt } });
}

/** The suite over `phases` (one phase per file: each waits a Lease duration, and the runner overlaps files). */
export function recoverySuite(title: string, phases: Phase[]): void {
  describe(`e2e recovery: a run killed ${title} (no post step) is completed by the next run`, () => {
    beforeAll(() => requireKubectl());
    afterEach(async () => {
      await c?.stop();
      c = undefined;
    });
    it.each(phases)(
      'killed $name: the rerun takes the expired Lease, completes worker-1 (one reboot in all) and releases everything',
      async (phase) => {
        c = await startCluster();
        const cluster = c;
        const before = bootId(cluster);
        const killed = await act(
          cluster,
          { nodes: 'worker-1' },
          {
            env: { ...cluster.env(), ...KNOBS, GITHUB_RUN_ID: RUN_ID, GITHUB_RUN_ATTEMPT: '1' },
            killOn: phase.killAt(cluster, before),
            killSignal: 'SIGKILL',
          },
        );
        // Killed, not ended: no exit code, and the node is left as the phase leaves it, claimed and cordoned.
        expect(killed.exitCode, killed.stdout).toBeNull();
        const killedOwner = ann(cluster, 'worker-1')[A.owner];
        expect(killedOwner).toMatch(new RegExp(`^acme/platform/runs/${RUN_ID}/attempts/1/`));
        expect(ann(cluster, 'worker-1')[A.phase]).toBe(phase.leftPhase);
        expect(node(cluster, 'worker-1').spec.unschedulable).toBe(true);
        expect(cluster.kube.lease('kube-system', 'registry-auth-rollout').spec.holderIdentity).toBe(killedOwner);
        const leaseWritesBefore = cluster.kube.requests.filter((r) => r.path === LEASE_PATH && r.method !== 'GET');
        const lastRenewalAt = Math.max(...leaseWritesBefore.map((r) => r.at));

        const again = await rerun(cluster, '2');
        expect(again.exitCode, again.stdout).toBe(0);
        expect(again.outputs.result).toBe('processed');
        // The Lease was taken only once it had gone unrenewed for its whole duration, on the twin's clock.
        const taken = cluster.kube.requests.find((r) => r.path === LEASE_PATH && r.method === 'PATCH' && r.at > lastRenewalAt);
        expect(taken, again.stdout).toBeDefined();
        expect(taken!.at - lastRenewalAt).toBeGreaterThanOrEqual(LEASE_S * 1000);
        expect(again.stdout).toContain(`took over the Lease from ${killedOwner}`);
        expect(again.stdout).toMatch(/worker-1: adopted the claim of .*abandoned/);
        // worker-1 released and verified: no claim of either run, uncordoned (it was schedulable), and its
        // containerd runs the new credential after one reboot in all (a reboot the killed run sent is not
        // sent again: the evidence shows containerd started after the new config).
        const a = ann(cluster, 'worker-1');
        for (const k of [A.owner, A.phase, A.wasCordoned]) expect(a[k], k).toBeUndefined();
        expect(node(cluster, 'worker-1').spec.unschedulable).toBeFalsy();
        expect(verifiedRev(a)).toBe(REVISION);
        expect(reboots(cluster, 'worker-1')).toHaveLength(1);
        expect(cluster.kube.lease('kube-system', 'registry-auth-rollout').spec.holderIdentity ?? '').toBe('');
        expect(again.outputs['old-credential-revocable']).toBeDefined();
      },
    );
  });
}
