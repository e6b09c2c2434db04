// Apiserver semantics below kubectl: evanphx v4 JSON-patch quirks, merge / strategic merge patches,
// typed normalization, selectors, and exact HTTP answers (Status bodies, watch framing, eviction).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubeSim } from '../../sim/kube/index.js';
import { applyJsonPatch, JsonPatchApplyError } from '../../sim/kube/jsonpatch.js';
import { applyMergePatch, applyStrategicMergePatch } from '../../sim/kube/mergepatch.js';
import { R } from '../../sim/kube/resources.js';
import { normalize } from '../../sim/kube/schema.js';
import { parseLabelSelector } from '../../sim/kube/selectors.js';
import { until } from './helpers.js';

const doc = () => ({
  metadata: { name: 'n', labels: { a: '1' } },
  spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] },
  list: [1, 2, 3],
});
const apply = (ops: unknown[]) => applyJsonPatch(doc(), ops as any) as any;
const fails = (ops: unknown[]) => expect(() => apply(ops)).toThrow(JsonPatchApplyError);

describe('JSON patch (evanphx v4.12.0)', () => {
  it('add replaces existing keys, needs the parent, inserts into arrays', () => {
    expect(apply([{ op: 'add', path: '/metadata/labels/a', value: '2' }]).metadata.labels.a).toBe('2');
    fails([{ op: 'add', path: '/metadata/annotations/x', value: 'y' }]);
    expect(apply([{ op: 'add', path: '/list/0', value: 0 }]).list).toEqual([0, 1, 2, 3]);
    expect(apply([{ op: 'add', path: '/list/3', value: 4 }]).list).toEqual([1, 2, 3, 4]);
    expect(apply([{ op: 'add', path: '/list/-', value: 4 }]).list).toEqual([1, 2, 3, 4]);
    expect(apply([{ op: 'add', path: '/list/-1', value: 4 }]).list).toEqual([1, 2, 3, 4]);
    fails([{ op: 'add', path: '/list/5', value: 4 }]);
  });

  it('replace of a missing object key adds it; on arrays the index must exist', () => {
    expect(apply([{ op: 'replace', path: '/metadata/labels/new', value: 'v' }]).metadata.labels.new).toBe('v');
    fails([{ op: 'replace', path: '/list/3', value: 9 }]);
    fails([{ op: 'replace', path: '/nope/x', value: 9 }]);
    expect(apply([{ op: 'replace', path: '', value: 5 }])).toEqual(doc());
  });

  it('remove of a missing key fails; test semantics for null, missing parents, arrays and whole docs', () => {
    fails([{ op: 'remove', path: '/metadata/labels/zzz' }]);
    expect(apply([{ op: 'test', path: '/spec/unschedulable', value: null }])).toEqual(doc());
    fails([{ op: 'test', path: '/spec/unschedulable', value: false }]);
    fails([{ op: 'test', path: '/metadata/annotations/x', value: null }]);
    fails([{ op: 'test', path: '/metadata/labels', value: null }]);
    expect(apply([{ op: 'test', path: '/spec/taints', value: [{ effect: 'NoSchedule', key: 'k' }] }])).toBeTruthy();
    fails([{ op: 'test', path: '/list', value: [3, 2, 1] }]);
    expect(apply([{ op: 'test', path: '', value: doc() }])).toBeTruthy();
    fails([{ op: 'test', path: '/list/0', value: '1' }]);
  });

  it('move, copy (a missing from copies null), ~ escapes, atomicity', () => {
    expect(apply([{ op: 'move', from: '/metadata/labels/a', path: '/metadata/labels/b' }]).metadata.labels).toEqual({ b: '1' });
    expect(apply([{ op: 'copy', from: '/metadata/labels/zz', path: '/metadata/labels/c' }]).metadata.labels.c).toBeNull();
    expect(apply([{ op: 'add', path: '/metadata/labels/x~1y~0z', value: 'v' }]).metadata.labels['x/y~z']).toBe('v');
    const d = doc();
    expect(() =>
      applyJsonPatch(d, [
        { op: 'add', path: '/metadata/labels/q', value: 'v' },
        { op: 'test', path: '/list', value: [] },
      ]),
    ).toThrow();
    expect(d).toEqual(doc());
    fails([{ op: 'frobnicate', path: '/x' }]);
  });
});

