// Another run's claims met by this one, on the in-memory fakes: adopting a claim whose answer was lost
// re-validates the fence (src/pipeline/claim.ts), and a run meeting the Lease kept for a fenced node names
// the node and how to release it (safety defects 10 and 11 of the acceptance testing).
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/errors.js';
import { RunLock } from '../../src/pipeline/runLock.js';
import { holderRenewsWhileWatched, keys, makeCluster, OWNER, roll, verifiedRev } from './harness.js';

const LEASE = ['kube-system', 'registry-auth-rollout'] as const;
const OTHER = 'acme/infra/runs/43/attempts/1/bbbb';

const transport = (what: string) =>
  new ToolError({ tool: 'kubectl', command: what, kind: 'transport', exitCode: 1, stderr: 'Unable to connect to the server: EOF' });

const isPhasePatch = (ops: { op: string; path: string; value?: unknown }[]) =>
  ops.some((o) => o.op === 'add' && o.path.endsWith('phase') && o.value === 'mutating');
const isClaimPatch = (ops: { op: string; path: string; value?: unknown }[]) =>
  ops.some((o) => o.op === 'add' && (o.path.endsWith('owner') || o.path === '/metadata/annotations'));

describe('adopting a claim whose response was lost re-validates the fence', () => {
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

describe('a run meeting the Lease kept for a fenced node names the node and the release command while its run is alive', () => {
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
