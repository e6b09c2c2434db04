// The verified marker per registry host through the pipeline: another host's proof survives
// a roll, another step's proof landing during the release is kept, the old single-key marker, and a
// changed verify-image re-proving without a reboot.
import { describe, expect, it } from 'vitest';
import type { JsonPatchOp } from '../../src/core/model/patch.js';
import { readMarkers } from '../../src/rules/marker.js';
import { keys, makeCluster, roll, verifiedRev } from './harness.js';

const AT = '2026-12-01T00:00:00.000Z';
const MIRROR = 'mirror.local:5000';
const map = (o: Record<string, { revision: string; image?: string }>) =>
  JSON.stringify(Object.fromEntries(Object.entries(o).map(([h, p]) => [h, { ...p, at: AT }])));
const isVerifiedRelease = (ops: JsonPatchOp[]) => ops.some((o) => o.op === 'add' && o.path.endsWith('~1verified'));

describe('the verified marker per host', () => {
  it("rolling ghcr.io keeps the mirror's proof on the node, and the rerun is clean", async () => {
    const c = makeCluster([{ name: 'w1', current: true, annotations: { [keys.verified]: map({ [MIRROR]: { revision: 'm1' } }) } }]);
    const res = await roll(c);
    expect(res.records[0].outcome).toBe('reboot-skipped');
    const s = c.kube.state('w1');
    expect(verifiedRev(s)).toBe('rev-2');
    expect(verifiedRev(s, MIRROR)).toBe('m1');
    const again = await roll(c);
    expect(again.result).toBe('clean');
  });

  it("another step's proof landing between the release's read and its patch is kept: the release is rebuilt over it", async () => {
    const c = makeCluster([{ name: 'w1', current: true, annotations: { [keys.verified]: map({ [MIRROR]: { revision: 'm1' } }) } }]);
    let landed = false;
    c.kube.beforePatch = (name, ops) => {
      if (landed || !isVerifiedRelease(ops)) return;
      landed = true;
      c.kube.mutate(name, (o) => {
        o.metadata.annotations[keys.verified] = map({ [MIRROR]: { revision: 'm2' }, 'quay.io': { revision: 'q1' } });
      });
    };
    const res = await roll(c);
    expect(landed).toBe(true);
    expect(res.records[0].outcome, res.records[0].reason).toBe('reboot-skipped');
    const s = c.kube.state('w1');
    expect(readMarkers(s.annotations, keys).byHost).toMatchObject({
      'ghcr.io': { revision: 'rev-2' },
      [MIRROR]: { revision: 'm2' },
      'quay.io': { revision: 'q1' },
    });
    expect(s.annotations[keys.owner]).toBeUndefined();
    expect(s.unschedulable).toBe(false);
  });

  it('a 422 after which the claim is gone stays a failure (not retried as a marker race)', async () => {
    const c = makeCluster([{ name: 'w1', current: true, annotations: { [keys.verified]: map({ [MIRROR]: { revision: 'm1' } }) } }]);
    c.kube.beforePatch = (name, ops) => {
      if (!isVerifiedRelease(ops)) return;
      c.kube.mutate(name, (o) => {
        o.metadata.annotations[keys.verified] = map({ [MIRROR]: { revision: 'm2' } });
        o.metadata.annotations[keys.owner] = 'someone else';
      });
    };
    const res = await roll(c);
    expect(res.records[0].outcome).toBe('failed');
    expect(verifiedRev(c.kube.state('w1'))).toBeUndefined();
  });
});

describe('the old single-key marker: an upgrade re-rolls nothing for one registry', () => {
  it('a node carrying verified-revision of this revision is not rolled; it is proven (it does not say how), with no claim and no Talos mutation', async () => {
    const c = makeCluster([{ name: 'w1', current: true, annotations: { [keys.verifiedRevision]: 'rev-2' } }]);
    const res = await roll(c);
    expect(res.result).toBe('clean');
    expect(res.records).toEqual([]);
    expect(res.proofChecks).toMatchObject([{ node: 'w1', by: 'evidence', proven: true }]);
    expect(c.talos.mutatingCalls()).toEqual([]);
    // the one write: the map with how it was proven, the old key removed
    expect(c.kube.mutatingCalls()).toEqual(['patchNode w1']);
    const s = c.kube.state('w1');
    expect(readMarkers(s.annotations, keys).byHost['ghcr.io']).toMatchObject({ revision: 'rev-2', proof: 'evidence' });
    expect(s.annotations[keys.verifiedRevision]).toBeUndefined();
    expect(s.unschedulable).toBe(false);
    // and the next run has nothing to roll or to prove
    const again = await roll(c, {});
    expect(again.proofChecks).toBeUndefined();
  });

  it('with verify-image, a pull proves it and records the image: no claim, no Talos call', async () => {
    const c = makeCluster([{ name: 'w1', annotations: { [keys.verifiedRevision]: 'rev-2' } }]);
    const res = await roll(c, { verifyImage: 'ghcr.io/acme/private:1' });
    expect(res.result).toBe('clean');
    expect(res.proofChecks).toMatchObject([{ node: 'w1', by: 'verify-image', proven: true }]);
    expect(c.kube.mutatingCalls()).toEqual(['createPod', 'deletePod', 'patchNode w1']);
    expect(c.talos.mutatingCalls()).toEqual([]);
    expect(readMarkers(c.kube.state('w1').annotations, keys).byHost['ghcr.io']).toMatchObject({
      revision: 'rev-2',
      proof: 'verify-image',
      image: 'ghcr.io/acme/private:1',
    });
  });

  it("another revision's is rolled; the release writes the map and removes the old key", async () => {
    const c = makeCluster([{ name: 'w1', current: true, annotations: { [keys.verifiedRevision]: 'rev-1' } }]);
    const res = await roll(c);
    expect(res.records[0].outcome).toBe('reboot-skipped');
    const s = c.kube.state('w1');
    expect(verifiedRev(s)).toBe('rev-2');
    expect(s.annotations[keys.verifiedRevision]).toBeUndefined();
  });
});

