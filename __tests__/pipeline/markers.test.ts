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
  it('a node carrying verified-revision of this revision is clean, a verify-image set or not', async () => {
    const c = makeCluster([{ name: 'w1', annotations: { [keys.verifiedRevision]: 'rev-2' } }]);
    expect((await roll(c)).result).toBe('clean');
    expect((await roll(c, { verifyImage: 'ghcr.io/acme/private:1' })).result).toBe('clean');
    expect(c.kube.mutatingCalls()).toEqual([]);
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
