// Two transient errors at the end must not leave the run Lease (or a node's claim) held for good: a
// release refused for a reason that passes (a 500 "etcdserver: request timed out", a 503 of an apiserver
// restarting, a dropped connection, a 409) is tried again with backoff for up to RELEASE_RETRY_MS, a
// re-read deciding between tries: released although nobody saw the answer counts as released; another
// holder, or nothing left to release, stops the tries and leaves it as it is. The rule:
// src/rules/lostWrite.ts; the I/O: src/pipeline/write.ts, the one writer. On the virtual clock.
import { describe, expect, it } from 'vitest';
import { ToolError, type FailureCause } from '../../src/core/errors.js';
import type { JsonPatchOp } from '../../src/core/model/patch.js';
import { WRITE_RETRY_MS as RELEASE_RETRY_MS } from '../../src/rules/lostWrite.js';
import { keys, makeCluster, OWNER, roll, verifiedRev } from './harness.js';

const LEASE = ['kube-system', 'registry-auth-rollout'] as const;
const OTHER = 'acme/infra/runs/43/attempts/1/bbbb';
const SEC = 1000;

const ETCD_TIMEOUT = 'Error from server: etcdserver: request timed out';
const SHUTTING_DOWN = 'Error from server (ServiceUnavailable): apiserver is shutting down';
const REFUSED = 'The connection to the server 10.0.0.1:6443 was refused - did you specify the right host or port?';
const CONFLICT =
  'Error from server (Conflict): Operation cannot be fulfilled on leases.coordination.k8s.io "registry-auth-rollout": the object has been modified; please apply your changes to the latest version and try again';

const failure = (kind: FailureCause, stderr: string, command = 'kubectl patch') =>
  new ToolError({ tool: 'kubectl', command, kind, exitCode: 1, stderr });

const releasesLease = (ops: JsonPatchOp[]) => ops.some((o) => o.op === 'remove' && o.path === '/spec/holderIdentity');
const releasesNode = (ops: JsonPatchOp[]) => ops.some((o) => o.op === 'remove' && o.path.endsWith('~1owner'));

type Cluster = ReturnType<typeof makeCluster>;

/**
 * The Lease's release is answered by `answers` in turn (each a failure, or 'lands-lost': applied, the
 * answer a 500), then goes through; `untilMs`: instead, every release fails with the first answer until
 * that much virtual time has passed since the first.
 */
function leaseReleaseFails(
  c: Cluster,
  answers: Array<ToolError | 'lands-lost'>,
  opts: { untilMs?: number; during?: () => Promise<void> } = {},
) {
  const orig = c.kube.patchLease.bind(c.kube);
  const sent: number[] = [];
  let first: number | undefined;
  c.kube.patchLease = async (ns, name, ops) => {
    if (!releasesLease(ops)) return orig(ns, name, ops);
    sent.push(c.clock.now());
    first ??= c.clock.now();
    const answer = opts.untilMs !== undefined ? (c.clock.now() - first < opts.untilMs ? answers[0] : undefined) : answers.shift();
    if (opts.during && sent.length === 1) await opts.during();
    if (answer === 'lands-lost') {
      await orig(ns, name, ops);
      throw failure('server', ETCD_TIMEOUT);
    }
    if (answer) throw answer;
    return orig(ns, name, ops);
  };
  return sent;
}

const holder = async (c: Cluster) => (await c.kube.getLease(...LEASE))?.holderIdentity;

