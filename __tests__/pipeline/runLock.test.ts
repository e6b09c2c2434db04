import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { JsonPatchOp } from '../../src/core/model/patch.js';
import type { KubeClient, LeaseState } from '../../src/adapters/types.js';
import { ToolError, type FailureCause } from '../../src/core/errors.js';
import { LeaseContendedError, LeaseHeldError, LeaseLostError } from '../../src/pipeline/errors.js';
import { RunLock } from '../../src/pipeline/runLock.js';
import { acquireSpec, microTime } from '../../src/rules/lease.js';
import { TestClock } from '../fakes/clock.js';
import { FakeKube } from '../fakes/fakeKube.js';

const NS = 'kube-system';
const NAME = 'registry-auth-rollout';
const KEY = `${NS}/${NAME}`;
const OWNER = 'acme/infra/runs/42/attempts/1/abcdef';
const OTHER = 'acme/infra/runs/40/attempts/2/123456';

function kubeError(cause: FailureCause): ToolError {
  return new ToolError({ tool: 'kubectl', command: 'kubectl patch lease', kind: cause, exitCode: 1, stderr: `boom (${cause})` });
}

function setup(kube: KubeClient = new FakeKube()) {
  const clock = new TestClock();
  const log: string[] = [];
  const lock = new RunLock({
    kube,
    namespace: NS,
    name: NAME,
    owner: OWNER,
    clock,
    serverUrl: 'https://ghe.example',
    log: (m) => log.push(m),
  });
  return { kube, clock, lock, log };
}

/** a Lease another run (or nobody) holds, placed without recording calls */
async function seed(kube: FakeKube, spec: Record<string, unknown>): Promise<void> {
  await kube.createLease(NS, NAME, spec);
  kube.calls.length = 0;
}

const spec = (kube: FakeKube) => kube.leases.get(KEY)!.spec;

/** Another run alive: each read of its Lease after the first shows it renewed since (a new resourceVersion). */
class LiveHolderKube extends FakeKube {
  private reads = 0;
  override async getLease(ns: string, name: string): Promise<LeaseState | undefined> {
    const o = this.leases.get(`${ns}/${name}`);
    if (o?.spec.holderIdentity && o.spec.holderIdentity !== OWNER && this.reads++ > 0) {
      o.metadata.resourceVersion = String(Number(o.metadata.resourceVersion) + 1);
    }
    return super.getLease(ns, name);
  }
}

