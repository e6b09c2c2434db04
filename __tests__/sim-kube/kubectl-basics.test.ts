// The real kubectl against KubeSim: reads, patches, resourceVersion rules, cordon, wait, readyz, Leases, faults.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { KubeSim } from '../../sim/kube/index.js';
import { findKubectl, kubectl, kubectlJson, sleep, until } from './helpers.js';
import { scratchDir } from '../scratch.js';

const files = scratchDir('sim-kube-test-');
function file(name: string, content: unknown): string {
  const p = join(files, name);
  writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
  return p;
}

let sim: KubeSim;

beforeAll(() => {
  findKubectl();
});

beforeEach(async () => {
  sim = await KubeSim.start({ heartbeatMs: 60_000, taintDelayMs: 50 });
  sim.addNode({ name: 'cp-1', ip: '10.0.0.1', role: 'control-plane' });
  sim.addNode({ name: 'w-1', ip: '10.0.0.11', role: 'worker', labels: { pool: 'a' } });
  sim.addNode({ name: 'w-2', ip: '10.0.0.12', role: 'worker', labels: { pool: 'b' }, annotations: {} });
});

afterEach(async () => {
  await sim.stop();
});

describe('reads', () => {
  it('gets a node and lists with label selectors', async () => {
    const n = await kubectlJson(sim, ['get', 'node', 'w-1']);
    expect(n.kind).toBe('Node');
    expect(n.metadata.uid).toBe(sim.node('w-1').metadata.uid);

    const names = async (sel: string) => (await kubectlJson(sim, ['get', 'nodes', '-l', sel])).items.map((i: any) => i.metadata.name);
    expect(await names('pool=a')).toEqual(['w-1']);
    expect(await names('pool!=a')).toEqual(['cp-1', 'w-2']);
    expect(await names('pool in (a,b)')).toEqual(['w-1', 'w-2']);
    expect(await names('!pool')).toEqual(['cp-1']);
    expect(await names('node-role.kubernetes.io/control-plane')).toEqual(['cp-1']);
    expect(await names('pool=zzz')).toEqual([]);

    const missing = await kubectl(sim, ['get', 'node', 'nope', '-o', 'json']);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe('Error from server (NotFound): nodes "nope" not found');
  });

  it('answers /readyz with a bare ok and no discovery', async () => {
    const r = await kubectl(sim, ['get', '--raw', '/readyz']);
    expect(r).toMatchObject({ code: 0, stdout: 'ok' });
    expect(sim.requests.map((q) => q.path)).toEqual(['/version', '/readyz']);
  });

  it('pages lists with limit/continue', async () => {
    const r = await kubectl(sim, ['get', 'nodes', '--chunk-size=1', '-o', 'name']);
    expect(r.stdout.trim().split('\n')).toEqual(['node/cp-1', 'node/w-1', 'node/w-2']);
    expect(sim.requests.filter((q) => q.path === '/api/v1/nodes').length).toBe(3);
  });
});

