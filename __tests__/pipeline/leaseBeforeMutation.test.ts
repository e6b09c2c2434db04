// Safety defects found in acceptance testing, each reproduced on the in-memory fakes: which node is
// held, in which phase, and what a failure, a lost Lease or a cancellation does with it.
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/errors.js';
import { RunLock } from '../../src/pipeline/runLock.js';
import { holderRenewsWhileWatched, keys, makeCluster, OWNER, roll, verifiedRev } from './harness.js';

const LEASE = ['kube-system', 'registry-auth-rollout'] as const;
const THIEF = 'thief/repo/runs/1/attempts/1/0000';
const OTHER = 'acme/infra/runs/43/attempts/1/bbbb';

const transport = (what: string) =>
  new ToolError({ tool: 'kubectl', command: what, kind: 'transport', exitCode: 1, stderr: 'Unable to connect to the server: EOF' });
const forbidden = (what: string) =>
  new ToolError({ tool: 'kubectl', command: what, kind: 'forbidden', exitCode: 1, stderr: 'Error from server (Forbidden)' });

const isPhasePatch = (ops: { op: string; path: string; value?: unknown }[]) =>
  ops.some((o) => o.op === 'add' && o.path.endsWith('phase') && o.value === 'mutating');
const isReleasePatch = (ops: { op: string; path: string }[]) => ops.some((o) => o.op === 'remove' && o.path.endsWith('owner'));
const isClaimPatch = (ops: { op: string; path: string; value?: unknown }[]) =>
  ops.some((o) => o.op === 'add' && (o.path.endsWith('owner') || o.path === '/metadata/annotations'));

async function steal(c: ReturnType<typeof makeCluster>): Promise<void> {
  await c.kube.patchLease(...LEASE, [{ op: 'replace', path: '/spec/holderIdentity', value: THIEF }]);
}

describe('defect 3: a later pass that finds the inventory unsafe keeps the report complete and true', () => {
  it('two nodes sharing an InternalIP at the re-listing: the rolled node stays in the result, nothing claims "nothing was changed"', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2', current: true }]);
    c.kube.drain = async (name) => {
      c.kube.calls.push({ method: 'drain', name });
      // a node registers with w2's address while w1 is drained
      c.kube.addNode({ name: 'w9', ip: '10.0.0.11' });
    };
    const res = await roll(c);
    expect(res.result).toBe('failed');
    expect(res.records.map((r) => [r.node, r.outcome])).toEqual([
      ['w1', 'rebooted'],
      ['w2', 'reboot-skipped'],
    ]);
    expect(res.error?.message).toMatch(/10\.0\.0\.11/);
    expect(res.error?.message).not.toMatch(/nothing was changed/i);
    expect(res.error?.message).toMatch(/2 node\(s\) were already processed/);
  });

  it('a failed release after a failed credential patch never says nothing on Talos was changed', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.talos.patchFails = 'rpc error: code = Unavailable';
    const orig = c.kube.patchNode.bind(c.kube);
    c.kube.patchNode = async (name, ops) => {
      if (isReleasePatch(ops)) throw forbidden(`kubectl patch node ${name}`);
      return orig(name, ops);
    };
    const res = await roll(c);
    expect(res.result).toBe('failed');
    const r = res.records[0];
    expect(r.outcome).toBe('failed');
    expect(`${r.reason} ${r.nextStep}`).not.toMatch(/nothing on Talos was changed/i);
    expect(r.reason).toMatch(/credential patch/);
    expect(r.reason).toMatch(/releas/);
    expect(r.nextStep).toMatch(/patch node w1 --type=json/);
    // the claim is still on the node: the Lease stays held so nobody starts over it
    expect(c.kube.state('w1').annotations[keys.owner]).toBe(OWNER);
    expect((await c.kube.getLease(...LEASE))?.holderIdentity).toBe(OWNER);
  });
});