describe('the run Lease: a release that fails for a reason that passes is tried again', () => {
  it('a 500 "etcdserver: request timed out", then it goes through: released, the run ends well', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const sent = leaseReleaseFails(c, [failure('server', ETCD_TIMEOUT)]);
    const res = await roll(c, { reboot: 'always' });
    expect(res.error?.message).toBeUndefined();
    expect(res.result).toBe('processed');
    expect(await holder(c)).toBeFalsy(); // freed (no holder)
    expect(sent).toHaveLength(2);
    // waited before the second try (backoff), not at once
    expect(sent[1] - sent[0]).toBeGreaterThanOrEqual(500);
  });

  it('an apiserver restart: 503, then refused connections for 40 s, then it answers: released', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const sent = leaseReleaseFails(c, [failure('server', SHUTTING_DOWN)]);
    // after the 503, refused until 40 s after the first try
    let t0: number | undefined;
    const orig = c.kube.patchLease.bind(c.kube);
    c.kube.patchLease = async (ns, name, ops) => {
      if (releasesLease(ops)) {
        t0 ??= c.clock.now();
        if (sent.length >= 1 && c.clock.now() - t0 < 40 * SEC) {
          sent.push(c.clock.now());
          throw failure('transport', REFUSED);
        }
      }
      return orig(ns, name, ops);
    };
    const res = await roll(c, { reboot: 'always' });
    expect(res.result).toBe('processed');
    expect(await holder(c)).toBeFalsy(); // freed (no holder)
    const took = sent.at(-1)! - sent[0];
    expect(took).toBeGreaterThanOrEqual(40 * SEC);
    expect(took).toBeLessThan(RELEASE_RETRY_MS);
    // capped exponential backoff: a handful of tries, not one a second
    expect(sent.length).toBeLessThan(12);
  });

  it('a 409 Conflict while the Lease still names this run: tried again, released', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    leaseReleaseFails(c, [failure('conflict', CONFLICT)]);
    const res = await roll(c, { reboot: 'always' });
    expect(res.result).toBe('processed');
    expect(await holder(c)).toBeFalsy(); // freed (no holder)
  });

  it('a release that landed although its answer was a 500: the re-read shows it free, so it counts as released (sent once)', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const sent = leaseReleaseFails(c, ['lands-lost']);
    const res = await roll(c, { reboot: 'always' });
    expect(res.result).toBe('processed');
    expect(await holder(c)).toBeFalsy(); // freed (no holder)
    expect(sent).toHaveLength(1);
  });

  it('another run took the Lease between two tries: left as it is (never clobbered), and the run says so', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    leaseReleaseFails(c, [failure('server', ETCD_TIMEOUT)], {
      during: async () => {
        // someone released it by hand and another run took it
        await c.kube.patchLease(...LEASE, [{ op: 'replace', path: '/spec/holderIdentity', value: OTHER }]);
      },
    });
    const res = await roll(c, { reboot: 'always' });
    expect(await holder(c)).toBe(OTHER);
    expect(res.result).toBe('failed');
    expect(res.error?.message).toMatch(/not released, the Lease is now held by acme\/infra\/runs\/43/);
  });

  it('failing for longer than the bound: given up after RELEASE_RETRY_MS, the Lease may still name the run and the run says so', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const sent = leaseReleaseFails(c, [failure('server', ETCD_TIMEOUT)], { untilMs: 10 * 60 * SEC });
    const res = await roll(c, { reboot: 'always' });
    expect(await holder(c)).toBe(OWNER);
    expect(res.result).toBe('failed');
    expect(res.error?.message).toMatch(/not released at the end of the run: releasing it failed: .*etcdserver: request timed out/);
    expect(sent.at(-1)! - sent[0]).toBeLessThanOrEqual(RELEASE_RETRY_MS);
    expect(sent.at(-1)! - sent[0]).toBeGreaterThan(RELEASE_RETRY_MS - 16 * SEC);
  });

  it('a definite refusal (403) is not tried again', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const sent = leaseReleaseFails(c, [
      failure('forbidden', 'Error from server (Forbidden): leases.coordination.k8s.io "registry-auth-rollout" is forbidden'),
    ]);
    const res = await roll(c, { reboot: 'always' });
    expect(sent).toHaveLength(1);
    expect(res.result).toBe('failed');
    expect(await holder(c)).toBe(OWNER);
  });
});

/** The node's release patch fails with `error` until `forMs` of virtual time passed since its first try. */
function nodeReleaseFails(c: Cluster, error: ToolError, forMs: number) {
  const orig = c.kube.patchNode.bind(c.kube);
  const sent: number[] = [];
  c.kube.patchNode = async (name, ops) => {
    if (!releasesNode(ops)) return orig(name, ops);
    sent.push(c.clock.now());
    if (c.clock.now() - sent[0] < forMs) throw error;
    return orig(name, ops);
  };
  return sent;
}