describe('an undecided proof: to prove, not to roll', () => {
  const undecided = { [keys.verified]: JSON.stringify({ 'ghcr.io': { revision: 'rev-2', at: AT, proof: 'undecided' } }) };

  it('the evidence contradicts it and no verify-image: clean, nothing written, and the check says why and that a roll is needed', async () => {
    // not current: its containerd runs the old credential, whatever the marker says
    const c = makeCluster([{ name: 'w1', annotations: undecided }]);
    const res = await roll(c);
    expect(res.result).toBe('clean');
    expect(res.proofChecks).toHaveLength(1);
    const check = res.proofChecks![0];
    expect(check).toMatchObject({ node: 'w1', by: 'evidence', proven: false });
    expect(check.detail).toMatch(/^the evidence contradicts that containerd loaded the desired credential/);
    expect(check.nextStep).toMatch(
      /remove the marker \(kubectl annotate node w1 registry-auth-rollout\/verified-\) and rerun, so the run rolls it/,
    );
    expect(c.kube.mutatingCalls()).toEqual([]);
    expect(c.talos.mutatingCalls()).toEqual([]);
    expect(c.kube.state('w1').annotations).toEqual(undecided);
  });

  it('a pull that fails proves nothing and writes nothing: the node stays to prove', async () => {
    const c = makeCluster([{ name: 'w1', current: true, annotations: undecided }]);
    c.kube.pull = () => ({ ok: false, reason: 'failed to authorize: 401 Unauthorized' });
    const res = await roll(c, { verifyImage: 'ghcr.io/acme/private:1' });
    expect(res.result).toBe('clean');
    expect(res.proofChecks).toMatchObject([{ node: 'w1', by: 'verify-image', proven: false }]);
    expect(res.proofChecks![0].detail).toMatch(/the pull of ghcr\.io\/acme\/private:1 through its containerd failed/);
    expect(c.kube.state('w1').annotations).toEqual(undecided);
  });

  it('a marker written by another run since the listing: the proof is not recorded over it', async () => {
    const c = makeCluster([{ name: 'w1', current: true, annotations: undecided }]);
    c.kube.beforePatch = (name) => {
      c.kube.mutate(name, (o) => {
        o.metadata.annotations[keys.verified] = JSON.stringify({ 'ghcr.io': { revision: 'rev-3', at: AT, proof: 'evidence' } });
      });
    };
    const res = await roll(c);
    expect(res.proofChecks).toMatchObject([{ node: 'w1', proven: false }]);
    expect(res.proofChecks![0].detail).toMatch(/not recorded: the node or its marker changed since the listing/);
    expect(readMarkers(c.kube.state('w1').annotations, keys).byHost['ghcr.io'].revision).toBe('rev-3');
  });
});

describe('a changed verify-image re-proves', () => {
  it('a node proven with another image is pulled again, not rebooted, and records the new image', async () => {
    const c = makeCluster([
      {
        name: 'w1',
        current: true,
        annotations: { [keys.verified]: map({ 'ghcr.io': { revision: 'rev-2', image: 'ghcr.io/acme/private:1' } }) },
      },
    ]);
    expect((await roll(c, { verifyImage: 'ghcr.io/acme/private:1' })).result).toBe('clean');
    const res = await roll(c, { verifyImage: 'ghcr.io/acme/private:2' });
    expect(res.result).toBe('processed');
    const r = res.records[0];
    expect(r.outcome, r.reason).toBe('reboot-skipped');
    expect(r.steps.some((s) => s.ok && s.name.includes('ghcr.io/acme/private:2'))).toBe(true);
    expect(c.talos.mutatingCalls().filter((m) => m.startsWith('reboot'))).toEqual([]);
    expect(readMarkers(c.kube.state('w1').annotations, keys).byHost['ghcr.io']).toMatchObject({
      revision: 'rev-2',
      image: 'ghcr.io/acme/private:2',
    });
    expect((await roll(c, { verifyImage: 'ghcr.io/acme/private:2' })).result).toBe('clean');
  });
});
