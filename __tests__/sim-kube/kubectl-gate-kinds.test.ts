// The health gates' two reads through the real kubectl against KubeSim: `kubectl api-resources` (the
// storage kinds every cluster serves, a CRD's kind once installed, in its own version) and one
// `kubectl get a,b,c -A -o json` over built-in and CRD-backed kinds; and the twin's Longhorn controller
// degrading a volume whose replica's node went down, healthy again after the rebuild once it is Ready.
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Kubectl } from '../../src/adapters/kube/kubectl.js';
import { Runner } from '../../src/adapters/exec.js';
import { KubeSim } from '../../sim/kube/index.js';
import { R, crdKind } from '../../sim/kube/resources.js';
import { findKubectl } from './helpers.js';

let sim: KubeSim;
let kube: Kubectl;
const clusters = crdKind({
  group: 'example.com',
  version: 'v1alpha1',
  plural: 'dbclusters',
  singular: 'dbcluster',
  kind: 'DbCluster',
  namespaced: true,
});

beforeAll(() => {
  findKubectl();
});
beforeEach(async () => {
  sim = await KubeSim.start({ heartbeatMs: 60_000, bootDelayMs: 20 });
  sim.addNode({ name: 'w-1', ip: '10.0.0.11', role: 'worker' });
  kube = new Kubectl({ runner: new Runner(), kubeconfig: sim.kubeconfigPath });
});
afterEach(async () => {
  await sim.stop();
});

describe('the health gates reads', () => {
  it('discovery: the storage kinds always, Longhorn and a custom kind once installed, each in its version', async () => {
    sim.installLonghorn({ rebuildMs: 50 });
    sim.installCrd(clusters);
    const served = await kube.servedKinds();
    const pick = (kind: string) => served.find((k) => k.kind === kind);
    expect(pick('PersistentVolume')).toEqual({
      resource: 'persistentvolumes',
      group: '',
      version: 'v1',
      kind: 'PersistentVolume',
      namespaced: false,
    });
    expect(pick('PersistentVolumeClaim')).toMatchObject({ group: '', namespaced: true });
    expect(pick('VolumeAttachment')).toEqual({
      resource: 'volumeattachments',
      group: 'storage.k8s.io',
      version: 'v1',
      kind: 'VolumeAttachment',
      namespaced: false,
    });
    expect(served.find((k) => k.group === 'longhorn.io')).toEqual({
      resource: 'volumes',
      group: 'longhorn.io',
      version: 'v1beta2',
      kind: 'Volume',
      namespaced: true,
    });
    expect(pick('DbCluster')).toEqual({
      resource: 'dbclusters',
      group: 'example.com',
      version: 'v1alpha1',
      kind: 'DbCluster',
      namespaced: true,
    });
    expect(served.some((k) => k.kind === 'Node')).toBe(true);
  });

  it('discovery with one API group failing (an aggregated API down): the other kinds still come, that group is not served', async () => {
    sim.installLonghorn({ rebuildMs: 50 });
    sim.installCrd(clusters);
    sim.failNext(
      { method: 'GET', path: /^\/apis\/example\.com\/v1alpha1$/, count: 20 },
      { status: 503, reason: 'ServiceUnavailable', message: 'the server is currently unable to handle the request' },
    );
    const served = await kube.servedKinds();
    expect(served.some((k) => k.kind === 'DbCluster')).toBe(false);
    expect(served.find((k) => k.group === 'longhorn.io')).toMatchObject({ kind: 'Volume', version: 'v1beta2' });
    expect(served.some((k) => k.kind === 'PersistentVolume')).toBe(true);
  });

  it('one listing over built-in and CRD kinds, every namespace; Longhorn degraded while the node is down, healthy after the rebuild', async () => {
    const lh = sim.installLonghorn({ rebuildMs: 100 });
    sim.installCrd(clusters);
    sim.createObject(R.persistentvolumes, '', { metadata: { name: 'pv-1' }, spec: {}, status: { phase: 'Bound' } });
    sim.createObject(R.persistentvolumeclaims, 'apps', {
      metadata: { name: 'data', labels: { app: 'pg' } },
      spec: {},
      status: { phase: 'Lost' },
    });
    sim.createObject(clusters, 'db', { metadata: { name: 'pg' }, spec: { instances: 2 }, status: { ready: false } });
    sim.longhorn!.add('pvc-1', ['w-1', 'w-2']);
    const kinds = (await kube.servedKinds()).filter((k) =>
      ['PersistentVolume', 'PersistentVolumeClaim', 'VolumeAttachment', 'Volume', 'DbCluster'].includes(k.kind),
    );
    const objects = await kube.listGateObjects(kinds);
    const brief = objects.map((o) => `${o.group}/${o.kind} ${o.namespace ?? ''}/${o.name}`).sort();
    expect(brief).toEqual([
      '/PersistentVolume /pv-1',
      '/PersistentVolumeClaim apps/data',
      'example.com/DbCluster db/pg',
      'longhorn.io/Volume longhorn-system/pvc-1',
    ]);
    expect(objects.find((o) => o.kind === 'PersistentVolumeClaim')).toMatchObject({
      labels: { app: 'pg' },
      object: { status: { phase: 'Lost' } },
    });
    const robustness = async () => (await kube.listGateObjects(kinds)).find((o) => o.kind === 'Volume')!.object.status;
    expect(await robustness()).toMatchObject({ robustness: 'healthy' });
    sim.nodeDown('w-1');
    expect(await robustness()).toMatchObject({ robustness: 'degraded' });
    sim.nodeUp('w-1', 'boot-2');
    // the rebuild ends on the twin's timers (boot, then rebuildMs): wait for that, not for a fixed 400 ms
    for (const end = Date.now() + 10_000; lh.transitions.length < 3 && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
    expect(await robustness()).toMatchObject({ robustness: 'healthy' });
    expect(lh.transitions.map((t) => t.robustness)).toEqual(['healthy', 'degraded', 'healthy']);
  });
});
