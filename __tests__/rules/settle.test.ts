import { describe, expect, it } from 'vitest';
import type { PodOwnerReading, WorkloadStatus } from '../../src/core/workloads.js';
import {
  baselinesOf,
  mergeBaselines,
  notAvailable,
  notBackToBaseline,
  ownersDrainWouldEvict,
  ownersOfEvicted,
  afterDrains,
  liveReplica,
  predictUnsettled,
  resolveOwners,
  unsettled,
} from '../../src/rules/settle.js';

const pod = (name: string, over: Partial<PodOwnerReading> = {}): PodOwnerReading => ({
  namespace: 'default',
  name,
  nodeName: 'w1',
  phase: 'Running',
  mirror: false,
  terminating: false,
  ready: true,
  ...over,
});

const status = (over: Partial<WorkloadStatus> & Pick<WorkloadStatus, 'kind' | 'name'>): WorkloadStatus => ({
  namespace: 'default',
  generation: 1,
  specReplicas: 2,
  observedGeneration: 1,
  replicas: 2,
  readyReplicas: 2,
  availableReplicas: 2,
  updatedReplicas: over.kind === 'Deployment' ? 2 : 0,
  unavailableReplicas: 0,
  ...over,
});

describe('ownersOfEvicted', () => {
  it('names the ReplicaSet and StatefulSet controllers of the evicted pods only, once each', () => {
    const pods = [
      pod('web-1', { controller: { kind: 'ReplicaSet', name: 'web-5f6' } }),
      pod('web-2', { controller: { kind: 'ReplicaSet', name: 'web-5f6' } }),
      pod('db-0', { controller: { kind: 'StatefulSet', name: 'db' } }),
      pod('agent-x', { controller: { kind: 'DaemonSet', name: 'agent' } }),
      pod('job-x', { controller: { kind: 'Job', name: 'nightly' } }),
      pod('bare'),
      pod('cache-1', { controller: { kind: 'ReplicaSet', name: 'cache-7d4' } }),
    ];
    const evicted = new Set(['default/web-1', 'default/web-2', 'default/db-0', 'default/agent-x', 'default/job-x', 'default/bare']);
    expect(ownersOfEvicted(pods, evicted)).toEqual([
      { kind: 'ReplicaSet', namespace: 'default', name: 'web-5f6' },
      { kind: 'StatefulSet', namespace: 'default', name: 'db' },
    ]);
  });

  it('matches pods by namespace and name (the same name in another namespace is another pod)', () => {
    const pods = [pod('web-1', { namespace: 'other', controller: { kind: 'ReplicaSet', name: 'web-5f6' } })];
    expect(ownersOfEvicted(pods, new Set(['default/web-1']))).toEqual([]);
  });
});

describe('ownersDrainWouldEvict', () => {
  it('predicts from the node pods: no mirror, no DaemonSet, no finished pods, no other node', () => {
    const pods = [
      pod('web-1', { controller: { kind: 'ReplicaSet', name: 'web-5f6' } }),
      pod('kube-apiserver-w1', { mirror: true, controller: { kind: 'Node', name: 'w1' } }),
      pod('done', { phase: 'Succeeded', controller: { kind: 'ReplicaSet', name: 'old' } }),
      pod('db-0', { nodeName: 'w2', controller: { kind: 'StatefulSet', name: 'db' } }),
    ];
    expect(ownersDrainWouldEvict(pods, 'w1')).toEqual([{ kind: 'ReplicaSet', namespace: 'default', name: 'web-5f6' }]);
  });
});