describe('JSON patch', () => {
  it('applies a claim-like patch and reports no-op patches as unchanged', async () => {
    const uid = sim.node('w-1').metadata.uid;
    const claim = file('claim.json', [
      { op: 'test', path: '/metadata/uid', value: uid },
      { op: 'test', path: '/metadata/deletionTimestamp', value: null },
      { op: 'test', path: '/spec/unschedulable', value: null },
      { op: 'test', path: '/metadata/annotations/rollout~1owner', value: null },
      { op: 'add', path: '/metadata/annotations/rollout~1owner', value: 'run-1' },
      { op: 'add', path: '/spec/unschedulable', value: true },
    ]);
    const r = await kubectl(sim, ['patch', 'node', 'w-1', '--type=json', '--patch-file', claim]);
    expect(r).toMatchObject({ code: 0, stdout: 'node/w-1 patched\n' });
    expect(sim.node('w-1').metadata.annotations['rollout/owner']).toBe('run-1');
    expect(sim.node('w-1').spec.unschedulable).toBe(true);

    // The lifecycle controller's unschedulable taint is its own write; wait for it before the no-op check.
    await until(() => sim.node('w-1').spec.taints);
    const again = file('noop.json', [{ op: 'replace', path: '/metadata/annotations/rollout~1owner', value: 'run-1' }]);
    const rv = sim.node('w-1').metadata.resourceVersion;
    const n = await kubectl(sim, ['patch', 'node', 'w-1', '--type=json', '--patch-file', again]);
    expect(n).toMatchObject({ code: 0, stdout: 'node/w-1 patched (no change)\n' });
    expect(sim.node('w-1').metadata.resourceVersion).toBe(rv);
    const patch = sim.requests.find((q) => q.method === 'PATCH');
    expect(patch).toMatchObject({ path: '/api/v1/nodes/w-1', query: 'fieldManager=kubectl-patch', status: 200, command: 'kubectl patch' });
  });

  it('a failed test op answers 422 and leaves the object and its RV unchanged', async () => {
    const before = sim.node('w-1');
    const p = file('bad.json', [
      { op: 'add', path: '/metadata/labels/x', value: 'y' },
      { op: 'test', path: '/spec/unschedulable', value: false },
    ]);
    const r = await kubectl(sim, ['patch', 'node', 'w-1', '--type=json', '--patch-file', p]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('The request is invalid: the server rejected our request due to an error in our request');
    expect(sim.node('w-1')).toEqual(before);
    expect(sim.requests.find((q) => q.method === 'PATCH')?.status).toBe(422);
  });

  it('a missing annotations map fails add of a key but passes a null test of it only when the parent exists', async () => {
    // w-2 has no annotations at all.
    expect(sim.node('w-2').metadata.annotations).toBeUndefined();
    const addKey = file('addkey.json', [{ op: 'add', path: '/metadata/annotations/a', value: 'b' }]);
    expect((await kubectl(sim, ['patch', 'node', 'w-2', '--type=json', '--patch-file', addKey])).code).toBe(1);
    const testKey = file('testkey.json', [{ op: 'test', path: '/metadata/annotations/a', value: null }]);
    expect((await kubectl(sim, ['patch', 'node', 'w-2', '--type=json', '--patch-file', testKey])).code).toBe(1);
    const testMap = file('testmap.json', [
      { op: 'test', path: '/metadata/annotations', value: null },
      { op: 'add', path: '/metadata/annotations', value: { a: 'b' } },
    ]);
    expect((await kubectl(sim, ['patch', 'node', 'w-2', '--type=json', '--patch-file', testMap])).code).toBe(0);
    expect(sim.node('w-2').metadata.annotations).toEqual({ a: 'b' });
  });

  it('a status heartbeat bumps the RV, yet a claim without an RV test still applies; an RV test fails with 422', async () => {
    const rv0 = sim.node('w-1').metadata.resourceVersion;
    const claim = file('claim2.json', [
      { op: 'test', path: '/metadata/uid', value: sim.node('w-1').metadata.uid },
      { op: 'add', path: '/spec/unschedulable', value: true },
    ]);
    const withRv = file('rv.json', [
      { op: 'test', path: '/metadata/resourceVersion', value: rv0 },
      { op: 'add', path: '/metadata/labels/claimed', value: 'yes' },
    ]);
    // A kubelet status heartbeat lands between kubectl's GET and its PATCH, every time.
    let beats = 0;
    sim.beforeWrite({ method: 'PATCH', path: /^\/api\/v1\/nodes\/w-1$/ }, () => {
      beats++;
      const before = sim.node('w-1');
      sim.heartbeat('w-1');
      const after = sim.node('w-1');
      expect(after.metadata.resourceVersion).not.toBe(before.metadata.resourceVersion);
      expect(after.status.conditions[3].lastHeartbeatTime).not.toBe(before.status.conditions[3].lastHeartbeatTime);
      expect(after.spec).toEqual(before.spec);
    });
    const rvRes = await kubectl(sim, ['patch', 'node', 'w-1', '--type=json', '--patch-file', withRv]);
    expect(rvRes.code).toBe(1);
    expect(rvRes.stderr).toContain('The request is invalid');
    expect(sim.node('w-1').metadata.labels.claimed).toBeUndefined();

    const ok = await kubectl(sim, ['patch', 'node', 'w-1', '--type=json', '--patch-file', claim]);
    expect(ok).toMatchObject({ code: 0, stdout: 'node/w-1 patched\n' });
    expect(beats).toBe(2);
    expect(Number(sim.node('w-1').metadata.resourceVersion)).toBeGreaterThan(Number(rv0) + 2);
  });

  it('status is ignored on the main resource; omitempty normalization holds', async () => {
    const p = file('st.json', [
      { op: 'replace', path: '/status/nodeInfo/bootID', value: 'hacked' },
      { op: 'add', path: '/spec/unschedulable', value: false },
      { op: 'add', path: '/spec/taints', value: [] },
    ]);
    const r = await kubectl(sim, ['patch', 'node', 'w-1', '--type=json', '--patch-file', p]);
    expect(r).toMatchObject({ code: 0, stdout: 'node/w-1 patched (no change)\n' });
    const n = sim.node('w-1');
    expect(n.status.nodeInfo.bootID).not.toBe('hacked');
    expect('unschedulable' in n.spec).toBe(false);
    expect('taints' in n.spec).toBe(false);
  });

  it('merge patch and a stale resourceVersion (409)', async () => {
    const r = await kubectl(sim, ['patch', 'node', 'w-1', '--type=merge', '-p', '{"metadata":{"labels":{"pool":null,"x":"1"}}}']);
    expect(r.code).toBe(0);
    expect(sim.node('w-1').metadata.labels).toMatchObject({ x: '1' });
    expect(sim.node('w-1').metadata.labels.pool).toBeUndefined();
    const c = await kubectl(sim, ['patch', 'node', 'w-1', '--type=merge', '-p', '{"metadata":{"resourceVersion":"1"}}']);
    expect(c.code).toBe(1);
    expect(c.stderr.trim()).toBe(
      'Error from server (Conflict): Operation cannot be fulfilled on nodes "w-1": the object has been modified; please apply your changes to the latest version and try again',
    );
  });
});

describe('cordon', () => {
  it('cordon/uncordon; the unschedulable taint follows as a separate, later write', async () => {
    const rv0 = Number(sim.resourceVersion);
    const r = await kubectl(sim, ['cordon', 'w-1']);
    expect(r).toMatchObject({ code: 0, stdout: 'node/w-1 cordoned\n' });
    const patch = sim.mutatingRequests()[0]!;
    expect(patch).toMatchObject({ method: 'PATCH', path: '/api/v1/nodes/w-1', query: '', command: 'kubectl cordon' });
    const t = await until(() => (sim.node('w-1').spec.taints ?? []).find((x: any) => x.key === 'node.kubernetes.io/unschedulable'));
    expect(t).toMatchObject({ effect: 'NoSchedule' });
    expect(t.timeAdded).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Number(sim.node('w-1').metadata.resourceVersion)).toBe(rv0 + 2);

    expect((await kubectl(sim, ['cordon', 'w-1'])).stdout).toBe('node/w-1 already cordoned\n');
    expect((await kubectl(sim, ['uncordon', 'w-1'])).stdout).toBe('node/w-1 uncordoned\n');
    expect(sim.node('w-1').spec.unschedulable).toBeUndefined();
    await until(() => !sim.node('w-1').spec.taints);
    const n = await kubectlJson(sim, ['get', 'node', 'w-1']);
    expect(n.spec).toEqual({ podCIDR: '10.244.2.0/24', podCIDRs: ['10.244.2.0/24'] });
  });
});

