// A node whose owner annotation another actor replaced while this run held it: the run leaves it as
// they set it, says who holds it now and that our cordon still stands, gives a next step that works
// (no release command testing our token, which cannot apply), and keeps the run Lease only when this
// run may have changed the node's Talos config.
import { describe, expect, it } from 'vitest';
import type { JsonPatchOp } from '../../src/core/model/patch.js';
import { keys, makeCluster, OWNER, roll } from './harness.js';

const LEASE = ['kube-system', 'registry-auth-rollout'] as const;
const OTHER = 'other-tool/maintenance-42';

const isPhasePatch = (ops: JsonPatchOp[]) => ops.some((o) => o.op === 'add' && o.path.endsWith('phase') && o.value === 'mutating');
/** The JSON of a `test` of our owner token, as it would appear in a printed release command. */
const testsOurToken = `"value":"${OWNER}"`;

describe('another actor replaced the owner annotation while this run held the node', () => {
  it('right after our claim (the phase patch is refused): named as the holder, our cordon stands, the Lease is released', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2' }]);
    c.kube.beforePatch = (name, ops) => {
      if (name === 'w1' && isPhasePatch(ops)) c.kube.mutate(name, (o) => (o.metadata.annotations[keys.owner] = OTHER));
    };
    const res = await roll(c);
    expect(res.result).toBe('failed');
    const r = res.records[0];
    expect(r.outcome).toBe('failed');
    const text = `${r.reason}\n${r.nextStep}`;
    expect(text).toContain(OTHER);
    expect(r.nextStep).toMatch(/cordon/);
    expect(r.nextStep).toMatch(/nothing on Talos was changed/i);
    expect(r.nextStep).not.toMatch(/still carries this run's claim/);
    expect(r.nextStep).not.toContain(testsOurToken);
    // Left exactly as they set it: their owner, our cordon, no Talos mutation.
    const s = c.kube.state('w1');
    expect(s.annotations[keys.owner]).toBe(OTHER);
    expect(s.unschedulable).toBe(true);
    expect(c.talos.mutatingCalls()).toEqual([]);
    // Nothing of this run is on Talos: the Lease goes back, nobody is blocked by it.
    expect(c.kube.leases.get(LEASE.join('/'))?.spec.holderIdentity ?? '').toBe('');
  });

  it('during the drain (the credential patch was applied): named as the holder, and the Lease is kept for a person', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const drain = c.kube.drain.bind(c.kube);
    c.kube.drain = async (name, ms) => {
      await drain(name, ms);
      c.kube.mutate(name, (o) => (o.metadata.annotations[keys.owner] = OTHER));
    };
    const res = await roll(c, { reboot: 'always' });
    expect(res.result).toBe('failed');
    const r = res.records[0];
    expect(`${r.reason}\n${r.nextStep}`).toContain(OTHER);
    expect(r.nextStep).toMatch(/cordon/);
    expect(r.nextStep).toMatch(/credential patch was sent/);
    expect(r.nextStep).not.toContain(testsOurToken);
    expect(c.talos.mutatingCalls().some((m) => m.startsWith('reboot'))).toBe(false);
    expect(c.kube.leases.get(LEASE.join('/'))?.spec.holderIdentity).toBe(OWNER);
  });

  it('our token still on the node (someone uncordoned it) and nothing on Talos changed: the release command tests our token and works', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.kube.beforePatch = (name, ops) => {
      if (isPhasePatch(ops)) c.kube.mutate(name, (o) => (o.spec.unschedulable = false));
    };
    const res = await roll(c);
    const r = res.records[0];
    expect(r.nextStep).toContain(testsOurToken);
    expect(r.nextStep).toMatch(/still carries this run's claim/);
    expect(c.kube.leases.get(LEASE.join('/'))?.spec.holderIdentity ?? '').toBe('');
  });
});