describe("a node's claim: its release is tried again the same way", () => {
  it('the verified release answered 503 for 30 s: tried again with backoff, released with the verified marker', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const sent = nodeReleaseFails(c, failure('server', SHUTTING_DOWN), 30 * SEC);
    const res = await roll(c, { reboot: 'always' });
    expect(res.records[0].outcome).toBe('rebooted');
    expect(res.result).toBe('processed');
    const s = c.kube.state('w1');
    expect(s.annotations[keys.owner]).toBeUndefined();
    expect(verifiedRev(s)).toBe('rev-2');
    expect(s.unschedulable).toBe(false);
    expect(sent.at(-1)! - sent[0]).toBeGreaterThanOrEqual(30 * SEC);
    expect(await holder(c)).toBeFalsy(); // freed (no holder)
  });

  it('the release after a failed drain answered 500 for 20 s: released (uncordoned), the node fails for its drain only', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.kube.drain = async () => {
      throw failure('forbidden', 'Error from server (Forbidden): pods "x" is forbidden', 'kubectl drain w1');
    };
    const sent = nodeReleaseFails(c, failure('server', ETCD_TIMEOUT), 20 * SEC);
    const res = await roll(c, { reboot: 'always' });
    const r = res.records[0];
    expect(r.outcome).toBe('failed');
    expect(r.nextStep).not.toMatch(/may still carry this run's claim/);
    const s = c.kube.state('w1');
    expect(s.annotations[keys.owner]).toBeUndefined();
    expect(s.unschedulable).toBe(false);
    expect(sent.length).toBeGreaterThan(2);
  });

  it('someone else claimed the node between two tries: left as it is, the release reported failed', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const orig = c.kube.patchNode.bind(c.kube);
    let tries = 0;
    c.kube.patchNode = async (name, ops) => {
      if (!releasesNode(ops)) return orig(name, ops);
      if (++tries === 1) {
        c.kube.mutate('w1', (o) => (o.metadata.annotations[keys.owner] = OTHER));
        throw failure('server', ETCD_TIMEOUT);
      }
      return orig(name, ops);
    };
    const res = await roll(c, { reboot: 'always' });
    expect(tries).toBe(1);
    expect(c.kube.state('w1').annotations[keys.owner]).toBe(OTHER);
    expect(res.records[0].outcome).toBe('failed');
    expect(res.records[0].reason).toMatch(/no longer carries this run's claim/);
  });
});

describe('phase patches and the claim ride out a passing failure in the same place', () => {
  const setsMutating = (ops: JsonPatchOp[]) => ops.some((o) => o.op === 'add' && o.path.endsWith('~1phase') && o.value === 'mutating');
  const claims = (ops: JsonPatchOp[]) =>
    ops.some((o) => o.op === 'add' && (o.path.endsWith('~1owner') || o.path === '/metadata/annotations'));

  /** The first patch `which` selects is answered by `error` (not applied); the times of each such send. */
  function firstFails(c: Cluster, which: (ops: JsonPatchOp[]) => boolean, error: ToolError) {
    const orig = c.kube.patchNode.bind(c.kube);
    const sent: number[] = [];
    c.kube.patchNode = async (name, ops) => {
      if (which(ops)) {
        sent.push(c.clock.now());
        if (sent.length === 1) throw error;
      }
      return orig(name, ops);
    };
    return sent;
  }

  it('phase=mutating answered 429 with Retry-After: 2 s: sent again after exactly that wait, the node rolled', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const tooMany = new ToolError({
      tool: 'kube-api',
      command: 'PATCH /api/v1/nodes/w1',
      kind: 'too-many-requests',
      exitCode: null,
      stderr: 'Too many requests, please try again later.',
      retryAfterMs: 2000,
    });
    const sent = firstFails(c, setsMutating, tooMany);
    const res = await roll(c, { reboot: 'always' });
    expect(res.records[0].outcome, res.records[0].reason).toBe('rebooted');
    expect(sent).toHaveLength(2);
    expect(sent[1] - sent[0]).toBe(2000);
  });

  it('the claim answered 500 "etcdserver: request timed out" (not applied): re-read, still claimable, sent again, the node rolled', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const sent = firstFails(c, claims, failure('server', ETCD_TIMEOUT));
    const res = await roll(c, { reboot: 'always' });
    expect(res.records[0].outcome, res.records[0].reason).toBe('rebooted');
    expect(sent).toHaveLength(2);
    expect(res.records[0].claim?.attempts).toBe(2);
  });
});