describe('wait and reboot', () => {
  it('kubectl wait --for=condition=Ready succeeds once the node comes back', async () => {
    const boot0 = sim.node('w-1').status.nodeInfo.bootID;
    sim.nodeDown('w-1');
    await until(() => sim.node('w-1').status.conditions.find((c: any) => c.type === 'Ready').status === 'Unknown');
    await until(() => (sim.node('w-1').spec.taints ?? []).some((t: any) => t.key === 'node.kubernetes.io/unreachable'));
    const seen = sim.requests.length;
    const waiting = kubectl(sim, ['wait', '--for=condition=Ready', 'node/w-1', '--timeout=60s']);
    // the node comes back once kubectl is watching it (it found it not Ready), however long kubectl took to start
    const watch = await until(() => sim.requests.slice(seen).find((q) => q.query.includes('watch=true')), 30_000);
    expect(watch.query).toContain('fieldSelector=metadata.name%3Dw-1');
    const writes = sim.nodeWrites.length;
    sim.nodeUp('w-1', 'boot-2');
    const r = await waiting;
    expect(r).toMatchObject({ code: 0, stdout: 'node/w-1 condition met\n' });
    const n = sim.node('w-1');
    expect(n.status.nodeInfo.bootID).toBe('boot-2');
    expect(boot0).not.toBe('boot-2');
    await until(() => !sim.node('w-1').spec.taints);
    // from the twin's own node writes: Cilium's agent-not-ready taint came with the boot and went
    const cilium = sim.nodeWrites
      .slice(writes)
      .filter((w) => w.node === 'w-1' && w.taints.includes('node.cilium.io/agent-not-ready:NoSchedule'));
    expect(cilium.length).toBeGreaterThan(0);
  });

  it('kubectl wait times out on a node that stays down', async () => {
    sim.nodeDown('w-2');
    await until(() => sim.node('w-2').status.conditions.find((c: any) => c.type === 'Ready').status === 'Unknown');
    const r = await kubectl(sim, ['wait', '--for=condition=Ready', 'node/w-2', '--timeout=1s']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('error: timed out waiting for the condition on nodes/w-2');
  });
});

describe('the node lifecycle controller and the node conditions', () => {
  const keysOf = (name: string) =>
    ((sim.node(name).spec.taints ?? []) as Array<{ key: string; effect: string }>).map((t) => `${t.key}:${t.effect}`).sort();
  const ready = (name: string) => sim.node(name).status.conditions.find((c: any) => c.type === 'Ready');

  it('a kubelet cut off from the apiserver: Unknown and unreachable after the grace period, all gone once it reconnects, same boot', async () => {
    sim.addPod({ namespace: 'default', name: 'web-1', nodeName: 'w-1', owner: { kind: 'ReplicaSet', name: 'web-5f' } });
    const boot = sim.node('w-1').status.nodeInfo.bootID;
    sim.kubeletDisconnect('w-1');
    await until(() => ready('w-1').status === 'Unknown');
    expect(ready('w-1')).toMatchObject({ reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' });
    await until(() => keysOf('w-1').length === 2);
    expect(keysOf('w-1')).toEqual(['node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/unreachable:NoSchedule']);
    // the controller marks its pods not Ready
    const podReady = () =>
      sim
        .pods()
        .find((p: any) => p.metadata.name === 'web-1')
        .status.conditions.find((c: any) => c.type === 'Ready').status;
    await until(() => podReady() === 'False');
    // kubectl shows what a person would see
    const n = await kubectlJson(sim, ['get', 'node', 'w-1']);
    expect(n.spec.taints.map((t: any) => t.key)).toEqual(['node.kubernetes.io/unreachable', 'node.kubernetes.io/unreachable']);

    sim.kubeletReconnect('w-1');
    expect(ready('w-1')).toMatchObject({ status: 'True', reason: 'KubeletReady' });
    await until(() => keysOf('w-1').length === 0);
    await until(() => podReady() === 'True');
    expect(sim.node('w-1').status.nodeInfo.bootID).toBe(boot);
  });

  it('a blip shorter than the grace period leaves no trace', async () => {
    sim.kubeletDisconnect('w-1');
    sim.kubeletReconnect('w-1');
    await sleep(200);
    expect(ready('w-1').status).toBe('True');
    expect(keysOf('w-1')).toEqual([]);
  });

  it('memory, disk and PID pressure and an unavailable network become their NoSchedule taints and go when the condition clears', async () => {
    sim.setNodeCondition('w-1', 'MemoryPressure', 'True');
    sim.setNodeCondition('w-1', 'DiskPressure', 'True');
    sim.setNodeCondition('w-1', 'PIDPressure', 'True');
    sim.setNodeCondition('w-1', 'NetworkUnavailable', 'True');
    await until(() => keysOf('w-1').length === 4);
    expect(keysOf('w-1')).toEqual([
      'node.kubernetes.io/disk-pressure:NoSchedule',
      'node.kubernetes.io/memory-pressure:NoSchedule',
      'node.kubernetes.io/network-unavailable:NoSchedule',
      'node.kubernetes.io/pid-pressure:NoSchedule',
    ]);
    for (const t of ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable'] as const)
      sim.setNodeCondition('w-1', t, 'False');
    await until(() => keysOf('w-1').length === 0);
  });
});

describe('leases', () => {
  const lease = (name: string, duration = 30) => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace: 'kube-system' },
    spec: { holderIdentity: 'run-1', leaseDurationSeconds: duration, renewTime: '2024-01-01T00:00:00.000000Z' },
  });

  it('create (with and without client validation), get, patch, delete', async () => {
    const f = file('lease.json', lease('lock'));
    const c = await kubectl(sim, ['create', '-f', f]);
    expect(c).toMatchObject({ code: 0, stdout: 'lease.coordination.k8s.io/lock created\n' });
    expect(sim.requests.some((q) => q.path === '/openapi/v3')).toBe(true);
    expect(sim.requests.find((q) => q.method === 'POST')?.query).toContain('fieldValidation=Strict');

    const dup = await kubectl(sim, ['create', '-f', f]);
    expect(dup.code).toBe(1);
    expect(dup.stderr.trim()).toBe(
      `Error from server (AlreadyExists): error when creating "${f}": leases.coordination.k8s.io "lock" already exists`,
    );

    const f2 = file('lease2.json', lease('lock2'));
    const c2 = await kubectl(sim, ['create', '--validate=false', '-f', f2]);
    expect(c2.code).toBe(0);
    expect(sim.requests.filter((q) => q.method === 'POST').pop()?.query).toContain('fieldValidation=Ignore');

    const got = await kubectlJson(sim, ['get', 'lease', '-n', 'kube-system', 'lock']);
    expect(got.spec).toEqual({ holderIdentity: 'run-1', leaseDurationSeconds: 30, renewTime: '2024-01-01T00:00:00.000000Z' });

    const p = file('lp.json', [
      { op: 'test', path: '/spec/holderIdentity', value: 'run-1' },
      { op: 'replace', path: '/spec/holderIdentity', value: 'run-2' },
    ]);
    expect(await kubectl(sim, ['patch', 'lease', '-n', 'kube-system', 'lock', '--type=json', '--patch-file', p])).toMatchObject({
      code: 0,
      stdout: 'lease.coordination.k8s.io/lock patched\n',
    });
    expect(sim.lease('kube-system', 'lock').spec.holderIdentity).toBe('run-2');
    const stale = await kubectl(sim, ['patch', 'lease', '-n', 'kube-system', 'lock', '--type=json', '--patch-file', p]);
    expect(stale.stderr.trim()).toBe('The request is invalid: the server rejected our request due to an error in our request');

    const bad = await kubectl(sim, [
      'patch',
      'lease',
      '-n',
      'kube-system',
      'lock',
      '--type=merge',
      '-p',
      '{"spec":{"leaseDurationSeconds":0}}',
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim()).toBe('The Lease "lock" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0');

    const d = await kubectl(sim, ['delete', 'lease', '-n', 'kube-system', 'lock']);
    expect(d).toMatchObject({ code: 0, stdout: 'lease.coordination.k8s.io "lock" deleted\n' });
    expect(sim.lease('kube-system', 'lock')).toBeUndefined();
    const gone = await kubectl(sim, ['get', 'lease', '-n', 'kube-system', 'lock']);
    expect(gone.stderr.trim()).toBe('Error from server (NotFound): leases.coordination.k8s.io "lock" not found');
  });

  it('node leases live in kube-node-lease', async () => {
    const l = await kubectlJson(sim, ['get', 'lease', '-n', 'kube-node-lease', 'w-1']);
    expect(l.spec).toMatchObject({ holderIdentity: 'w-1', leaseDurationSeconds: 40 });
  });
});

describe('pods', () => {
  it('creates a pinned probe pod, pulls through the hooks, injects SA pull secrets, deletes it', async () => {
    sim.setImagePullHooks({
      pull: (node, image) =>
        node === 'w-2'
          ? { ok: false, error: `pull access denied for ${image}: 401 Unauthorized` }
          : { ok: true, imageID: 'reg.example/app@sha256:abc' },
    });
    const pod = (name: string, node: string, ns = 'kube-system') =>
      file(`${name}.json`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: ns },
        spec: {
          nodeName: node,
          restartPolicy: 'Never',
          tolerations: [{ operator: 'Exists' }],
          containers: [{ name: 'probe', image: 'reg.example/app:v1', imagePullPolicy: 'Always' }],
        },
      });
    const created = await kubectlJson(sim, ['create', '-f', pod('probe-1', 'w-1')]);
    expect(created.spec.imagePullSecrets).toBeUndefined();
    expect(created.status.phase).toBe('Pending');
    await until(() => sim.pods().find((p) => p.metadata.name === 'probe-1')?.status.phase === 'Running');
    const got = await kubectlJson(sim, ['get', 'pod', '-n', 'kube-system', 'probe-1']);
    expect(got.status.containerStatuses[0]).toMatchObject({ imageID: 'reg.example/app@sha256:abc', ready: true });

    await kubectl(sim, ['create', '-f', pod('probe-2', 'w-2')]);
    const failed = await until(() => sim.pods().find((p) => p.metadata.name === 'probe-2')?.status.containerStatuses?.[0]?.state.waiting);
    expect(failed).toEqual({
      reason: 'ErrImagePull',
      message: 'Failed to pull image "reg.example/app:v1": pull access denied for reg.example/app:v1: 401 Unauthorized',
    });

    sim.setServiceAccountPullSecrets('kube-system', ['regcred']);
    const injected = await kubectlJson(sim, ['create', '-f', pod('probe-3', 'w-1')]);
    expect(injected.spec.imagePullSecrets).toEqual([{ name: 'regcred' }]);

    const d = await kubectl(sim, ['delete', 'pod', '-n', 'kube-system', 'probe-1', '--timeout=5s']);
    expect(d).toMatchObject({ code: 0, stdout: 'pod "probe-1" deleted\n' });
    expect(sim.pods().some((p) => p.metadata.name === 'probe-1')).toBe(false);
  });
});

