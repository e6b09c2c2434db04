// The PDB/pod list of a namespace (src/adapters/kube/parse/pdbJson.ts): what blocked a drain, read for
// the quarantine. A failed drain's stderr is drainOutput.test.ts's.
import { describe, expect, it } from 'vitest';
import { parsePdbsAndPods } from '../../../src/adapters/kube/parse/pdbJson.js';

describe('parsePdbsAndPods', () => {
  it('reads the PDBs (selector, status) and the pods (labels) of one List', () => {
    const list = {
      kind: 'List',
      items: [
        {
          kind: 'PodDisruptionBudget',
          metadata: { namespace: 'shop', name: 'db' },
          spec: { selector: { matchLabels: { app: 'db' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }] } },
          status: { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 },
        },
        { kind: 'PodDisruptionBudget', metadata: { namespace: 'shop', name: 'none' }, spec: { maxUnavailable: 1 }, status: {} },
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
        },
        { namespace: 'shop', name: 'none', selector: undefined, status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0 } },
      ],
      pods: [
        { namespace: 'shop', name: 'db-0', labels: { app: 'db' } },
        { namespace: 'shop', name: 'bare', labels: {} },
      ],
    });
  });
});
