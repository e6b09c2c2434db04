// A release whose answer is lost is not a release that failed. The release PATCH lands, its answer is
// the apiserver's 504 (or a dropped connection), and the re-read that should confirm it fails too: the
// one writer (src/pipeline/write.ts) reads again once the apiserver answers, and the rule
// (src/rules/lostWrite.ts) accepts the release when the node shows it; a node that does not show it
// (another run claimed it) stays a failure.
import { describe, expect, it } from 'vitest';
import { ToolError, type FailureCause } from '../../src/core/errors.js';
import type { JsonPatchOp } from '../../src/core/model/patch.js';
import { STEP } from '../../src/core/steps.js';
import { keys, makeCluster, roll, verifiedRev } from './harness.js';

const TIMEOUT_504 = 'Error from server (Timeout): Timeout: request did not complete within requested timeout - context deadline exceeded';
const OTHER = 'acme/other/runs/9/attempts/1/ffff';

const failed = (kind: FailureCause, stderr: string, command = 'kubectl patch node w1 --type=json') =>
  new ToolError({ tool: 'kubectl', command, kind, exitCode: 1, stderr });
const unreachable = () =>
  failed('transport', 'Unable to connect to the server: dial tcp 10.0.0.1:6443: connect: connection refused', 'kubectl get node w1');

const removesOwner = (ops: JsonPatchOp[]) => ops.some((o) => o.op === 'remove' && o.path.endsWith('~1owner'));
const isVerifiedRelease = (ops: JsonPatchOp[]) => removesOwner(ops) && ops.some((o) => o.op === 'add' && o.path.endsWith('~1verified'));
const isRestoreRelease = (ops: JsonPatchOp[]) =>
  removesOwner(ops) && !isVerifiedRelease(ops) && !ops.some((o) => o.path.endsWith('~1quarantined'));

type Cluster = ReturnType<typeof makeCluster>;

/**
 * The first patch `which` selects lands and is answered by a 504; the next `failedReads` reads of the
 * node fail as if the connection were still down (then `during` runs once, between the lost answer and the retry).
 */
function releaseLandsAnswerLost(c: Cluster, which: (ops: JsonPatchOp[]) => boolean, failedReads: number, during?: () => void) {
  const orig = c.kube.patchNode.bind(c.kube);
  const origGet = c.kube.getNode.bind(c.kube);
  let lost = false;
  let readsToFail = 0;
  c.kube.patchNode = async (name, ops) => {
    const r = await orig(name, ops);
    if (!lost && which(ops)) {
      lost = true;
      readsToFail = failedReads;
      during?.();
      throw failed('server', TIMEOUT_504);
    }
    return r;
  };
  c.kube.getNode = async (name) => {
    if (readsToFail > 0) {
      readsToFail--;
      throw unreachable();
    }
    return origGet(name);
  };
  return { lost: () => lost };
}

describe('a release whose answer is lost', () => {
  it('the verified release landed, its re-read failed: read again once the apiserver answers, it shows the release: released and verified, sent once', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const t = releaseLandsAnswerLost(c, isVerifiedRelease, 1);
    const res = await roll(c);
    expect(t.lost()).toBe(true);
    expect(res.result, res.error?.message).toBe('processed');
    expect(res.records[0].outcome).toBe('rebooted');
    const s = c.kube.state('w1');
    expect(s.annotations[keys.owner]).toBeUndefined();
    expect(verifiedRev(s)).toBe('rev-2');
    expect(s.unschedulable).toBe(false);
    // sent once: the failed re-read is no answer, so the node is read again (after /readyz) before
    // anything is sent again, and that read shows the release applied (src/rules/lostWrite.ts)
    expect(c.kube.calls.filter((x) => x.method === 'patchNode' && isVerifiedRelease(x.ops ?? []))).toHaveLength(1);
    expect(res.records[0].steps.find((s) => s.name === STEP.release)?.ok).toBe(true);
  });

  it('the release after a failed drain landed, its answer was lost: the node is reported released, not "releasing failed too"', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2' }]);
    c.kube.drainErrorFor = (name) =>
      name === 'w1'
        ? new ToolError({
            tool: 'kubectl',
            command: 'kubectl drain w1',
            kind: 'unknown',
            exitCode: 1,
            stderr:
              'error: unable to drain node "w1" due to error: [cannot delete Pods that declare no controller (use --force to override): default/bare], continuing command...',
          })
        : undefined;
    releaseLandsAnswerLost(c, isRestoreRelease, 1);
    const published: string[][] = [];
    const res = await roll(c, {}, { publishHeld: (h) => published.push(h.map((x) => `${x.node}:${x.phase}`)) });
    const r = res.records[0];
    expect(r.outcome).toBe('failed');
    expect(r.reason).toMatch(/^drain failed/);
    expect(r.reason).not.toMatch(/releasing the claim failed/);
    expect(r.nextStep).toMatch(/The claim was released|uncordoned again/);
    expect(c.kube.state('w1').annotations[keys.owner]).toBeUndefined();
    expect(c.kube.state('w1').unschedulable).toBe(false);
    // nothing is left for the post step, and the Lease went back
    expect(published.at(-1)).toEqual([]);
    expect(c.kube.leases.get('kube-system/registry-auth-rollout')?.spec.holderIdentity ?? '').toBe('');
  });

  it('a 422 after a lost answer on a node that does NOT show the release (another run took it) stays a failure', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    // between the lost answer and the retry, another actor puts its own claim on the node
    releaseLandsAnswerLost(c, isVerifiedRelease, 1, () =>
      c.kube.mutate('w1', (o) => {
        o.metadata.annotations[keys.owner] = OTHER;
        delete o.metadata.annotations[keys.verified];
      }),
    );
    const res = await roll(c);
    expect(res.result).toBe('failed');
    expect(res.records[0].outcome).toBe('failed');
    expect(c.kube.state('w1').annotations[keys.owner]).toBe(OTHER);
  });
});