describe('resolveOwners', () => {
  it('judges a ReplicaSet a Deployment controls as its Deployment', () => {
    const statuses = [
      status({ kind: 'ReplicaSet', name: 'web-5f6', ownerDeployment: 'web' }),
      status({ kind: 'ReplicaSet', name: 'solo' }),
    ];
    expect(
      resolveOwners(
        [
          { kind: 'ReplicaSet', namespace: 'default', name: 'web-5f6' },
          { kind: 'ReplicaSet', namespace: 'default', name: 'solo' },
        ],
        statuses,
      ),
    ).toEqual([
      { kind: 'Deployment', namespace: 'default', name: 'web' },
      { kind: 'ReplicaSet', namespace: 'default', name: 'solo' },
    ]);
  });
});

describe('notAvailable', () => {
  it('a complete Deployment, ReplicaSet and StatefulSet are settled', () => {
    expect(notAvailable(status({ kind: 'Deployment', name: 'web' }))).toBeUndefined();
    expect(notAvailable(status({ kind: 'ReplicaSet', name: 'rs' }))).toBeUndefined();
    expect(notAvailable(status({ kind: 'StatefulSet', name: 'db' }))).toBeUndefined();
  });

  it('a status the controller has not caught up with (observedGeneration behind) is not settled, whatever its numbers', () => {
    expect(notAvailable(status({ kind: 'Deployment', name: 'web', generation: 3, observedGeneration: 2 }))).toBe(
      'its controller has not observed generation 3 yet (observed 2)',
    );
  });

  it('a Deployment: updated, available and replicas must each equal spec.replicas', () => {
    expect(notAvailable(status({ kind: 'Deployment', name: 'web', availableReplicas: 1, readyReplicas: 1 }))).toBe(
      'available 1 of 2 desired',
    );
    // an old pod still counted (a rollout in progress): replicas above the desired count
    expect(notAvailable(status({ kind: 'Deployment', name: 'web', replicas: 3, updatedReplicas: 2 }))).toBe('replicas 3 of 2 desired');
    expect(notAvailable(status({ kind: 'Deployment', name: 'web', updatedReplicas: 1 }))).toBe('updated 1 of 2 desired');
    expect(
      notAvailable(status({ kind: 'Deployment', name: 'web', availableReplicas: 0, progressingReason: 'ProgressDeadlineExceeded' })),
    ).toBe('available 0 of 2 desired; its rollout exceeded its progress deadline');
  });

  it('a StatefulSet or ReplicaSet: ready and available (minReadySeconds) must equal spec.replicas', () => {
    expect(notAvailable(status({ kind: 'StatefulSet', name: 'db', readyReplicas: 1, availableReplicas: 1 }))).toBe(
      'ready 1, available 1 of 2 desired',
    );
    expect(notAvailable(status({ kind: 'ReplicaSet', name: 'rs', availableReplicas: 1 }))).toBe('available 1 of 2 desired');
    // the omitempty zero: a status with no readyReplicas at all parsed as 0
    expect(notAvailable(status({ kind: 'StatefulSet', name: 'db', readyReplicas: 0, availableReplicas: 0, replicas: 2 }))).toBe(
      'ready 0, available 0 of 2 desired',
    );
  });

  it('scaled to 0 is settled', () => {
    expect(notAvailable(status({ kind: 'StatefulSet', name: 'db', specReplicas: 0, replicas: 1, readyReplicas: 0 }))).toBeUndefined();
  });
});

describe('unsettled', () => {
  it('names what is not available, judged by the Deployment; a controller deleted meanwhile is settled', () => {
    const statuses = [
      status({ kind: 'ReplicaSet', name: 'web-5f6', ownerDeployment: 'web', readyReplicas: 1, availableReplicas: 1 }),
      status({ kind: 'Deployment', name: 'web', availableReplicas: 1, readyReplicas: 1, unavailableReplicas: 1 }),
      status({ kind: 'StatefulSet', name: 'db' }),
    ];
    const refs = [
      { kind: 'ReplicaSet' as const, namespace: 'default', name: 'web-5f6' },
      { kind: 'StatefulSet' as const, namespace: 'default', name: 'db' },
      { kind: 'StatefulSet' as const, namespace: 'default', name: 'gone' },
    ];
    expect(unsettled(refs, statuses)).toEqual([
      { workload: { kind: 'Deployment', namespace: 'default', name: 'web' }, why: 'available 1 of 2 desired' },
    ]);
  });
});