describe('RunLock.acquire', () => {
  it('creates the Lease when absent', async () => {
    const { kube, clock, lock } = setup();
    await lock.acquire();
    const fake = kube as FakeKube;
    expect(spec(fake)).toEqual(acquireSpec(OWNER, clock.now()));
    expect(fake.mutatingCalls()).toEqual([`createLease ${NAME}`]);
    expect(() => lock.assertHeld()).not.toThrow();
    expect(lock.held).toBe(true);
  });

  it('takes a free Lease (no holder key) with a CAS patch and bumps leaseTransitions', async () => {
    const { kube, clock, lock } = setup();
    const fake = kube as FakeKube;
    await seed(fake, { leaseDurationSeconds: 120, leaseTransitions: 3 });
    await lock.acquire();
    expect(spec(fake)).toMatchObject({ holderIdentity: OWNER, renewTime: microTime(clock.now()), leaseTransitions: 4 });
    expect(fake.mutatingCalls()).toEqual([`patchLease ${NAME}`]);
    const ops = fake.calls.find((c) => c.method === 'patchLease')!.ops!;
    expect(ops.slice(0, 2)).toEqual([
      { op: 'test', path: '/metadata/uid', value: fake.leases.get(KEY)!.metadata.uid },
      { op: 'test', path: '/spec/holderIdentity', value: null },
    ]);
  });

  for (const [what, agoMs, expired] of [
    ['freshly renewed', 5_000, false],
    ['expired long ago', 3_600_000, true],
  ] as const) {
    it(`refuses a Lease another run holds and renews while watched (${what} by its own times), naming holder and run URL, touching nothing`, async () => {
      const { kube, clock, lock } = setup(new LiveHolderKube());
      const fake = kube as FakeKube;
      await seed(fake, acquireSpec(OTHER, clock.now() - agoMs));
      const err = await lock.acquire().then(
        () => undefined,
        (e) => e,
      );
      expect(err).toBeInstanceOf(LeaseHeldError);
      expect(err.holder).toBe(OTHER);
      expect(err.expired).toBe(expired);
      expect(err.runUrl).toBe('https://ghe.example/acme/infra/actions/runs/40/attempts/2');
      expect(err.message).toContain(OTHER);
      expect(err.message).toContain('https://ghe.example/acme/infra/actions/runs/40/attempts/2');
      if (expired) expect(err.message).toContain('which is not trusted');
      expect(fake.mutatingCalls()).toEqual([]);
      expect(spec(fake).holderIdentity).toBe(OTHER);
      expect(() => lock.assertHeld()).toThrow(LeaseLostError);
    });
  }

  it('takes over a Lease nobody writes for its whole duration and the margin, watched on its own clock (the holder’s times are not read), with a CAS on uid, resourceVersion and holder', async () => {
    const { kube, clock, lock, log } = setup();
    const fake = kube as FakeKube;
    // its renewTime says it is fresh: a run killed a moment ago looks exactly like this
    await seed(fake, { ...acquireSpec(OTHER, clock.now()), leaseDurationSeconds: 20, leaseTransitions: 2 });
    const before = fake.leases.get(KEY)!.metadata;
    const t0 = clock.now();
    await lock.acquire();
    // 20 s and the margin (2 s: a tenth of the duration, at least 1 s) on the run's own clock
    expect(clock.now() - t0).toBeGreaterThanOrEqual(22_000);
    expect(lock.held).toBe(true);
    expect(lock.tookOverFrom).toBe(OTHER);
    expect(spec(fake)).toMatchObject({ holderIdentity: OWNER, leaseTransitions: 3, leaseDurationSeconds: 120 });
    const ops = fake.calls.find((c) => c.method === 'patchLease')!.ops!;
    expect(ops.slice(0, 3)).toEqual([
      { op: 'test', path: '/metadata/uid', value: before.uid },
      { op: 'test', path: '/metadata/resourceVersion', value: before.resourceVersion },
      { op: 'test', path: '/spec/holderIdentity', value: OTHER },
    ]);
    expect(log.join('\n')).toContain(`took over the Lease from ${OTHER}`);
  });

  it('a take-over that loses its CAS (the holder renewed between the last read and the patch) is refused, naming the holder', async () => {
    class RenewedAtTheLastMoment extends FakeKube {
      override async patchLease(ns: string, name: string, ops: JsonPatchOp[]): Promise<LeaseState> {
        const o = this.leases.get(`${ns}/${name}`)!;
        if (o.spec.holderIdentity === OTHER) o.metadata.resourceVersion = String(Number(o.metadata.resourceVersion) + 1);
        return super.patchLease(ns, name, ops);
      }
    }
    const { kube, clock, lock } = setup(new RenewedAtTheLastMoment());
    await seed(kube as FakeKube, { ...acquireSpec(OTHER, clock.now()), leaseDurationSeconds: 10 });
    const err = await lock.acquire().catch((e) => e);
    expect(err).toBeInstanceOf(LeaseHeldError);
    expect(err.holder).toBe(OTHER);
    expect(spec(kube as FakeKube).holderIdentity).toBe(OTHER);
  });

  it('uses the server URL it is given (the shell reads GITHUB_SERVER_URL: __tests__/action/inputs.test.ts) for the run URL', async () => {
    const kube = new LiveHolderKube();
    const clock = new TestClock();
    await seed(kube, acquireSpec(OTHER, clock.now()));
    const lock = new RunLock({ kube, namespace: NS, name: NAME, owner: OWNER, clock, serverUrl: 'https://github.corp' });
    await expect(lock.acquire()).rejects.toThrow('https://github.corp/acme/infra/actions/runs/40/attempts/2');
  });

  it('accepts a Lease that already carries our token (a create whose response was lost)', async () => {
    const { kube, clock, lock } = setup();
    const fake = kube as FakeKube;
    await seed(fake, acquireSpec(OWNER, clock.now()));
    await lock.acquire();
    expect(lock.held).toBe(true);
    expect(fake.mutatingCalls()).toEqual([]);
  });

  it('race on create: 409, re-read, the winner (alive: it renews while watched) is named', async () => {
    class RacingKube extends LiveHolderKube {
      override async createLease(ns: string, name: string, s: Record<string, unknown>): Promise<LeaseState> {
        if (!this.leases.has(`${ns}/${name}`)) await super.createLease(ns, name, acquireSpec(OTHER, Date.parse('2026-11-30T10:00:00Z')));
        return super.createLease(ns, name, s);
      }
    }
    const { kube, lock } = setup(new RacingKube());
    const err = await lock.acquire().catch((e) => e);
    expect(err).toBeInstanceOf(LeaseHeldError);
    expect(err.holder).toBe(OTHER);
    // the winner is watched: its renewal ends the watch, and the Lease is judged once more
    expect((kube as FakeKube).calls.map((c) => c.method)).toEqual([
      'getLease',
      'createLease',
      'createLease',
      'getLease',
      'getLease',
      'getLease',
    ]);
  });

  it('race on take: 422, re-read shows it free again, the second take wins', async () => {
    let raced = false;
    class RacingKube extends FakeKube {
      override async patchLease(ns: string, name: string, ops: JsonPatchOp[]): Promise<LeaseState> {
        if (!raced) {
          raced = true;
          // another run takes it and releases it again between our read and our patch
          const o = this.leases.get(`${ns}/${name}`)!;
          o.metadata.resourceVersion = String(Number(o.metadata.resourceVersion) + 5);
          o.spec.holderIdentity = OTHER;
          try {
            return await super.patchLease(ns, name, ops);
          } finally {
            delete o.spec.holderIdentity;
          }
        }
        return super.patchLease(ns, name, ops);
      }
    }
    const fake = new RacingKube();
    await seed(fake, { leaseDurationSeconds: 120 });
    const { lock } = setup(fake);
    await lock.acquire();
    expect(spec(fake).holderIdentity).toBe(OWNER);
    expect(fake.calls.map((c) => c.method)).toEqual(['getLease', 'patchLease', 'getLease', 'patchLease']);
  });

  it('two races in a row give up with LeaseContendedError', async () => {
    class AlwaysRacing extends FakeKube {
      override async createLease(): Promise<LeaseState> {
        throw new ToolError({ tool: 'kubectl', command: 'kubectl create lease', kind: 'conflict', exitCode: 1, stderr: 'AlreadyExists' });
      }
    }
    const { lock } = setup(new AlwaysRacing());
    await expect(lock.acquire()).rejects.toBeInstanceOf(LeaseContendedError);
  });

  it('a stored "" holder (pointer kept by the server) is taken on the second try, testing ""', async () => {
    const state: LeaseState = { namespace: NS, name: NAME, uid: 'u1', resourceVersion: '9', holderIdentity: '', leaseDurationSeconds: 120 };
    const patches: JsonPatchOp[][] = [];
    const kube = {
      getLease: async () => ({ ...state }),
      patchLease: async (_ns: string, _n: string, ops: JsonPatchOp[]) => {
        patches.push(ops);
        const holderTest = ops.find((o) => o.op === 'test' && o.path === '/spec/holderIdentity') as { value: unknown };
        if (holderTest.value !== '') throw kubeError('invalid');
        return { ...state, holderIdentity: OWNER, resourceVersion: '10' };
      },
    } as unknown as KubeClient;
    const { lock } = setup(kube);
    await lock.acquire();
    expect(lock.held).toBe(true);
    expect(patches.map((p) => (p[1] as { value: unknown }).value)).toEqual([null, '']);
  });

  it('other failures are thrown as they are', async () => {
    class Down extends FakeKube {
      override async getLease(): Promise<LeaseState | undefined> {
        throw kubeError('transport');
      }
    }
    const { lock } = setup(new Down());
    await expect(lock.acquire()).rejects.toMatchObject({ kind: 'transport' });
  });
});