describe('merge patches', () => {
  it('RFC 7386 merge: null deletes, arrays replace', () => {
    expect(applyMergePatch(doc(), '{"metadata":{"labels":{"a":null,"b":"2"}},"list":[9]}')).toMatchObject({
      metadata: { labels: { b: '2' } },
      list: [9],
    });
  });

  it('strategic: taints replaced, conditions merged by type with $setElementOrder, unschedulable:null deletes', () => {
    const node = {
      spec: { unschedulable: true, taints: [{ key: 'a', effect: 'NoSchedule' }] },
      status: {
        conditions: [
          { type: 'Ready', status: 'True', lastHeartbeatTime: 't0' },
          { type: 'MemoryPressure', status: 'False', lastHeartbeatTime: 't0' },
        ],
      },
    };
    const out = applyStrategicMergePatch(
      node,
      JSON.stringify({
        spec: { unschedulable: null, taints: [{ key: 'b', effect: 'NoExecute' }] },
        status: {
          '$setElementOrder/conditions': [{ type: 'MemoryPressure' }, { type: 'Ready' }],
          conditions: [{ type: 'Ready', lastHeartbeatTime: 't1' }],
        },
      }),
      R.nodes.smp,
    ) as any;
    expect(out.spec).toEqual({ taints: [{ key: 'b', effect: 'NoExecute' }] });
    expect(out.status.conditions).toEqual([
      { type: 'MemoryPressure', status: 'False', lastHeartbeatTime: 't0' },
      { type: 'Ready', status: 'True', lastHeartbeatTime: 't1' },
    ]);
    const del = applyStrategicMergePatch(
      node,
      JSON.stringify({ status: { conditions: [{ type: 'Ready', $patch: 'delete' }] } }),
      R.nodes.smp,
    ) as any;
    expect(del.status.conditions.map((c: any) => c.type)).toEqual(['MemoryPressure']);
  });
});

describe('typed normalization', () => {
  it('drops omitempty zeros and unknown fields, keeps spec:{} and map entries, re-renders times', () => {
    const { value, unknown } = normalize(
      {
        kind: 'Node',
        metadata: { name: 'n', annotations: {}, labels: { empty: '' }, creationTimestamp: '2024-01-01T00:00:00.123+02:00' },
        spec: { unschedulable: false, taints: [], foo: 1 },
        bogus: true,
      },
      R.nodes.schema,
    );
    expect(value.metadata).toEqual({ name: 'n', labels: { empty: '' }, creationTimestamp: '2023-12-31T22:00:00Z' });
    expect(value.spec).toEqual({});
    expect(unknown).toEqual(['spec.foo', 'bogus']);
    const lease = normalize({ spec: { leaseTransitions: 0, holderIdentity: '' } }, R.leases.schema).value;
    expect(lease.spec).toEqual({ leaseTransitions: 0, holderIdentity: '' });
    expect(() => normalize({ spec: { renewTime: '2024-01-01T00:00:00Z' } }, R.leases.schema)).toThrow(/000000/);
  });

  it('label selectors', () => {
    const m = parseLabelSelector('a=1,b!=2,c,!d,e in (x, y),f notin (z)');
    expect(m({ a: '1', c: '', e: 'y' })).toBe(true);
    expect(m({ a: '1', b: '2', c: '', e: 'y' })).toBe(false);
    expect(m({ a: '1', c: '', d: '', e: 'y' })).toBe(false);
    expect(m({ a: '1', c: '', e: 'y', f: 'z' })).toBe(false);
    expect(() => parseLabelSelector('a in x')).toThrow();
  });
});