describe('the baseline: back to how it was before the drain', () => {
  // a Deployment that wants 3 and had 2 before the drain (one replica Pending for days)
  const degraded = (ready: number, available = ready, over: Partial<WorkloadStatus> = {}) =>
    status({
      kind: 'Deployment',
      name: 'web',
      specReplicas: 3,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: ready,
      availableReplicas: available,
      ...over,
    });
  const before = { ready: 2, available: 2 };

  it('back to its counts before the drain is settled, though never fully available', () => {
    expect(notBackToBaseline(degraded(2), before)).toBeUndefined();
    expect(notBackToBaseline(degraded(3), before)).toBeUndefined();
    // the spec rule would wait for ever
    expect(notAvailable(degraded(2))).toBe('available 2 of 3 desired');
  });

  it('below it: names the counts short, and that the bar is the count before the drain', () => {
    expect(notBackToBaseline(degraded(1), before)).toBe('ready 1, available 1 of 2 (as many as before the drain; 3 desired)');
    expect(notBackToBaseline(degraded(2, 1), before)).toBe('available 1 of 2 (as many as before the drain; 3 desired)');
    expect(notBackToBaseline(degraded(1, 0), { ready: 2, available: 1 })).toBe(
      'ready 1 of 2, available 0 of 1 (as many as before the drain; 3 desired)',
    );
    // a healthy workload: the bar is its spec, said as before
    expect(notBackToBaseline(status({ kind: 'StatefulSet', name: 'db', readyReplicas: 1, availableReplicas: 1 }), before)).toBe(
      'ready 1, available 1 of 2 desired',
    );
  });

  it('capped at spec: a scale-down meanwhile lowers the bar; scaled to 0 is settled', () => {
    expect(notBackToBaseline(degraded(1, 1, { specReplicas: 1 }), { ready: 3, available: 3 })).toBeUndefined();
    expect(notBackToBaseline(degraded(0, 0, { specReplicas: 0 }), before)).toBeUndefined();
    // and a scale-up does not raise it
    expect(notBackToBaseline(degraded(2, 2, { specReplicas: 5 }), before)).toBeUndefined();
  });

  it('a status the controller has not caught up with is not settled, whatever its numbers', () => {
    expect(notBackToBaseline(degraded(3, 3, { generation: 4, observedGeneration: 3 }), before)).toBe(
      'its controller has not observed generation 4 yet (observed 3)',
    );
  });

  it('baselinesOf: each ref with the counts of the workload it is judged as; none for a workload not listed', () => {
    const statuses = [
      status({ kind: 'ReplicaSet', name: 'web-5f6', ownerDeployment: 'web', readyReplicas: 9, availableReplicas: 9 }),
      degraded(2),
      status({ kind: 'StatefulSet', name: 'db', readyReplicas: 1, availableReplicas: 0 }),
    ];
    const rs = { kind: 'ReplicaSet' as const, namespace: 'default', name: 'web-5f6' };
    const db = { kind: 'StatefulSet' as const, namespace: 'default', name: 'db' };
    const gone = { kind: 'StatefulSet' as const, namespace: 'default', name: 'gone' };
    expect(baselinesOf([rs, db, gone, rs], statuses)).toEqual([
      { ref: rs, judged: 'Deployment/default/web', baseline: { ready: 2, available: 2 } },
      { ref: db, judged: 'StatefulSet/default/db', baseline: { ready: 1, available: 0 } },
    ]);
  });

  it('two drains of one workload: the higher of each count', () => {
    expect(mergeBaselines(undefined, before)).toEqual(before);
    expect(mergeBaselines({ ready: 3, available: 1 }, { ready: 2, available: 2 })).toEqual({ ready: 3, available: 2 });
  });

  it('unsettled judges by the baseline where there is one, by the spec where there is none', () => {
    const statuses = [degraded(2), status({ kind: 'StatefulSet', name: 'db', readyReplicas: 1, availableReplicas: 1 })];
    const refs = [
      { kind: 'Deployment' as const, namespace: 'default', name: 'web' },
      { kind: 'StatefulSet' as const, namespace: 'default', name: 'db' },
    ];
    expect(unsettled(refs, statuses, new Map([['Deployment/default/web', before]]))).toEqual([
      { workload: refs[1], why: 'ready 1, available 1 of 2 desired' },
    ]);
  });
});

