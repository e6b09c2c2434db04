import { describe, expect, it } from 'vitest';
import { ParseError } from '../../../src/adapters/parseError.js';
import { podOwnersFromList, workloadsFromList } from '../../../src/adapters/kube/parse/workloadJson.js';

describe('workloadsFromList', () => {
  it('reads the three kinds of one List; an absent (omitempty) count is 0; a ReplicaSet names its Deployment', () => {
    const list = {
      kind: 'List',
      apiVersion: 'v1',
      items: [
        {
          kind: 'Deployment',
          metadata: { name: 'web', namespace: 'shop', generation: 3 },
          spec: { replicas: 2 },
          // a Deployment whose pods are all unavailable: readyReplicas and availableReplicas absent
          status: {
            observedGeneration: 3,
            replicas: 2,
            updatedReplicas: 2,
            unavailableReplicas: 2,
            conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }],
          },
        },
        {
          kind: 'ReplicaSet',
          metadata: {
            name: 'web-5f6',
            namespace: 'shop',
            generation: 1,
            ownerReferences: [{ kind: 'Deployment', name: 'web', controller: true }],
          },
          spec: { replicas: 2 },
          status: { replicas: 2, observedGeneration: 1 },
        },
        // no status written yet, no spec.replicas (defaulted to 1)
        { kind: 'StatefulSet', metadata: { name: 'db', namespace: 'shop', generation: 1 }, spec: {} },
      ],
    };
    const [d, rs, sts] = workloadsFromList(list);
    expect(d).toMatchObject({
      kind: 'Deployment',
      readyReplicas: 0,
      availableReplicas: 0,
      unavailableReplicas: 2,
      progressingReason: 'ProgressDeadlineExceeded',
    });
    expect(rs).toMatchObject({ kind: 'ReplicaSet', ownerDeployment: 'web', readyReplicas: 0, replicas: 2 });
    expect(sts).toMatchObject({ kind: 'StatefulSet', specReplicas: 1, observedGeneration: 0, replicas: 0, generation: 1 });
  });

  it('refuses what it does not know rather than guessing', () => {
    expect(() => workloadsFromList({ kind: 'Status' })).toThrow(ParseError);
    expect(() => workloadsFromList({ kind: 'List', items: [{ kind: 'DaemonSet', metadata: { name: 'x', namespace: 'y' } }] })).toThrow(
      /unexpected kind "DaemonSet"/,
    );
    expect(() =>
      workloadsFromList({
        kind: 'List',
        items: [{ kind: 'Deployment', metadata: { name: 'x', namespace: 'y' }, status: { readyReplicas: '2' } }],
      }),
    ).toThrow(/Deployment x: status.readyReplicas is not a count/);
  });
});

describe('podOwnersFromList', () => {
  it('each pod with its node, phase, controller, whether it is a mirror pod, terminating or Ready, its labels and emptyDir volumes', () => {
    const pods = podOwnersFromList({
      kind: 'PodList',
      items: [
        {
          metadata: {
            name: 'web-5f6-a',
            namespace: 'shop',
            labels: { app: 'web' },
            ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5f6', controller: true }],
          },
          spec: {
            nodeName: 'w1',
            volumes: [
              { name: 'cfg', configMap: { name: 'x' } },
              { name: 'tmp', emptyDir: {} },
            ],
          },
          status: {
            phase: 'Running',
            conditions: [
              { type: 'PodScheduled', status: 'True' },
              { type: 'Ready', status: 'True' },
            ],
          },
        },
        {
          metadata: {
            name: 'kube-apiserver-cp1',
            namespace: 'kube-system',
            annotations: { 'kubernetes.io/config.mirror': 'abc' },
            deletionTimestamp: '2026-12-06T07:00:30Z',
          },
          spec: { nodeName: 'cp1' },
          status: { phase: 'Running' },
        },
      ],
    });
    expect(pods).toEqual([
      {
        namespace: 'shop',
        name: 'web-5f6-a',
        nodeName: 'w1',
        phase: 'Running',
        controller: { kind: 'ReplicaSet', name: 'web-5f6' },
        controllerApiVersion: 'apps/v1',
        mirror: false,
        terminating: false,
        ready: true,
        emptyDir: true,
        labels: { app: 'web' },
      },
      {
        namespace: 'kube-system',
        name: 'kube-apiserver-cp1',
        nodeName: 'cp1',
        phase: 'Running',
        controller: undefined,
        mirror: true,
        terminating: true,
        ready: false,
        emptyDir: false,
        labels: {},
      },
    ]);
  });
});