describe('faults', () => {
  it('a dropped connection surfaces as a transport error, an injected 500 as InternalError', async () => {
    sim.failNext({ method: 'PATCH', path: /^\/api\/v1\/nodes\/w-1$/ }, { drop: true });
    const r = await kubectl(sim, ['patch', 'node', 'w-1', '--type=merge', '-p', '{"metadata":{"labels":{"a":"b"}}}']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(/^Unable to connect to the server: (EOF|.*connection reset by peer)$/);
    expect(sim.node('w-1').metadata.labels.a).toBeUndefined();
    expect(sim.requests.find((q) => q.method === 'PATCH')?.status).toBe(0);

    sim.failNext({ path: /^\/api\/v1\/nodes\/w-1$/ }, { status: 500, message: 'boom' });
    const e = await kubectl(sim, ['get', 'node', 'w-1', '-o', 'json']);
    expect(e.code).toBe(1);
    expect(e.stderr.trim()).toBe('Error from server (InternalError): Internal error occurred: boom');

    sim.failNext({ path: /^\/readyz$/ }, { status: 503, message: 'not ready' });
    const rz = await kubectl(sim, ['get', '--raw', '/readyz']);
    expect(rz.code).toBe(1);
    expect(rz.stderr).toContain('ServiceUnavailable');
    expect((await kubectl(sim, ['get', '--raw', '/readyz'])).stdout).toBe('ok');
  });

  it('a write that lands but is answered by the apiserver timeout (504): kubectl reports Timeout, the node carries the change', async () => {
    sim.failNext({ method: 'PATCH', path: /^\/api\/v1\/nodes\/w-1$/ }, { status: 504, land: true });
    const r = await kubectl(sim, [
      'patch',
      'node',
      'w-1',
      '--type=json',
      '-p',
      '[{"op":"add","path":"/spec/unschedulable","value":true}]',
      '--request-timeout=30s',
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      'Error from server (Timeout): Timeout: request did not complete within requested timeout - context deadline exceeded',
    );
    expect(sim.node('w-1').spec.unschedulable).toBe(true);
    expect(sim.requests.filter((q) => q.method === 'PATCH').map((q) => q.status)).toEqual([504]);
  });

  it('a write that lands and is never answered: kubectl gives up at its --request-timeout, the node carries the change', async () => {
    sim.failNext({ method: 'PATCH', path: /^\/api\/v1\/nodes\/w-1$/ }, { hang: true, land: true });
    const r = await kubectl(sim, [
      'patch',
      'node',
      'w-1',
      '--type=merge',
      '-p',
      '{"metadata":{"labels":{"a":"b"}}}',
      '--request-timeout=2s',
    ]);
    expect(r.code).toBe(1);
    expect(r.ms).toBeGreaterThanOrEqual(1900);
    expect(r.stderr.trim()).toMatch(/^Unable to connect to the server: (net\/http: request canceled|context deadline exceeded)/);
    expect(sim.node('w-1').metadata.labels.a).toBe('b');
  });
});
