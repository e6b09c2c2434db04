// Plain-object builders shared by the rule tests.
import { annotationKeys, type NodeState } from '../../src/core/model/node.js';

export const keys = annotationKeys('registry-auth-rollout');
export const OWNER = 'acme/infra run 4242 attempt 1 nonce 7f3a';
export const OTHER_OWNER = 'acme/infra run 4100 attempt 2 nonce 0b9c';

export function node(over: Partial<NodeState> & { name: string }): NodeState {
  return {
    uid: `uid-${over.name}`,
    resourceVersion: '1000',
    unschedulable: false,
    taints: [],
    labels: { 'kubernetes.io/hostname': over.name },
    annotations: {},
    hasAnnotationsMap: false,
    internalIPs: ['10.0.0.1'],
    role: 'worker',
    ready: 'True',
    bootID: `boot-${over.name}`,
    ...over,
  };
}
