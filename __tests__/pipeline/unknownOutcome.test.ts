// A write whose outcome is unknown is not a write that did not happen ("unknown is not no"): a claim
// PATCH or a Lease create answered by a server timeout, a dropped connection, our own kill or a
// cancellation may have landed. On the in-memory fakes: the pipeline re-reads before deciding (the one
// writer, src/pipeline/write.ts, and its rule, src/rules/lostWrite.ts: applied, not applied or conflicted;
// the argument is docs/decision-rules.md#a-write-whose-answer-was-lost), and when it cannot, the node is
// published as `claiming` (the post step resolves it) and the Lease kept.
import { describe, expect, it } from 'vitest';
import { ToolError, type FailureCause } from '../../src/core/errors.js';
import type { JsonPatchOp } from '../../src/core/model/patch.js';
import type { HeldNode } from '../../src/core/model/phase.js';
import { FakeKube } from '../fakes/fakeKube.js';
import { keys, makeCluster, OWNER, roll, verifiedRev } from './harness.js';

const LEASE = ['kube-system', 'registry-auth-rollout'] as const;

/** What kubectl prints for the kube-apiserver's 504 (docs/kubernetes-facts.md#k13-server-timeout). */
const TIMEOUT_504 = 'Error from server (Timeout): Timeout: request did not complete within requested timeout - context deadline exceeded';

const failed = (kind: FailureCause, stderr: string) =>
  new ToolError({ tool: 'kubectl', command: 'kubectl patch node w1 --type=json', kind, exitCode: kind === 'cancelled' ? null : 1, stderr });
const serverTimeout = () => failed('server', TIMEOUT_504);
const unreachable = () => failed('transport', 'Unable to connect to the server: dial tcp 10.0.0.1:6443: connect: connection refused');

const isClaimPatch = (ops: JsonPatchOp[]) =>
  ops.some((o) => o.op === 'add' && (o.path.endsWith('~1owner') || o.path === '/metadata/annotations'));

type Cluster = ReturnType<typeof makeCluster>;

/** The claim PATCH of `name` lands, then its answer is `error` (once). */
function claimLandsThen(c: Cluster, error: () => Error, after?: () => void): { fired: () => boolean } {
  const orig = c.kube.patchNode.bind(c.kube);
  let fired = false;
  c.kube.patchNode = async (name, ops) => {
    const r = await orig(name, ops);
    if (!fired && isClaimPatch(ops)) {
      fired = true;
      after?.();
      throw error();
    }
    return r;
  };
  return { fired: () => fired };
}

/** From now on every read of the cluster fails as if the apiserver were gone. */
function apiserverGone(c: Cluster): void {
  c.kube.getNode = async () => {
    throw unreachable();
  };
  c.kube.getNodeAndLease = async () => {
    throw unreachable();
  };
  c.kube.readyz = async () => {
    throw unreachable();
  };
}

describe('a claim whose outcome is unknown is resolved by a re-read, never taken as "not sent"', () => {
  it('the claim lands but the apiserver answers 504 Timeout: the re-read finds our claim, adopts it and the roll goes on', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const t = claimLandsThen(c, serverTimeout);
    const res = await roll(c);
    expect(t.fired()).toBe(true);
    expect(res.result, res.error?.message).toBe('processed');
    expect(res.records[0].outcome).toBe('rebooted');
    const s = c.kube.state('w1');
    expect(s.annotations[keys.owner]).toBeUndefined();
    expect(verifiedRev(s)).toBe('rev-2');
    expect(s.unschedulable).toBe(false);
  });

  it('an unknown outcome whose re-read shows nothing of ours: the claim is sent again and lands', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const orig = c.kube.patchNode.bind(c.kube);
    let failedOnce = false;
    c.kube.patchNode = async (name, ops) => {
      if (!failedOnce && isClaimPatch(ops)) {
        failedOnce = true;
        throw serverTimeout();
      }
      return orig(name, ops);
    };
    const res = await roll(c);
    expect(res.result, res.error?.message).toBe('processed');
    expect(res.records[0].claim?.attempts).toBe(2);
    expect(res.records[0].claim?.conflicts.join(' ')).toMatch(/outcome was unknown.*had not landed/);
  });

  it('504 and then the apiserver stays unreachable: the node is published as claiming, "may be on the node", the Lease is kept', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const published: HeldNode[][] = [];
    claimLandsThen(c, serverTimeout, () => apiserverGone(c));
    const res = await roll(c, {}, { publishHeld: (h) => published.push(h) });
    expect(res.result).toBe('failed');
    const r = res.records[0];
    expect(r.outcome).toBe('failed');
    expect(`${r.reason} ${r.nextStep}`).not.toMatch(/nothing (on the node )?was changed/i);
    expect(r.reason).toMatch(/may still be processing|outcome is unknown/);
    expect(r.nextStep).toMatch(/may be on the node/);
    expect(r.nextStep).toContain('patch node w1 --type=json');
    // The post step gets the node in phase claiming, with the capture it needs to release it by CAS.
    const last = published.at(-1)!;
    expect(last).toMatchObject([{ node: 'w1', phase: 'claiming', owner: OWNER, capture: { node: 'w1', wasCordoned: false } }]);
    // The claim did land: cordoned and ours, and the Lease stays with this run.
    expect(c.kube.state('w1').annotations[keys.owner]).toBe(OWNER);
    expect(c.kube.leases.get(LEASE.join('/'))?.spec.holderIdentity).toBe(OWNER);
    expect(c.talos.mutatingCalls()).toEqual([]);
    // The printed command tests our token and phase=claimed, and gives the node back as it was.
    const ops = JSON.parse(/-p '([^']+)'/.exec(r.nextStep ?? '')![1]) as JsonPatchOp[];
    expect(ops).toContainEqual({ op: 'test', path: `/metadata/annotations/${keys.phase.replace('/', '~1')}`, value: 'claimed' });
    expect(ops).toContainEqual({ op: 'test', path: `/metadata/annotations/${keys.owner.replace('/', '~1')}`, value: OWNER });
    await FakeKube.prototype.patchNode.call(c.kube, 'w1', ops);
    expect(c.kube.state('w1').annotations[keys.owner]).toBeUndefined();
    expect(c.kube.state('w1').unschedulable).toBe(false);
  });

  it('cancelled while the claim PATCH runs: nothing more is sent, claiming is published and the Lease kept', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2' }]);
    let cancelled = false;
    const published: HeldNode[][] = [];
    claimLandsThen(
      c,
      () => failed('cancelled', ''),
      () => {
        cancelled = true;
        apiserverGone(c); // a cancelled runner starts no process: no read can resolve it
      },
    );
    const calls = () => c.kube.calls.length;
    let seenAfterCancel = -1;
    const res = await roll(
      c,
      { maxUnavailable: { count: 1 } },
      {
        publishHeld: (h) => published.push(h),
        cancelled: () => {
          if (cancelled && seenAfterCancel < 0) seenAfterCancel = calls();
          return cancelled;
        },
      },
    );
    expect(res.result).toBe('failed');
    expect(published.at(-1)).toMatchObject([{ node: 'w1', phase: 'claiming', owner: OWNER }]);
    expect(res.records[0].nextStep).toMatch(/may be on the node/);
    expect(res.records[0].nextStep).not.toMatch(/Nothing on the node was changed/);
    expect(res.notReached).toEqual(['w2']);
    expect(c.kube.leases.get(LEASE.join('/'))?.spec.holderIdentity).toBe(OWNER);
    expect(c.talos.mutatingCalls()).toEqual([]);
  });
});