describe('RunLock renewal', () => {
  it('tick renews renewTime with a holder CAS', async () => {
    const { kube, clock, lock } = setup();
    const fake = kube as FakeKube;
    await lock.acquire();
    clock.t += 30_000;
    await lock.tick();
    expect(spec(fake).renewTime).toBe(microTime(clock.now()));
    const ops = fake.calls.filter((c) => c.method === 'patchLease').at(-1)!.ops!;
    expect(ops[0]).toEqual({ op: 'test', path: '/spec/holderIdentity', value: OWNER });
    lock.assertHeld();
  });

  it('a renewal that finds another holder loses the lock: assertHeld throws naming the new holder', async () => {
    const { kube, clock, lock } = setup();
    const fake = kube as FakeKube;
    await lock.acquire();
    spec(fake).holderIdentity = OTHER;
    clock.t += 30_000;
    await lock.tick();
    expect(() => lock.assertHeld()).toThrow(LeaseLostError);
    expect(() => lock.assertHeld()).toThrow(OTHER);
    expect(spec(fake).holderIdentity).toBe(OTHER);
    // no further renewal attempts once lost
    const before = fake.calls.length;
    await lock.tick();
    expect(fake.calls.length).toBe(before);
  });

  it('a deleted Lease loses the lock at once', async () => {
    const { kube, clock, lock } = setup();
    await lock.acquire();
    (kube as FakeKube).leases.delete(KEY);
    clock.t += 30_000;
    await lock.tick();
    expect(() => lock.assertHeld()).toThrow('the Lease was deleted');
  });

  it('transport failures are retried; the lock is lost only after a whole lease duration without success', async () => {
    let down = false;
    class Flaky extends FakeKube {
      override async patchLease(ns: string, name: string, ops: JsonPatchOp[]): Promise<LeaseState> {
        if (down) throw kubeError('transport');
        return super.patchLease(ns, name, ops);
      }
    }
    const { clock, lock } = setup(new Flaky());
    await lock.acquire();
    down = true;
    for (let i = 1; i <= 3; i++) {
      clock.t += 30_000;
      await lock.tick();
      lock.assertHeld(); // 30, 60, 90 s without renewal: still ours
    }
    down = false;
    clock.t += 30_000;
    await lock.tick(); // 120 s: succeeds, budget resets
    lock.assertHeld();
    down = true;
    for (let i = 1; i <= 3; i++) {
      clock.t += 30_000;
      await lock.tick();
      lock.assertHeld();
    }
    clock.t += 30_000;
    await lock.tick(); // 120 s since the last success
    expect(() => lock.assertHeld()).toThrow(/no successful renewal for 2m0s/);
  });

  it('startRenewing calls tick every renewEveryMs until stopped', async () => {
    vi.useFakeTimers();
    try {
      const { lock } = setup();
      await lock.acquire();
      const tick = vi.spyOn(lock, 'tick').mockResolvedValue();
      lock.startRenewing();
      lock.startRenewing(); // idempotent: one timer
      vi.advanceTimersByTime(30_000);
      expect(tick).toHaveBeenCalledTimes(1);
      vi.advanceTimersByTime(60_000);
      expect(tick).toHaveBeenCalledTimes(3);
      lock.stop();
      vi.advanceTimersByTime(90_000);
      expect(tick).toHaveBeenCalledTimes(3);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('RunLock.release', () => {
  it('CAS-releases our Lease: no holder key left; assertHeld throws afterwards', async () => {
    const { kube, lock } = setup();
    const fake = kube as FakeKube;
    await lock.acquire();
    const out = await lock.release();
    expect(out.released).toBe(true);
    expect('holderIdentity' in spec(fake)).toBe(false);
    const ops = fake.calls.filter((c) => c.method === 'patchLease').at(-1)!.ops!;
    expect(ops[0]).toEqual({ op: 'test', path: '/spec/holderIdentity', value: OWNER });
    expect(() => lock.assertHeld()).toThrow(LeaseLostError);
    // a second run can now take it
    const second = new RunLock({ kube: fake, namespace: NS, name: NAME, owner: OTHER, clock: new TestClock() });
    await second.acquire();
    expect(spec(fake).holderIdentity).toBe(OTHER);
  });

  it('a stolen Lease is not clobbered: reported, not thrown', async () => {
    const { kube, lock } = setup();
    const fake = kube as FakeKube;
    await lock.acquire();
    spec(fake).holderIdentity = OTHER;
    const out = await lock.release();
    expect(out.released).toBe(false);
    expect(out.message).toContain(OTHER);
    expect(spec(fake).holderIdentity).toBe(OTHER);
  });

  it('a deleted Lease is reported, not thrown; a transport failure is thrown', async () => {
    const a = setup();
    await a.lock.acquire();
    (a.kube as FakeKube).leases.delete(KEY);
    await expect(a.lock.release()).resolves.toMatchObject({ released: false, message: expect.stringContaining('deleted') });

    class Down extends FakeKube {
      broken = false;
      override async patchLease(ns: string, name: string, ops: JsonPatchOp[]): Promise<LeaseState> {
        if (this.broken) throw kubeError('transport');
        return super.patchLease(ns, name, ops);
      }
    }
    const down = new Down();
    const b = setup(down);
    await b.lock.acquire();
    down.broken = true;
    await expect(b.lock.release()).rejects.toMatchObject({ kind: 'transport' });
  });

  it('release without acquire does nothing', async () => {
    const { kube, lock } = setup();
    expect((await lock.release()).released).toBe(false);
    expect((kube as FakeKube).mutatingCalls()).toEqual([]);
  });
});

let saved: string | undefined;
beforeEach(() => {
  saved = process.env.GITHUB_SERVER_URL;
});
afterEach(() => {
  if (saved === undefined) delete process.env.GITHUB_SERVER_URL;
  else process.env.GITHUB_SERVER_URL = saved;
});

describe('RunLock.confirm (immediately before a mutation)', () => {
  it('a renewal that succeeds proves the Lease ours and renews it', async () => {
    const { kube, clock, lock } = setup();
    await lock.acquire();
    clock.t += 5000;
    await lock.confirm();
    expect(spec(kube as FakeKube).renewTime).toBe(microTime(clock.now()));
  });

  it('another holder written since the last tick is seen at once: lost, naming the holder', async () => {
    const { kube, lock } = setup();
    await lock.acquire();
    await kube.patchLease(NS, NAME, [{ op: 'replace', path: '/spec/holderIdentity', value: OTHER }]);
    await expect(lock.confirm()).rejects.toThrow(LeaseLostError);
    await expect(lock.confirm()).rejects.toThrow(OTHER);
    expect(() => lock.assertHeld()).toThrow(OTHER);
    expect(spec(kube as FakeKube).holderIdentity).toBe(OTHER);
  });

  it('a renewal lost in transit is proven by a read that names us; without that read it throws but is not marked lost', async () => {
    const fake = new FakeKube();
    const { lock } = setup(fake);
    await lock.acquire();
    const patch = fake.patchLease.bind(fake);
    fake.patchLease = async () => {
      throw kubeError('transport');
    };
    await expect(lock.confirm()).resolves.toBeUndefined();
    fake.getLease = async () => {
      throw kubeError('transport');
    };
    await expect(lock.confirm()).rejects.toThrow(/could not prove the Lease is still ours/);
    expect(() => lock.assertHeld()).not.toThrow();
    fake.patchLease = patch;
  });

  it('several nodes confirming at once: a renewal answered after another one proved the Lease lost does not let its mutation start', async () => {
    const fake = new FakeKube();
    const { lock, clock } = setup(fake);
    await lock.acquire();
    const patch = fake.patchLease.bind(fake);
    let answerFirst!: () => void;
    let calls = 0;
    fake.patchLease = async (ns, name, ops) => {
      calls++;
      if (calls === 1) {
        // the first node's renewal reached the server while the Lease was still ours; its answer is slow
        const answer = await patch(ns, name, ops);
        await new Promise<void>((r) => (answerFirst = r));
        return answer;
      }
      // meanwhile someone else took the Lease: the second node's renewal is rejected
      await patch(ns, name, [{ op: 'replace', path: '/spec/holderIdentity', value: OTHER }]);
      throw kubeError('invalid');
    };
    const first = lock.confirm();
    clock.t += 1000;
    await expect(lock.confirm()).rejects.toThrow(OTHER);
    answerFirst();
    await expect(first).rejects.toThrow(LeaseLostError);
  });
});

// The proof by read (RunLock.confirm's doc comment): the Lease read in the same command as the fence
// read of the node. Only a read that names us, unexpired, proves it; anything else goes to the
// renewal, which decides and classifies the loss.
describe('RunLock.confirm with the Lease read beside the node', () => {
  const readNow = async (fake: FakeKube) => ({ ok: true as const, lease: await fake.getLease(NS, NAME) });

  it('a read naming us, unexpired, proves the Lease: no renewal is sent', async () => {
    const fake = new FakeKube();
    const { lock, clock } = setup(fake);
    await lock.acquire();
    clock.t += 5000;
    const read = await readNow(fake);
    fake.calls.length = 0;
    await expect(lock.confirm(read)).resolves.toBeUndefined();
    expect(fake.calls).toEqual([]);
  });

  it('a read naming another holder is not a proof: the renewal is rejected and the lock lost, naming the holder', async () => {
    const fake = new FakeKube();
    const { lock } = setup(fake);
    await lock.acquire();
    await fake.patchLease(NS, NAME, [{ op: 'replace', path: '/spec/holderIdentity', value: OTHER }]);
    const read = await readNow(fake);
    fake.calls.length = 0;
    await expect(lock.confirm(read)).rejects.toThrow(OTHER);
    expect(fake.calls[0]).toMatchObject({ method: 'patchLease' });
    expect(() => lock.assertHeld()).toThrow(OTHER);
  });

  it('a read naming us whose last renewal has expired is not a proof: a renewal is sent', async () => {
    const fake = new FakeKube();
    const { lock, clock } = setup(fake);
    await lock.acquire();
    const read = await readNow(fake);
    clock.t += 120_000; // the Lease's duration: expired at the read's own renewTime + 120 s
    fake.calls.length = 0;
    await lock.confirm(read);
    expect(fake.calls.map((c) => c.method)).toEqual(['patchLease']);
    expect(spec(fake).renewTime).toBe(microTime(clock.now()));
  });

  it('an unreadable or absent Lease beside the node is not a proof: the renewal decides (deleted: lost)', async () => {
    const fake = new FakeKube();
    const { lock } = setup(fake);
    await lock.acquire();
    fake.calls.length = 0;
    await lock.confirm({ ok: false, error: 'Error from server (Forbidden): leases.coordination.k8s.io "x" is forbidden' });
    expect(fake.calls.map((c) => c.method)).toEqual(['patchLease']);
    fake.leases.delete(KEY);
    await expect(lock.confirm({ ok: true, lease: undefined })).rejects.toThrow(/the Lease was deleted/);
  });

  it('a read naming us does not revive a lock already known lost (another node learned it first)', async () => {
    const fake = new FakeKube();
    const { lock } = setup(fake);
    await lock.acquire();
    const read = await readNow(fake);
    await fake.patchLease(NS, NAME, [{ op: 'replace', path: '/spec/holderIdentity', value: OTHER }]);
    await lock.tick();
    fake.calls.length = 0;
    await expect(lock.confirm(read)).rejects.toThrow(LeaseLostError);
    expect(fake.calls).toEqual([]);
  });
});