describe("plan's prediction: the gate's own rule on the counts right after the drains", () => {
  const rs = (name: string) => ({ controller: { kind: 'ReplicaSet', name } });
  it('a live replica is an active Ready pod: not terminating, not finished, Ready', () => {
    expect(liveReplica(pod('a'))).toBe(true);
    expect(liveReplica(pod('a', { terminating: true }))).toBe(false);
    expect(liveReplica(pod('a', { ready: false }))).toBe(false);
    expect(liveReplica(pod('a', { phase: 'Succeeded', ready: false }))).toBe(false);
  });

  it('afterDrains takes the live replicas on the drained nodes from the workload they are judged as, never below 0', () => {
    const statuses = [
      status({ kind: 'Deployment', name: 'web' }),
      status({ kind: 'ReplicaSet', name: 'web-5f6', ownerDeployment: 'web' }),
      status({ kind: 'StatefulSet', name: 'db', specReplicas: 1, replicas: 1, readyReplicas: 0, availableReplicas: 0 }),
    ];
    const pods = [
      pod('web-a', rs('web-5f6')),
      pod('web-b', { ...rs('web-5f6'), nodeName: 'w2' }),
      pod('db-0', { controller: { kind: 'StatefulSet', name: 'db' } }),
    ];
    const after = afterDrains(statuses, pods, ['w1']);
    expect(after.map((s) => [s.name, s.readyReplicas, s.availableReplicas])).toEqual([
      ['web', 1, 1],
      ['web-5f6', 2, 2],
      ['db', 0, 0],
    ]);
  });

  it('names what the gate would wait for, and not a ReplicaSet scaled to 0 whose only pod is terminating, nor a terminating surplus pod', () => {
    const statuses = [
      status({ kind: 'Deployment', name: 'web' }),
      status({ kind: 'ReplicaSet', name: 'web-5f6', ownerDeployment: 'web' }),
      // scaled to 0; its last pod terminates on w1 and is no longer counted
      status({
        kind: 'ReplicaSet',
        name: 'batch-7c1',
        generation: 2,
        observedGeneration: 2,
        specReplicas: 0,
        replicas: 0,
        readyReplicas: 0,
        availableReplicas: 0,
      }),
      // two live replicas elsewhere; its third pod terminates on w1 (a rolling replacement)
      status({ kind: 'StatefulSet', name: 'db' }),
    ];
    const pods = [
      pod('web-a', rs('web-5f6')),
      pod('batch-7c1-x', { ...rs('batch-7c1'), terminating: true, ready: false }),
      pod('db-2', { controller: { kind: 'StatefulSet', name: 'db' }, terminating: true }),
    ];
    const waits = predictUnsettled(pods, statuses, ['w1']);
    expect(waits).toEqual([
      { workload: { kind: 'Deployment', namespace: 'default', name: 'web' }, why: 'ready 1, available 1 of 2 desired' },
    ]);
    // the same rule the gate runs after the drain: with the replica back, nothing is left
    expect(
      unsettled(
        [{ kind: 'ReplicaSet', namespace: 'default', name: 'web-5f6' }],
        statuses,
        new Map([['Deployment/default/web', { ready: 2, available: 2 }]]),
      ),
    ).toEqual([]);
  });
});