describe('defect 5: a fresh Lease check immediately before each mutation', () => {
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

describe('defect 9: a cancellation late in the run keeps the report of finished work', () => {
  it('cancelled while the run lists the nodes again at the end: every rolled node is in the result', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2', current: true }]);
    let cancelled = false;
    let lists = 0;
    const orig = c.kube.listNodes.bind(c.kube);
    c.kube.listNodes = async () => {
      if (++lists === 2) {
        // the runner's signal kills the running `kubectl get nodes`
        cancelled = true;
        throw new ToolError({
          tool: 'kubectl',
          command: 'kubectl get nodes',
          kind: 'unknown',
          exitCode: null,
          stderr: 'signal: terminated',
        });
      }
      return orig();
    };
    const res = await roll(c, {}, { cancelled: () => cancelled });
    expect(res.result).toBe('failed');
    expect(res.records.map((r) => [r.node, r.outcome])).toEqual([
      ['w1', 'rebooted'],
      ['w2', 'reboot-skipped'],
    ]);
    expect(res.error?.message).toMatch(/cancel/);
    // finished work is kept and the Lease is given back (no node is held)
    expect((await c.kube.getLease(...LEASE))?.holderIdentity).toBe('');
  });
});

describe('defect 10: adopting a claim whose response was lost re-validates the fence', () => {
  it('an operator uncordons the node before the re-read: no Talos mutation ever runs on it', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const orig = c.kube.patchNode.bind(c.kube);
    let lost = false;
    c.kube.patchNode = async (name, ops) => {
      const r = await orig(name, ops);
      if (!lost && isClaimPatch(ops)) {
        lost = true;
        c.kube.mutate(name, (o) => {
          o.spec.unschedulable = false;
        });
        throw transport(`kubectl patch node ${name}`);
      }
      return r;
    };
    const res = await roll(c);
    expect(lost).toBe(true);
    expect(res.result).toBe('failed');
    expect(c.talos.mutatingCalls()).toEqual([]);
    expect(c.kube.calls.some((x) => x.method === 'drain')).toBe(false);
    expect(res.records[0].reason).toMatch(/uncordon|unschedulable/);
    expect(res.records[0].nextStep ?? '').not.toMatch(/left cordoned/);
  });

  it('the phase=mutating patch tests the fence: a node uncordoned after the claim is never patched on Talos', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.kube.beforePatch = (name, ops) => {
      if (isPhasePatch(ops))
        c.kube.mutate(name, (o) => {
          o.spec.unschedulable = false;
        });
    };
    const res = await roll(c);
    expect(res.result).toBe('failed');
    expect(c.talos.mutatingCalls()).toEqual([]);
    const phaseOps = c.kube.calls.find((x) => x.method === 'patchNode' && isPhasePatch(x.ops ?? []))?.ops ?? [];
    expect(phaseOps).toContainEqual({ op: 'test', path: '/spec/unschedulable', value: true });
  });
});

