// Several registries in one run: one claim and at most one drain and one reboot per node, the evidence
// and the proof judging the hosts the node is stale for, one marker entry per host.
import { describe, expect, it } from 'vitest';
import type { AuthFields, DesiredCredential } from '../../src/core/model/credential.js';
import { nodeEvents } from '../../src/report/events.js';
import { toDecisionOutput } from '../../src/report/outputs.js';
import { DESIRED, keys, makeCluster, NEW, OLD, roll, verifiedRev } from './harness.js';

const MIRROR = 'mirror.local:5000';
const MIRROR_NEW: AuthFields = { username: 'mirror-bot', password: 'mirror-new', auth: '', identitytoken: '' };
const MIRROR_OLD: AuthFields = { username: 'mirror-bot', password: 'mirror-old', auth: '', identitytoken: '' };
const BOTH: DesiredCredential[] = [DESIRED, { host: MIRROR, tomlHost: MIRROR, fields: MIRROR_NEW }];
const AT = '2026-12-01T00:00:00.000Z';

/** w1 verified for ghcr.io only (both credentials already in its config), w2 for neither (old mirror), w3 for both. */
function cluster() {
  const c = makeCluster([
    { name: 'w1', current: true, annotations: { [keys.verified]: JSON.stringify({ 'ghcr.io': { revision: 'rev-2', at: AT } }) } },
    { name: 'w2', current: true },
    {
      name: 'w3',
      current: true,
      annotations: {
        [keys.verified]: JSON.stringify({ 'ghcr.io': { revision: 'rev-2', at: AT }, [MIRROR]: { revision: 'rev-2', at: AT } }),
      },
    },
  ]);
  const mirrorOf: Record<string, AuthFields> = { w1: MIRROR_NEW, w2: MIRROR_OLD, w3: MIRROR_NEW };
  for (const n of c.talos.nodes.values()) for (const f of Object.values(n.files)) f.auth[MIRROR] = { ...mirrorOf[n.name] };
  c.talos.patchRenders = { 'ghcr.io': NEW, [MIRROR]: MIRROR_NEW };
  return c;
}

describe('several registries in one run', () => {
  it('rolls each stale node once for the hosts it is stale for; the rerun is clean', async () => {
    const c = cluster();
    const res = await roll(c, {}, { desired: BOTH });
    expect(res.result).toBe('processed');
    expect(res.upToDate).toEqual(['w3']);
    const by = Object.fromEntries(res.records.map((r) => [r.node, r]));
    expect(Object.keys(by)).toEqual(['w1', 'w2']);

    // w1: stale for the mirror only; its evidence judges the mirror (ghcr.io is proven by its marker)
    expect(by.w1.hosts).toEqual([{ host: MIRROR, why: `no verified marker for ${MIRROR}` }]);
    expect(by.w1.outcome, by.w1.reason).toBe('reboot-skipped');
    expect(by.w1.reason).toMatch(new RegExp(`desired credential for ${MIRROR}$`));

    // w2: stale for both, its config holds the mirror's old credential: one drain, one reboot for both
    expect(by.w2.hosts?.map((h) => h.host)).toEqual(['ghcr.io', MIRROR]);
    expect(by.w2.outcome, by.w2.reason).toBe('rebooted');
    expect(by.w2.evidence?.reason).toBe(`/etc/cri/conf.d/cri.toml holds an old credential for ${MIRROR}`);
    expect(by.w2.evidence?.values.files[0].byHost).toEqual({ 'ghcr.io': 'desired', [MIRROR]: 'old' });
    expect(by.w2.proof?.values.files[0].byHost).toEqual({ 'ghcr.io': 'desired', [MIRROR]: 'desired' });

    expect(c.kube.calls.filter((x) => x.method === 'drain').map((x) => x.name)).toEqual(['w2']);
    expect(c.talos.mutatingCalls().filter((m) => m.startsWith('reboot'))).toEqual(['reboot 10.0.0.11']);
    for (const n of ['w1', 'w2', 'w3']) {
      const s = c.kube.state(n);
      expect([verifiedRev(s), verifiedRev(s, MIRROR)], n).toEqual(['rev-2', 'rev-2']);
    }
    // w1's ghcr.io entry is the one it had: its roll was for the mirror only
    expect(JSON.parse(c.kube.state('w1').annotations[keys.verified])['ghcr.io'].at).toBe(AT);

    // each fact names its host: the decisions output and the Events
    expect(toDecisionOutput(by.w1).hosts).toEqual([{ host: MIRROR, why: `no verified marker for ${MIRROR}` }]);
    const events = nodeEvents(by.w2).map((e) => e.message);
    expect(events[0]).toMatch(new RegExp(`rollout of ghcr\\.io, ${MIRROR} `));
    expect(events.at(-1)).toMatch(new RegExp(`verified marker written for ghcr\\.io, ${MIRROR}$`));

    expect((await roll(c, {}, { desired: BOTH })).result).toBe('clean');
  });

  it('a node stale for two hosts skips its reboot only when the evidence holds for both', async () => {
    const c = cluster();
    // w1 verified for nothing now, its config carrying both new credentials: skipped for both at once
    c.kube.mutate('w1', (o) => delete o.metadata.annotations[keys.verified]);
    const res = await roll(c, { nodes: ['w1'] }, { desired: BOTH });
    expect(res.records[0].outcome, res.records[0].reason).toBe('reboot-skipped');
    expect(res.records[0].reason).toMatch(new RegExp(`desired credential for ghcr\\.io, ${MIRROR}$`));
    // w2 holds OLD for ghcr.io too: the same reading refuses the skip
    for (const f of Object.values([...c.talos.nodes.values()].find((n) => n.name === 'w2')!.files)) f.auth['ghcr.io'] = { ...OLD };
    const w2 = (await roll(c, { nodes: ['w2'] }, { desired: BOTH })).records[0];
    expect(w2.outcome).toBe('rebooted');
    expect(w2.evidence?.values.files[0].byHost).toEqual({ 'ghcr.io': 'old', [MIRROR]: 'old' });
  });

  it('plan: each node planned for the hosts it is stale for, its evidence judging those', async () => {
    const c = cluster();
    const res = await roll(c, { mode: 'plan' }, { desired: BOTH });
    expect(res.result).toBe('planned');
    const by = Object.fromEntries(res.records.map((r) => [r.node, r]));
    expect(by.w1).toMatchObject({ outcome: 'planned-skip', hosts: [{ host: MIRROR }] });
    expect(by.w2).toMatchObject({ outcome: 'planned-reboot', hosts: [{ host: 'ghcr.io' }, { host: MIRROR }] });
    expect(by.w2.evidence?.reason).toBe(`/etc/cri/conf.d/cri.toml holds an old credential for ${MIRROR}`);
    expect(c.kube.mutatingCalls()).toEqual([]);
  });

  it('the old single-key marker counts for no host of a run rolling several', async () => {
    const c = makeCluster([{ name: 'w1', current: true, annotations: { [keys.verifiedRevision]: 'rev-2' } }]);
    for (const n of c.talos.nodes.values()) for (const f of Object.values(n.files)) f.auth[MIRROR] = { ...MIRROR_NEW };
    c.talos.patchRenders = { 'ghcr.io': NEW, [MIRROR]: MIRROR_NEW };
    const res = await roll(c, {}, { desired: BOTH });
    expect(res.records[0].hosts?.map((h) => h.host)).toEqual(['ghcr.io', MIRROR]);
    expect(res.records[0].outcome).toBe('reboot-skipped');
    expect(c.kube.state('w1').annotations[keys.verifiedRevision]).toBeUndefined();
  });
});
