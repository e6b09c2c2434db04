// The run Lease proven before each mutation (src/pipeline/runLock.ts confirm), on the in-memory fakes:
// a Lease taken by another holder stops the next claim, Talos patch, drain, reboot or release, and the
// proof rides on the fence read before each mutation (safety defect 5 of the acceptance testing).
import { describe, expect, it } from 'vitest';
import { keys, makeCluster, roll } from './harness.js';

const LEASE = ['kube-system', 'registry-auth-rollout'] as const;
const THIEF = 'thief/repo/runs/1/attempts/1/0000';

const isPhasePatch = (ops: { op: string; path: string; value?: unknown }[]) =>
  ops.some((o) => o.op === 'add' && o.path.endsWith('phase') && o.value === 'mutating');
const isReleasePatch = (ops: { op: string; path: string }[]) => ops.some((o) => o.op === 'remove' && o.path.endsWith('owner'));

async function steal(c: ReturnType<typeof makeCluster>): Promise<void> {
  await c.kube.patchLease(...LEASE, [{ op: 'replace', path: '/spec/holderIdentity', value: THIEF }]);
}

describe('a fresh Lease check immediately before each mutation', () => {
  it('the Lease taken between the claim and the credential patch: no Talos mutation, our claim released, the run fails', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2' }]);
    let stolen = false;
    const orig = c.kube.patchNode.bind(c.kube);
    c.kube.patchNode = async (name, ops) => {
      const r = await orig(name, ops);
      if (!stolen && isPhasePatch(ops)) {
        stolen = true;
        await steal(c);
      }
      return r;
    };
    const res = await roll(c);
    expect(stolen).toBe(true);
    expect(res.result).toBe('failed');
    expect(c.talos.mutatingCalls()).toEqual([]);
    expect(c.kube.calls.some((x) => x.method === 'drain')).toBe(false);
    expect(res.records[0].reason).toMatch(/Lease/);
    expect(res.records[0].reason).toContain(THIEF);
    // nothing on Talos changed: our claim is undone
    const s = c.kube.state('w1');
    expect(s.annotations[keys.owner]).toBeUndefined();
    expect(s.unschedulable).toBe(false);
    expect(res.notReached).toEqual(['w2']);
    expect((await c.kube.getLease(...LEASE))?.holderIdentity).toBe(THIEF);
  });

  it('the Lease taken before the drain: no drain, no reboot', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const origPatch = c.talos.patchMachineConfig.bind(c.talos);
    c.talos.patchMachineConfig = async (address) => {
      await origPatch(address);
      await steal(c);
    };
    const res = await roll(c);
    expect(res.result).toBe('failed');
    expect(c.kube.calls.some((x) => x.method === 'drain')).toBe(false);
    expect(c.talos.mutatingCalls()).toEqual(['patchMachineConfig 10.0.0.10']);
    expect(res.records[0].reason).toContain(THIEF);
    // Talos was changed: the node stays fenced for a person to look at
    expect(c.kube.state('w1').annotations[keys.phase]).toBe('mutating');
  });

  it('another holder at our final release: the Lease is not cleared and the run fails', async () => {
    const c = makeCluster([{ name: 'w1', current: true }]);
    const orig = c.kube.patchNode.bind(c.kube);
    c.kube.patchNode = async (name, ops) => {
      const r = await orig(name, ops);
      if (isReleasePatch(ops)) await steal(c);
      return r;
    };
    const res = await roll(c);
    expect(res.result).toBe('failed');
    expect(res.error?.message).toContain(THIEF);
    expect((await c.kube.getLease(...LEASE))?.holderIdentity).toBe(THIEF);
    // the node's own work is reported as done
    expect(res.records[0].outcome).toBe('reboot-skipped');
  });
});

