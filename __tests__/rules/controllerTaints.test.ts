// The controller-taint rule (src/rules/controllerTaints.ts): the one list of what Kubernetes' own
// controllers write to a node, and the boot-time taints among them. The guards that ignore them are
// src/rules/claim.ts's (__tests__/rules/claim.test.ts checkGuard).
import { describe, expect, it } from 'vitest';
import type { Taint } from '../../src/core/model/node.js';
import {
  ADVISORY_TAINT,
  CONDITION_TAINT_KEYS,
  CONTROLLER_TAINTS,
  isControllerTaint,
  LIFECYCLE_TAINT_KEYS,
  lifecycleTaints,
  MIRROR_TAINT,
} from '../../src/rules/controllerTaints.js';
import { node } from './fixtures.js';

const gpu: Taint = { key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' };
const mirror: Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: '2026-08-20T10:00:00Z' };
const advisory: Taint = { key: 'DeletionCandidateOfClusterAutoscaler', value: '1755684000', effect: 'PreferNoSchedule' };
const dedicated: Taint = { key: 'dedicated', value: 'db', effect: 'NoExecute' };
const conditionTaints = CONDITION_TAINT_KEYS.map((key) => ({ key, effect: 'NoSchedule' as const }));

describe('the controller taints', () => {
  it('names the mirror and advisory taints exactly', () => {
    expect(MIRROR_TAINT).toBe('node.kubernetes.io/unschedulable:NoSchedule');
    expect(ADVISORY_TAINT).toBe('DeletionCandidateOfClusterAutoscaler:PreferNoSchedule');
  });

  it('lifecycleTaints lists the three boot-time keys present, any effect', () => {
    const n = node({
      name: 'w1',
      taints: [
        gpu,
        { key: 'node.cilium.io/agent-not-ready', effect: 'NoSchedule' },
        { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' },
        { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
      ],
    });
    expect(lifecycleTaints(n)).toEqual(['node.kubernetes.io/not-ready', 'node.cilium.io/agent-not-ready']);
    expect(lifecycleTaints(node({ name: 'w2', taints: [gpu] }))).toEqual([]);
  });

  it('the controller taints are one list: the condition taints, the CNI agent, the cordon mirror and the autoscaler hint', () => {
    expect(CONTROLLER_TAINTS.map((t) => `${t.key}:${t.effect ?? '*'}`)).toEqual([
      ...CONDITION_TAINT_KEYS.map((k) => `${k}:*`),
      'node.cilium.io/agent-not-ready:*',
      MIRROR_TAINT,
      ADVISORY_TAINT,
    ]);
    // every key the wait for a rebooted node tolerates is one of them
    for (const key of LIFECYCLE_TAINT_KEYS) expect(isControllerTaint({ key, effect: 'NoSchedule' })).toBe(true);
    for (const t of [...conditionTaints, mirror, advisory]) expect(isControllerTaint(t)).toBe(true);
    for (const t of [gpu, dedicated, { key: 'node.cilium.io/not-a-known-key', effect: 'NoSchedule' as const }]) {
      expect(isControllerTaint(t)).toBe(false);
    }
  });
});
