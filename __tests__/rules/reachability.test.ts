import { describe, expect, it } from 'vitest';
import { kubeletUnreachable } from '../../src/rules/reachability.js';
import { node } from './fixtures.js';

describe('kubeletUnreachable: Kubernetes has lost touch with the kubelet', () => {
  it('the unreachable taint, any effect', () => {
    for (const effect of ['NoSchedule', 'NoExecute'] as const) {
      expect(kubeletUnreachable(node({ name: 'w1', taints: [{ key: 'node.kubernetes.io/unreachable', effect }] }))).toMatch(
        /marks it node\.kubernetes\.io\/unreachable/,
      );
    }
  });
  it('Ready=Unknown before the controller wrote its taint', () => {
    expect(kubeletUnreachable({ ...node({ name: 'w1' }), ready: 'Unknown' })).toMatch(/Ready condition is Unknown/);
  });
  it('a node that is NotReady or under pressure is reachable', () => {
    const n = node({ name: 'w1', taints: [{ key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' }] });
    expect(kubeletUnreachable({ ...n, ready: 'False' })).toBeUndefined();
    expect(kubeletUnreachable(node({ name: 'w1' }))).toBeUndefined();
  });
});
