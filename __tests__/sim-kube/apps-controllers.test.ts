// The apps/v1 controllers of the twin, through the real kubectl: Deployments in discovery, statuses that
// follow the pods one controller sync later with the omitempty JSON shape, readiness delays after an
// eviction, and the twin's pod event log.
import { beforeAll, describe, expect, it } from 'vitest';
import { Kubectl } from '../../src/adapters/kube/kubectl.js';
import { Runner } from '../../src/adapters/exec.js';
import { ToolError } from '../../src/core/errors.js';
import { KubeSim } from '../../sim/kube/index.js';
import { findKubectl, kubectl, kubectlJson, until } from './helpers.js';

beforeAll(() => {
  findKubectl();
});

async function cluster(): Promise<KubeSim> {
  const sim = await KubeSim.start({ heartbeatMs: 500, taintDelayMs: 50, controllerSyncMs: 150 });
  sim.addNode({ name: 'cp-1', ip: '10.0.0.1', role: 'control-plane' });
  sim.addNode({ name: 'w-1', ip: '10.0.0.11', role: 'worker' });
  sim.addNode({ name: 'w-2', ip: '10.0.0.12', role: 'worker' });
  return sim;
}

describe.concurrent('apps controllers', () => {
  it('kubectl lists Deployments (discovery, table) with their ReplicaSets; the status arrives a sync later', async () => {
    const sim = await cluster();
    try {
      sim.addPod({ name: 'web-a', nodeName: 'w-1', owner: { kind: 'Deployment', name: 'web' } });
      sim.addPod({ name: 'web-b', nodeName: 'w-2', owner: { kind: 'Deployment', name: 'web' } });
      // before the controllers' first sync: an empty status
      expect(sim.workload('Deployment', 'default', 'web').status ?? {}).toEqual({});
      await until(() => sim.workload('Deployment', 'default', 'web').status?.availableReplicas === 2);
      const table = await kubectl(sim, ['get', 'deployments']);
      expect(table.code).toBe(0);
      expect(table.stdout).toMatch(/^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\nweb\s+2\/2\s+2\s+2\s+/);
      const list = await kubectlJson(sim, ['get', 'deployments.apps,replicasets.apps,statefulsets.apps', '-A', '-o', 'json']);
      const kinds = list.items.map((i: any) => `${i.kind}/${i.metadata.name}`);
      expect(kinds[0]).toBe('Deployment/web');
      expect(kinds[1]).toMatch(/^ReplicaSet\/web-[a-z0-9]+$/);
      const [d, rs] = list.items;
      expect(rs.metadata.ownerReferences[0]).toMatchObject({ kind: 'Deployment', name: 'web', controller: true });
      expect(d.spec.replicas).toBe(2);
      expect(d.metadata.generation).toBe(2);
      expect(d.status).toMatchObject({ observedGeneration: 2, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 });
      expect(d.status).not.toHaveProperty('unavailableReplicas');
      expect(d.status.conditions.map((c: any) => `${c.type}=${c.status}/${c.reason}`)).toEqual([
        'Available=True/MinimumReplicasAvailable',
        'Progressing=True/NewReplicaSetAvailable',
      ]);
    } finally {
      await sim.stop();
    }
  });

  it('a drained pod re-created and held not Ready: readyReplicas absent (omitempty) until Ready, then back; the event log says when', async () => {
    const sim = await cluster();
    try {
      sim.addPod({ name: 'db-0', nodeName: 'w-1', owner: { kind: 'StatefulSet', name: 'db' } });
      sim.addPod({ name: 'web-a', nodeName: 'w-1', owner: { kind: 'Deployment', name: 'web' } });
      await until(() => sim.workload('Deployment', 'default', 'web').status?.availableReplicas === 1);
      // the replacement held not Ready until the test has looked (readyNow), not for a delay a loaded
      // machine's kubectl start-up could outlast
      sim.setReadiness('default', 'web', 'never');
      sim.setReadiness('default', 'db', 'never');
      const r = await kubectl(sim, ['drain', 'w-1', '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=30s']);
      expect(r.code).toBe(0);
      const evicted = sim.podEvents.filter((e) => e.type === 'evicted').map((e) => `${e.pod}@${e.node}`);
      expect(evicted.sort()).toEqual(['db-0@w-1', 'web-a@w-1']);
      await until(
        () => sim.pods().some((p) => p.metadata.name.startsWith('web-') && p.spec.nodeName === 'w-2' && p.status.phase === 'Running'),
        5000,
      );
      await until(() => sim.workload('Deployment', 'default', 'web').status?.unavailableReplicas === 1);
      const notYet = await kubectlJson(sim, ['get', 'deployment', 'web', '-o', 'json']);
      expect(notYet.status).not.toHaveProperty('readyReplicas');
      expect(notYet.status).not.toHaveProperty('availableReplicas');
      expect(notYet.status.replicas).toBe(1);
      const releasedAt = Date.now();
      sim.readyNow('default', 'web');
      await until(() => sim.workload('Deployment', 'default', 'web').status?.availableReplicas === 1);
      // the event log says when: Ready on w-2 once released, after the eviction
      const ready = sim.podEvents.find((e) => e.type === 'ready' && e.owner?.startsWith('ReplicaSet/web-') && e.node === 'w-2')!;
      const evictedAt = sim.podEvents.find((e) => e.type === 'evicted' && e.pod === 'web-a')!.at;
      expect(ready.at).toBeGreaterThanOrEqual(releasedAt);
      expect(ready.at).toBeGreaterThan(evictedAt);
      // the StatefulSet's pod never becomes Ready: replicas stays (not omitempty), readyReplicas is absent, availableReplicas 0
      await until(() => sim.pods().some((p) => p.metadata.name === 'db-0' && p.status.phase === 'Running'));
      await until(() => sim.workload('StatefulSet', 'default', 'db').status?.replicas === 1);
      const sts = (await kubectlJson(sim, ['get', 'statefulset', 'db', '-o', 'json'])).status;
      expect(sts).toMatchObject({ replicas: 1, availableReplicas: 0 });
      expect(sts).not.toHaveProperty('readyReplicas');
    } finally {
      await sim.stop();
    }
  });

  it("a degraded Deployment: a replica that fits no node stays Pending for ever, with the scheduler's reasons; the status says 2 of 3", async () => {
    const sim = await KubeSim.start({ heartbeatMs: 500, taintDelayMs: 50, controllerSyncMs: 150 });
    try {
      sim.addNode({ name: 'cp-1', ip: '10.0.0.1', role: 'control-plane' });
      sim.addNode({ name: 'w-1', ip: '10.0.0.11', role: 'worker', labels: { pool: 'api' } });
      sim.addNode({ name: 'w-2', ip: '10.0.0.12', role: 'worker', labels: { pool: 'api' } });
      sim.addNode({ name: 'w-3', ip: '10.0.0.13', role: 'worker' });
      // 3 CPUs each, on 3950m-allocatable nodes of pool api: one per node, and only two such nodes
      const api = { owner: { kind: 'Deployment' as const, name: 'api' }, cpu: '3', nodeSelector: { pool: 'api' } };
      sim.addPod({ name: 'api-a', nodeName: 'w-1', ...api });
      sim.addPod({ name: 'api-b', nodeName: 'w-2', ...api });
      sim.addPod({ name: 'api-c', ...api });
      const scheduled = () =>
        sim
          .pods()
          .find((p) => p.metadata.name === 'api-c')
          .status?.conditions?.find((c: any) => c.type === 'PodScheduled');
      await until(() => scheduled()?.status === 'False');
      expect(scheduled()).toMatchObject({
        reason: 'Unschedulable',
        message:
          "0/4 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 Insufficient cpu. " +
          'preemption: 0/4 nodes are available: 2 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.',
      });
      await until(() => sim.workload('Deployment', 'default', 'api').status?.availableReplicas === 2);
      const d = await kubectlJson(sim, ['get', 'deployment', 'api', '-o', 'json']);
      expect(d.spec.replicas).toBe(3);
      expect(d.spec.template.spec).toMatchObject({
        nodeSelector: { pool: 'api' },
        containers: [{ resources: { requests: { cpu: '3' } } }],
      });
      expect(d.status).toMatchObject({ replicas: 3, updatedReplicas: 3, readyReplicas: 2, availableReplicas: 2, unavailableReplicas: 1 });
      const table = await kubectl(sim, ['get', 'pods']);
      expect(table.stdout).toMatch(/\napi-c\s+0\/1\s+Pending\s+0\s+/);

      // w-1 is drained: its replica's replacement finds no room either, until w-1 is schedulable again;
      // then one of the two Pending replicas runs there and the other stays Pending
      const r = await kubectl(sim, ['drain', 'w-1', '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=30s']);
      expect(r.code, r.stderr).toBe(0);
      await until(() => sim.workload('Deployment', 'default', 'api').status?.availableReplicas === 1);
      expect(sim.pods().filter((p) => p.metadata.name.startsWith('api-') && !p.spec.nodeName)).toHaveLength(2);
      expect((await kubectl(sim, ['uncordon', 'w-1'])).code).toBe(0);
      await until(() => sim.workload('Deployment', 'default', 'api').status?.availableReplicas === 2);
      expect(sim.pods().filter((p) => p.metadata.name.startsWith('api-') && !p.spec.nodeName)).toHaveLength(1);
      expect(sim.workload('Deployment', 'default', 'api').status.availableReplicas).toBe(2);
    } finally {
      await sim.stop();
    }
  });

  it('minReadySeconds: a Ready pod counts as available only after it, and a spec change moves observedGeneration a sync later', async () => {
    const sim = await cluster();
    try {
      sim.addPod({ name: 'api-a', nodeName: 'w-1', owner: { kind: 'ReplicaSet', name: 'api' } });
      await until(() => sim.workload('ReplicaSet', 'default', 'api').status?.availableReplicas === 1);
      sim.setMinReadySeconds('default', 'ReplicaSet', 'api', 2);
      const rs = sim.workload('ReplicaSet', 'default', 'api');
      expect(rs.metadata.generation).toBe(2);
      expect(rs.status.observedGeneration).toBe(1);
      await until(() => sim.workload('ReplicaSet', 'default', 'api').status?.observedGeneration === 2);
      const drainedAt = Date.now();
      const r = await kubectl(sim, ['drain', 'w-1', '--ignore-daemonsets', '--timeout=30s']);
      expect(r.code).toBe(0);
      await until(() => sim.workload('ReplicaSet', 'default', 'api').status?.availableReplicas === 1, 10_000);
      // ordered on the twin's own clock (when the pod turned Ready, when the controller wrote the count),
      // not by polling inside the 2 s: a loaded machine may look only after the window has passed
      const ready = sim.podEvents.filter((e) => e.type === 'ready' && e.owner === 'ReplicaSet/api' && e.at >= drainedAt);
      expect(ready).toHaveLength(1);
      const rsChanges = sim.availabilityChanges.filter((c) => c.kind === 'ReplicaSet' && c.name === 'api');
      // when the replacement turned Ready the ReplicaSet counted nothing available (the eviction took the
      // only replica), and it counted the replacement only 2 s later
      expect(rsChanges.filter((c) => c.at <= ready[0].at).at(-1)?.available).toBeUndefined();
      // minReadySeconds counts from the Ready condition's lastTransitionTime, whole seconds as the API has it
      const pod = sim.pods().find((p) => p.metadata.name === ready[0].pod);
      const readyAt = Date.parse(pod.status.conditions.find((c: { type: string }) => c.type === 'Ready').lastTransitionTime);
      const counted = rsChanges.find((c) => c.at >= ready[0].at && c.available === 1);
      expect(counted!.at - readyAt).toBeGreaterThanOrEqual(2000);
      expect(sim.workload('ReplicaSet', 'default', 'api').status.readyReplicas).toBe(1);
    } finally {
      await sim.stop();
    }
  });

  it('the Kubectl adapter: the node pods with their controllers, one list of the three kinds, and what a failed drain evicted', async () => {
    const sim = await cluster();
    try {
      sim.addPod({ name: 'web-a', nodeName: 'w-1', owner: { kind: 'Deployment', name: 'web' } });
      sim.addPod({ name: 'db-0', nodeName: 'w-1', owner: { kind: 'StatefulSet', name: 'db' }, labels: { app: 'db' } });
      sim.addPod({ name: 'other', nodeName: 'w-2', owner: { kind: 'ReplicaSet', name: 'other' } });
      sim.addPdb({ name: 'db', selector: { app: 'db' }, disruptionsAllowed: 0 });
      const kube = new Kubectl({ runner: new Runner(), kubeconfig: sim.kubeconfigPath });
      const pods = await kube.listPodOwners('w-1');
      expect(pods.map((p) => `${p.name}:${p.controller?.kind}`).sort()).toEqual(['db-0:StatefulSet', 'web-a:ReplicaSet']);
      await until(() => sim.workload('Deployment', 'default', 'web').status?.availableReplicas === 1);
      const kinds = (await kube.listWorkloads()).map((w) => `${w.kind}/${w.name}/${w.availableReplicas}/${w.ownerDeployment ?? ''}`);
      expect(kinds).toEqual([
        'Deployment/web/1/',
        'ReplicaSet/other/1/',
        expect.stringMatching(/^ReplicaSet\/web-[a-z0-9]+\/1\/web$/),
        'StatefulSet/db/1/',
      ]);
      let evicted: string[] | undefined;
      const err = await kube.drain('w-1', 3000, undefined, (p) => (evicted = p)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ToolError);
      // the PDB refused db-0 until the timeout: only web-a was evicted
      expect(evicted).toEqual([expect.stringMatching(/^default\/web-a$/)]);
    } finally {
      await sim.stop();
    }
  });
});
