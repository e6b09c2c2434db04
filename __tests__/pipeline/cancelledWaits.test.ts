// A cancelled run starts no new step, and its waits end at the next turn. The channel to the API server
// outlives the cancellation (docs/kube-channel.md), so a read sent after it is answered: no wait may
// rely on its reads failing to notice that the run was cancelled. On the in-memory fakes, whose reads
// are always answered, as the channel's are within the cleanup's window.
import { describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/pipeline/errors.js';
import { RunLock } from '../../src/pipeline/runLock.js';
import { verifyImage } from '../../src/pipeline/verifyImage.js';
import { acquireSpec } from '../../src/rules/lease.js';
import { TestClock } from '../fakes/clock.js';
import { FakeKube } from '../fakes/fakeKube.js';
import { makeCluster, OWNER, roll } from './harness.js';

describe('a wait that polls the API server ends at its next turn once the run is cancelled', () => {
  it('waiting for a rebooted node to come back Ready: no read after the one that saw the cancellation, the node left fenced', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const hook = c.talos.rebootHook!;
    // the machine goes down and stays down: the wait would poll until ready-timeout (600 s)
    c.talos.rebootHook = (t) => {
      hook(t);
      c.kube.mutate(t.name, (o) => (o.status.conditions = [{ type: 'Ready', status: 'Unknown' }]));
    };
    let cancelled = false;
    let readsAfter = 0;
    const read = c.kube.getNodeAndLease.bind(c.kube);
    c.kube.getNodeAndLease = async (...args) => {
      if (cancelled) readsAfter++;
      // the runner's signal arrives during the first poll after the Reboot
      if (c.talos.rebootsSentWith.length > 0) cancelled = true;
      return read(...args);
    };
    const started = c.clock.now();
    const res = await roll(c, {}, { cancelled: () => cancelled });
    expect(cancelled).toBe(true);
    expect(readsAfter).toBe(0);
    expect(c.clock.now() - started).toBeLessThan(60_000);
    const r = res.records[0];
    expect(r.outcome).toBe('failed');
    expect(r.reason).toMatch(/cancelled while w1 was coming back/);
    // the Reboot was sent: fenced, not released
    expect(c.kube.state('w1').annotations['registry-auth-rollout/owner']).toBeDefined();
  });
});

describe('the wait for another run’s Lease to expire', () => {
  it('cancelled while it watches: no read after the one that saw the cancellation, no take-over, the Lease left to its holder', async () => {
    const NS = 'kube-system';
    const NAME = 'registry-auth-rollout';
    const OTHER = 'acme/infra/runs/40/attempts/2/123456';
    const clock = new TestClock();
    const kube = new FakeKube();
    // a Lease nobody renews: the watch would take it over after its duration and the margin
    await kube.createLease(NS, NAME, { ...acquireSpec(OTHER, clock.now()), leaseDurationSeconds: 20 });
    let cancelled = false;
    let readsAfter = 0;
    const read = kube.getLease.bind(kube);
    kube.getLease = async (ns: string, name: string) => {
      if (cancelled) readsAfter++;
      // the runner's signal arrives during the watch's second read
      if (kube.calls.filter((x) => x.method === 'getLease').length >= 2) cancelled = true;
      return read(ns, name);
    };
    const lock = new RunLock({ kube, namespace: NS, name: NAME, owner: OWNER, clock, cancelled: () => cancelled });
    const e = await lock.acquire().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CancelledError);
    expect((e as Error).message).toMatch(/cancelled while it waited for the Lease kube-system\/registry-auth-rollout/);
    expect(readsAfter).toBe(0);
    expect(kube.calls.filter((x) => x.method === 'patchLease')).toEqual([]);
    expect(kube.leases.get(`${NS}/${NAME}`)!.spec.holderIdentity).toBe(OTHER);
  });
});

describe('the wait for the probe pod’s pull', () => {
  it('cancelled while it waits: no read after the one that saw the cancellation, and the probe pod is deleted at once', async () => {
    const clock = new TestClock();
    const kube = new FakeKube();
    let cancelled = false;
    let readsAfter = 0;
    // the kubelet has not started the pull: the wait would poll until its timeout
    kube.getPod = async (namespace: string, name: string) => {
      kube.calls.push({ method: 'getPod' });
      if (cancelled) readsAfter++;
      cancelled = true;
      const pod = kube.pods.get(`${namespace}/${name}`);
      return pod && structuredClone(pod);
    };
    const started = clock.now();
    const e = await verifyImage({
      kube,
      node: 'w1',
      image: 'ghcr.io/acme/private:1',
      namespace: 'kube-system',
      timeoutMs: 600_000,
      pollMs: 1000,
      clock,
      nonce: OWNER,
      cancelled: () => cancelled,
    }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(CancelledError);
    expect((e as Error).message).toMatch(/cancelled while the probe pod .* waited to pull ghcr\.io\/acme\/private:1/);
    expect(readsAfter).toBe(0);
    expect(clock.now() - started).toBeLessThan(10_000);
    expect(kube.calls.map((c) => c.method)).toEqual(['createPod', 'getPod', 'deletePod']);
    expect(kube.pods.size).toBe(0);
  });
});
