// The PDB/pod list of a namespace (src/adapters/kube/parse/pdbJson.ts): what blocked a drain, read for
// the quarantine. A failed drain's stderr is drainOutput.test.ts's.
import { describe, expect, it } from 'vitest';
import { parsePdbsAndPods } from '../../../src/adapters/kube/parse/pdbJson.js';

describe('parsePdbsAndPods', () => {
  it('reads the PDBs (selector, status, what the unsatisfiable-drain rule reads) and the pods (labels) of one List', () => {
    const list = {
      kind: 'List',
      items: [
        {
          kind: 'PodDisruptionBudget',
          metadata: { namespace: 'shop', name: 'db', generation: 3 },
          spec: {
            selector: { matchLabels: { app: 'db' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }] },
            minAvailable: '100%',
            unhealthyPodEvictionPolicy: 'AlwaysAllow',
          },
          status: { observedGeneration: 3, disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 },
        },
        { kind: 'PodDisruptionBudget', metadata: { namespace: 'shop', name: 'none' }, spec: { maxUnavailable: 1 }, status: {} },
        {
          kind: 'PodDisruptionBudget',
          metadata: { namespace: 'shop', name: 'unobserved', generation: 1 },
          spec: { selector: { matchLabels: { app: 'x' } }, maxUnavailable: '0%' },
        },
        { kind: 'Pod', metadata: { namespace: 'shop', name: 'db-0', labels: { app: 'db' } } },
        { kind: 'Pod', metadata: { namespace: 'shop', name: 'bare' } },
      ],
    };
    expect(parsePdbsAndPods(list)).toEqual({
      pdbs: [
        {
          namespace: 'shop',
          name: 'db',
          selector: { matchLabels: { app: 'db' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }] },
          status: { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 },
          minAvailable: '100%',
          unhealthyPodEvictionPolicy: 'AlwaysAllow',
          generation: 3,
          observedGeneration: 3,
          expectedPods: 1,
        },
        {
          namespace: 'shop',
          name: 'none',
          selector: undefined,
          status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0 },
          maxUnavailable: 1,
          // a written status's absent int32 is 0 (omitempty); no generation was written
          observedGeneration: 0,
          expectedPods: 0,
        },
        {
          namespace: 'shop',
          name: 'unobserved',
          selector: { matchLabels: { app: 'x' } },
          status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0 },
          maxUnavailable: '0%',
          generation: 1,
        },
      ],
      pods: [
        { namespace: 'shop', name: 'db-0', labels: { app: 'db' } },
        { namespace: 'shop', name: 'bare', labels: {} },
      ],
    });
  });
});