describe('defect 11: a run meeting the Lease kept for a fenced node names the node and the release command while its run is alive', () => {
  it('the second run, refused while the first renews its Lease, names the fenced node of the first and how to release it', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2' }]);
    c.kube.pull = () => ({ ok: false, reason: '401 Unauthorized' });
    const first = await roll(c, { verifyImage: 'ghcr.io/acme/private:1' });
    expect(first.result).toBe('failed');
    expect(c.kube.state('w1').annotations[keys.phase]).toBe('mutating');
    expect((await c.kube.getLease(...LEASE))?.holderIdentity).toBe(OWNER);

    holderRenewsWhileWatched(c.kube);
    const second = roll(
      c,
      {},
      { owner: OTHER, lock: new RunLock({ kube: c.kube, namespace: LEASE[0], name: LEASE[1], owner: OTHER, clock: c.clock }) },
    );
    await expect(second).rejects.toThrow(/w1/);
    await expect(second).rejects.toThrow(/kubectl patch node w1 --type=json/);
    await expect(second).rejects.toThrow(/phase=mutating/);
  });

  it('an abandoned claim outside the second run’s selection: refused before anything changes, naming the node and both ways out', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2' }]);
    c.kube.pull = () => ({ ok: false, reason: '401 Unauthorized' });
    await roll(c, { verifyImage: 'ghcr.io/acme/private:1' });
    expect(c.kube.state('w1').annotations[keys.owner]).toBe(OWNER);
    // the first run's Lease given back (as recover-fences does), its claim on w1 left: abandoned
    const lease = await c.kube.getLease(...LEASE);
    await c.kube.patchLease(...LEASE, [{ op: 'replace', path: '/spec/holderIdentity', value: '' }]);
    expect((await c.kube.getLease(...LEASE))?.uid).toBe(lease?.uid);
    const before = c.kube.mutatingCalls().length;

    const lock = new RunLock({ kube: c.kube, namespace: LEASE[0], name: LEASE[1], owner: OTHER, clock: c.clock });
    const second = roll(c, { nodes: ['w2'] }, { owner: OTHER, lock });
    await expect(second).rejects.toThrow(/outside this run's selection, nothing was changed: w1 \(registry-auth-rollout\/owner=/);
    await expect(second).rejects.toThrow(/select them too .*or release them with mode: recover-fences/);
    expect(c.kube.mutatingCalls().slice(before)).toEqual([]);
    expect(c.kube.state('w1').annotations[keys.owner]).toBe(OWNER);
    expect(lock.held).toBe(false);
  });

  it('a live run’s claim outside the second run’s selection: the second run is refused naming that run (its Lease renewed while watched), not told the claim was left', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2' }]);
    c.kube.pull = () => ({ ok: false, reason: '401 Unauthorized' });
    await roll(c, { verifyImage: 'ghcr.io/acme/private:1' });
    expect(c.kube.state('w1').annotations[keys.owner]).toBe(OWNER);
    expect((await c.kube.getLease(...LEASE))?.holderIdentity).toBe(OWNER);
    const before = c.kube.mutatingCalls().length;

    holderRenewsWhileWatched(c.kube);
    const lock = new RunLock({ kube: c.kube, namespace: LEASE[0], name: LEASE[1], owner: OTHER, clock: c.clock });
    const second = roll(c, { nodes: ['w2'] }, { owner: OTHER, lock });
    await expect(second).rejects.toThrow(/w1/);
    await expect(second).rejects.not.toThrow(/another run of this action left/);
    expect(c.kube.mutatingCalls().slice(before)).toEqual([]);
    expect(c.kube.state('w1').annotations[keys.owner]).toBe(OWNER);
    expect(lock.held).toBe(false);
  });

  it('once nothing renews that Lease for its duration, the second run takes it over, adopts w1 (phase mutating) and completes it', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2' }]);
    c.kube.pull = () => ({ ok: false, reason: '401 Unauthorized' });
    await roll(c, { verifyImage: 'ghcr.io/acme/private:1' });
    expect(c.kube.state('w1').annotations[keys.owner]).toBe(OWNER);

    const lock = new RunLock({ kube: c.kube, namespace: LEASE[0], name: LEASE[1], owner: OTHER, clock: c.clock });
    const second = await roll(c, {}, { owner: OTHER, lock });
    expect(second.result).toBe('processed');
    expect(lock.tookOverFrom).toBe(OWNER);
    const w1 = second.records.find((r) => r.node === 'w1')!;
    expect(w1.steps.find((s) => s.name === 'claim')?.detail).toMatch(
      /^adopted the claim of .* \(phase mutating\), abandoned: the run Lease it held expired unrenewed/,
    );
    for (const n of ['w1', 'w2']) {
      const s = c.kube.state(n);
      expect(s.annotations[keys.owner]).toBeUndefined();
      expect(s.annotations[keys.phase]).toBeUndefined();
      expect(s.unschedulable).toBe(false);
      expect(verifiedRev(s)).toBeDefined();
    }
    expect((await c.kube.getLease(...LEASE))?.holderIdentity ?? '').toBe('');
  });
});

// The boot id read before the reboot failed until the deadline, so the reboot was
// never sent. The node runs the containerd it ran: give it back as after a failed drain (uncordoned
// unless cordoned before, no verified marker), saying its containerd still holds the old credential.
describe('a reboot that was never sent releases the drained node', () => {
  it('released, schedulable, no verified marker; the reason says the old credential is still loaded; the run fails', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2' }]);
    c.talos.rebootNotSent = 'the boot id to compare with after the reboot could not be read (read 12 times): rpc error: code = Unavailable';
    const res = await roll(c, { reboot: 'always' });
    const r = res.records.find((x) => x.node === 'w1')!;
    expect(r.outcome).toBe('failed');
    expect(r.reason).toMatch(/^the reboot was not sent, so its containerd still holds the old credential: .*not sent: the boot id/);
    expect(r.nextStep).toMatch(
      /drained but not rebooted, and released again .*without the verified marker.*running containerd still holds the old one/,
    );
    const s = c.kube.state('w1');
    expect(s.unschedulable).toBe(false);
    expect(s.annotations[keys.owner]).toBeUndefined();
    expect(s.annotations[keys.phase]).toBeUndefined();
    expect(verifiedRev(s)).toBeUndefined();
    // a failure stops the roll: w2 was not started
    expect(res.result).toBe('failed');
    expect(res.records.find((x) => x.node === 'w2')).toBeUndefined();
  });

  it('a node cordoned before the run stays cordoned', async () => {
    const c = makeCluster([{ name: 'w1', unschedulable: true }]);
    c.talos.rebootNotSent = 'unavailable';
    const res = await roll(c, { reboot: 'always' });
    expect(res.records[0].outcome).toBe('failed');
    const s = c.kube.state('w1');
    expect(s.unschedulable).toBe(true);
    expect(s.annotations[keys.owner]).toBeUndefined();
    expect(res.records[0].cordonKept).toMatch(/cordoned before this run claimed it: kept as found/);
  });
});