describe('several workers in flight when the run is cancelled', () => {
  it('both claims landed while their PATCHes ran: both are published as claiming, none is reported as untouched', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2' }, { name: 'w3' }]);
    let cancelled = false;
    const published: HeldNode[][] = [];
    const orig = c.kube.patchNode.bind(c.kube);
    let arrived = 0;
    let release!: () => void;
    const bothIn = new Promise<void>((r) => (release = r));
    c.kube.patchNode = async (name, ops) => {
      if (!isClaimPatch(ops)) return orig(name, ops);
      await orig(name, ops);
      if (++arrived === 2) release();
      await bothIn;
      // The runner is cancelled with both kubectl processes in flight: each one is stopped.
      cancelled = true;
      apiserverGone(c);
      throw new ToolError({ tool: 'kubectl', command: `kubectl patch node ${name}`, kind: 'cancelled', exitCode: null, stderr: '' });
    };
    const res = await roll(c, { maxUnavailable: { count: 2 } }, { publishHeld: (h) => published.push(h), cancelled: () => cancelled });
    expect(res.result).toBe('failed');
    const last = published.at(-1)!;
    expect(last.map((h) => [h.node, h.phase]).sort()).toEqual([
      ['w1', 'claiming'],
      ['w2', 'claiming'],
    ]);
    for (const r of res.records) expect(r.nextStep).toMatch(/may be on the node/);
    expect(res.notReached).toEqual(['w3']);
    expect(c.kube.leases.get(LEASE.join('/'))?.spec.holderIdentity).toBe(OWNER);
  });
});

describe('the Lease: a create or take whose outcome is unknown is re-read before deciding', () => {
  it('the take of a free Lease lands but its answer is a 504: the re-read shows our token and the run holds it', async () => {
    const c = makeCluster([{ name: 'w1', current: true }]);
    await c.kube.createLease(...LEASE, { leaseDurationSeconds: 120 });
    const orig = c.kube.patchLease.bind(c.kube);
    let lost = false;
    c.kube.patchLease = async (ns, name, ops) => {
      const r = await orig(ns, name, ops);
      if (!lost) {
        lost = true;
        throw failed('server', TIMEOUT_504);
      }
      return r;
    };
    const res = await roll(c);
    expect(lost).toBe(true);
    expect(res.result, res.error?.message).toBe('processed');
    expect(c.kube.leases.get(LEASE.join('/'))?.spec.holderIdentity ?? '').toBe('');
  });

  it('the create lands but its answer is lost: the re-read shows our token and the run holds the Lease', async () => {
    const c = makeCluster([{ name: 'w1', current: true }]);
    const orig = c.kube.createLease.bind(c.kube);
    c.kube.createLease = async (ns, name, spec) => {
      await orig(ns, name, spec);
      throw failed('server', TIMEOUT_504);
    };
    const res = await roll(c);
    expect(res.result, res.error?.message).toBe('processed');
    // released at the end, as any run does
    expect(c.kube.leases.get(LEASE.join('/'))?.spec.holderIdentity ?? '').toBe('');
  });

  it('the create is answered by a timeout and the Lease cannot be read again: no node is touched, the error says it may be ours', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const orig = c.kube.createLease.bind(c.kube);
    const origGet = c.kube.getLease.bind(c.kube);
    let created = false;
    c.kube.createLease = async (ns, name, spec) => {
      await orig(ns, name, spec);
      created = true;
      throw failed('server', TIMEOUT_504);
    };
    c.kube.getLease = async (ns, name) => {
      if (created) throw unreachable();
      return origGet(ns, name);
    };
    c.kube.readyz = async () => {
      throw unreachable();
    };
    await expect(roll(c)).rejects.toThrow(/may (be|still be) held by this run/);
    expect(c.kube.mutatingCalls().filter((m) => m.startsWith('patchNode'))).toEqual([]);
  });
});