describe('HTTP', () => {
  let sim: KubeSim;
  beforeEach(async () => {
    sim = await KubeSim.start({ heartbeatMs: 60_000, taintDelayMs: 20, terminationMs: 50 });
    sim.addNode({ name: 'w-1', ip: '10.0.0.11', role: 'worker' });
    sim.addNode({ name: 'w-2', ip: '10.0.0.12', role: 'worker' });
  });
  afterEach(() => sim.stop());

  const req = (method: string, path: string, body?: unknown, contentType = 'application/json') =>
    fetch(sim.url + path, {
      method,
      headers: { 'Content-Type': contentType },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('answers the exact generic 422, NotFound and 415 bodies with application/json', async () => {
    const r = await req(
      'PATCH',
      '/api/v1/nodes/w-1',
      [{ op: 'test', path: '/spec/unschedulable', value: false }],
      'application/json-patch+json',
    );
    expect(r.status).toBe(422);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(await r.text()).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server rejected our request due to an error in our request","reason":"Invalid","details":{},"code":422}',
    );
    const nf = await req('GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/x');
    expect(await nf.json()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'leases.coordination.k8s.io "x" not found',
      reason: 'NotFound',
      details: { name: 'x', group: 'coordination.k8s.io', kind: 'leases' },
      code: 404,
    });
    expect((await req('PATCH', '/api/v1/nodes/w-1', '{}', 'text/plain')).status).toBe(415);
    const warn = await req('PATCH', '/api/v1/nodes/w-1', { spec: { foo: 1 } }, 'application/merge-patch+json');
    expect(warn.headers.get('warning')).toBe('299 - "unknown field \\"spec.foo\\""');
  });

  it('watch: replays after an RV, follows label-selector transitions, 410 for an expired RV', async () => {
    const rv = sim.resourceVersion;
    sim.mutateNode('w-1', (n) => (n.metadata.labels.pool = 'a'));
    const ctl = new AbortController();
    const res = await fetch(`${sim.url}/api/v1/nodes?watch=true&labelSelector=pool%3Da&resourceVersion=${rv}&timeoutSeconds=1`, {
      signal: ctl.signal,
    });
    expect(res.headers.get('content-type')).toBe('application/json');
    const reader = res.body!.getReader();
    let buf = '';
    const events: any[] = [];
    const pump = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += Buffer.from(value).toString('utf8');
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
          events.push(JSON.parse(buf.slice(0, i)));
          buf = buf.slice(i + 1);
        }
      }
    })();
    await until(() => events.length >= 1);
    sim.mutateNode('w-1', (n) => delete n.metadata.labels.pool);
    await pump;
    expect(events.map((e) => [e.type, e.object.kind, e.object.metadata.name])).toEqual([
      ['ADDED', 'Node', 'w-1'],
      ['DELETED', 'Node', 'w-1'],
    ]);
    const initial = await (await fetch(`${sim.url}/api/v1/nodes?watch=true&resourceVersion=0&timeoutSeconds=1`)).text();
    expect(
      initial
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).type),
    ).toEqual(['ADDED', 'ADDED']);
    for (let i = 0; i < 2100; i++) sim.mutateNode('w-2', (n) => (n.metadata.labels.i = String(i)));
    const expired = JSON.parse(await (await fetch(`${sim.url}/api/v1/nodes?watch=true&resourceVersion=${rv}`)).text());
    expect(expired).toMatchObject({ type: 'ERROR', object: { kind: 'Status', reason: 'Expired', code: 410 } });
  });

  it('eviction: 429 body without Retry-After, 201 Success, deletion, pending pods skip the PDB; DELETE tolerates protobuf', async () => {
    sim.addPod({ name: 'web-1', nodeName: 'w-1', owner: { kind: 'ReplicaSet', name: 'web' }, labels: { app: 'web' } });
    sim.addPdb({ name: 'web-pdb', selector: { app: 'web' }, disruptionsAllowed: 0 });
    const ev = { kind: 'Eviction', apiVersion: 'policy/v1', metadata: { name: 'web-1', namespace: 'default' }, deleteOptions: {} };
    const r = await req('POST', '/api/v1/namespaces/default/pods/web-1/eviction', ev);
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBeNull();
    expect(await r.json()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      reason: 'TooManyRequests',
      details: {
        causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget web-pdb needs 1 healthy pods and has 1 currently' }],
      },
      code: 429,
    });
    expect((await req('POST', '/api/v1/namespaces/default/pods/web-1/eviction', { ...ev, metadata: { name: 'other' } })).status).toBe(400);
    // A Pending pod (its image never pulls) is evicted without consulting the budget.
    sim.setImagePullHooks({ pull: () => ({ ok: false, error: 'denied' }) });
    await req('POST', '/api/v1/namespaces/default/pods', {
      metadata: { name: 'web-pending', labels: { app: 'web' } },
      spec: { nodeName: 'w-1', containers: [{ name: 'c', image: 'reg/x:1' }] },
    });
    await until(() => sim.pods().find((p) => p.metadata.name === 'web-pending')?.status.containerStatuses);
    expect(
      (await req('POST', '/api/v1/namespaces/default/pods/web-pending/eviction', { ...ev, metadata: { name: 'web-pending' } })).status,
    ).toBe(201);
    sim.setPdbAllowed('default', 'web-pdb', 1);
    const ok = await req('POST', '/api/v1/namespaces/default/pods/web-1/eviction', ev);
    expect(ok.status).toBe(201);
    expect(await ok.json()).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    // evicted: terminating, or already gone when a loaded runner looks only after its grace
    expect(sim.podEvents.some((e) => e.type === 'evicted' && e.pod === 'web-1')).toBe(true);
    const web1 = sim.pods().find((p) => p.metadata.name === 'web-1');
    if (web1) expect(web1.metadata.deletionTimestamp).toBeTruthy();
    await until(() => !sim.pods().some((p) => p.metadata.name === 'web-1'));
    const replacement = await until(() => sim.pods().find((p) => p.metadata.name.startsWith('web-') && p.status.phase === 'Running'));
    expect(replacement.spec.nodeName).toMatch(/^w-/);
    const del = await req(
      'DELETE',
      `/api/v1/namespaces/default/pods/${replacement.metadata.name}`,
      'k8s\u0000\n\u0010binary',
      'application/vnd.kubernetes.protobuf',
    );
    expect(del.status).toBe(200);
    expect((await del.json()).metadata.deletionTimestamp).toBeTruthy();
  });

  it('a minAvailable budget (addPdbMinAvailable) follows its pods: eviction refused while the other pod is not Ready, allowed once it is', async () => {
    sim.setReadiness('default', 'cart', 'never');
    sim.addPod({ name: 'cart-1', nodeName: 'w-1', owner: { kind: 'Deployment', name: 'cart' }, labels: { app: 'cart' } });
    sim.addPod({
      name: 'cart-2',
      owner: { kind: 'Deployment', name: 'cart' },
      labels: { app: 'cart' },
      nodeSelector: { 'kubernetes.io/hostname': 'w-2' },
    });
    sim.addPdbMinAvailable({ name: 'cart', selector: { app: 'cart' }, minAvailable: 1 });
    await until(() => sim.pods().find((p) => p.metadata.name === 'cart-2')?.status?.containerStatuses);
    await until(() => sim.pdb('default', 'cart')?.status?.expectedPods === 2);
    expect(sim.pdb('default', 'cart').status).toMatchObject({ disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 });
    const ev = { kind: 'Eviction', apiVersion: 'policy/v1', metadata: { name: 'cart-1', namespace: 'default' }, deleteOptions: {} };
    expect((await req('POST', '/api/v1/namespaces/default/pods/cart-1/eviction', ev)).status).toBe(429);
    sim.readyNow('default', 'cart');
    await until(() => sim.pdb('default', 'cart')?.status?.disruptionsAllowed === 1);
    expect((await req('POST', '/api/v1/namespaces/default/pods/cart-1/eviction', ev)).status).toBe(201);
  });

  it('pod admission injects the service account pull secrets; the kubelet pulls through the hooks', async () => {
    const pulls: string[] = [];
    sim.setImagePullHooks({
      pull: (node, image) => {
        pulls.push(`${node} ${image}`);
        return node === 'w-2' ? { ok: false, error: '401 Unauthorized' } : { ok: true, imageID: 'reg/app@sha256:aa' };
      },
    });
    const pod = (name: string, node: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { nodeName: node, containers: [{ name: 'c', image: 'reg/app:1', imagePullPolicy: 'Always' }] },
    });
    const a = await (await req('POST', '/api/v1/namespaces/default/pods', pod('a', 'w-1'))).json();
    expect(a.spec.imagePullSecrets).toBeUndefined();
    sim.setServiceAccountPullSecrets('default', ['regcred']);
    const b = await (await req('POST', '/api/v1/namespaces/default/pods', pod('b', 'w-2'))).json();
    expect(b.spec.imagePullSecrets).toEqual([{ name: 'regcred' }]);
    const pa = await until(() => sim.pods().find((p) => p.metadata.name === 'a' && p.status.phase === 'Running'));
    expect(pa.status.containerStatuses[0]).toMatchObject({ imageID: 'reg/app@sha256:aa', ready: true, state: { running: {} } });
    const pb = await until(() => sim.pods().find((p) => p.metadata.name === 'b' && p.status.containerStatuses?.[0]?.state?.waiting));
    expect(pb.status.containerStatuses[0].state.waiting).toEqual({
      reason: 'ErrImagePull',
      message: 'Failed to pull image "reg/app:1": 401 Unauthorized',
    });
    await until(
      () => sim.pods().find((p) => p.metadata.name === 'b').status.containerStatuses[0].state.waiting.reason === 'ImagePullBackOff',
    );
    expect(pulls).toEqual(['w-1 reg/app:1', 'w-2 reg/app:1']);
  });
});