// The proof before each mutation rides on the fence read just before it (docs/architecture.md#lease-proof):
// the Lease read in the same command as the node. A renewal is sent only where that read is not the
// last thing before the mutation (the quorum gate of a control plane) or does not prove the Lease.
describe('the Lease proof rides on the fence read before each mutation', () => {
  /** each node mutation, Talos mutation or renewal, with the kube read just before it */
  function trace(c: ReturnType<typeof makeCluster>): string[] {
    const out: string[] = [];
    let last = '';
    const kube = c.kube;
    for (const m of ['getNode', 'getLease', 'listNodes', 'patchLease', 'drain'] as const) {
      const orig = (kube[m] as (...a: unknown[]) => Promise<unknown>).bind(kube);
      (kube as unknown as Record<string, unknown>)[m] = async (...a: unknown[]) => {
        if (m === 'patchLease' || m === 'drain') out.push(`${m} after ${last}`);
        last = m;
        return orig(...a);
      };
    }
    for (const m of ['patchMachineConfig', 'reboot'] as const) {
      const orig = (c.talos[m] as (...a: unknown[]) => Promise<unknown>).bind(c.talos);
      (c.talos as unknown as Record<string, unknown>)[m] = async (...a: unknown[]) => {
        out.push(`${m} after ${last}`);
        last = m;
        return orig(...a);
      };
    }
    const patchNode = kube.patchNode.bind(kube);
    kube.patchNode = async (name, ops) => {
      if (isReleasePatch(ops)) out.push(`release after ${last}`);
      last = 'patchNode';
      return patchNode(name, ops);
    };
    return out;
  }

  it('a worker: the Lease read beside the node proves it before the patch, the drain, the reboot and the release; no renewal', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const seen = trace(c);
    const res = await roll(c);
    expect(res.records[0].outcome).toBe('rebooted');
    expect(seen).toEqual([
      'patchMachineConfig after getLease',
      'drain after getLease',
      'reboot after getLease',
      'release after getLease',
      'patchLease after listNodes', // the run's own Lease release, after the final listings
    ]);
  });

  it('a control plane: the quorum gate sits between the guard and the drain or reboot, so those two are proven by a renewal', async () => {
    const c = makeCluster([
      { name: 'cp1', role: 'control-plane' },
      { name: 'cp2', role: 'control-plane', current: true },
      { name: 'cp3', role: 'control-plane', current: true },
    ]);
    const seen = trace(c);
    const res = await roll(c, { nodes: ['cp1'] });
    expect(res.records.map((r) => r.outcome)).toEqual(['rebooted']);
    expect(seen).toEqual([
      'patchMachineConfig after getLease',
      'patchLease after listNodes', // the renewal before the drain: the quorum gate came after the guard's read
      'drain after patchLease',
      'patchLease after listNodes',
      'reboot after patchLease',
      'release after getLease',
      'patchLease after listNodes',
    ]);
  });

  it('a Lease read that names another holder is not used: the renewal is rejected, nothing on Talos changes, the claim is undone', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const seen = trace(c);
    const orig = c.kube.patchNode.bind(c.kube);
    c.kube.patchNode = async (name, ops) => {
      const r = await orig(name, ops);
      // written straight into the fake, so the trace shows only the run's own calls
      if (isPhasePatch(ops)) c.kube.leases.get(LEASE.join('/'))!.spec.holderIdentity = THIEF;
      return r;
    };
    const res = await roll(c);
    expect(res.result).toBe('failed');
    expect(res.records[0].reason).toContain(THIEF);
    expect(seen[0]).toBe('patchLease after getLease'); // the read did not prove it; the renewal decided
    expect(c.talos.mutatingCalls()).toEqual([]);
    expect(c.kube.state('w1').annotations[keys.owner]).toBeUndefined();
  });
});

// The boot id read before the reboot failed until the deadline, so the reboot was
// never sent. The node runs the containerd it ran: give it back as after a failed drain (uncordoned
// unless cordoned before, no verified marker), saying its containerd still holds the old credential.
