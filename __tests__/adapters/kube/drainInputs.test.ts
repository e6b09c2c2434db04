// The drain forecast's List of pods, DaemonSets and PDBs, read in one answer
// (src/adapters/kube/parse/drainInputs.ts); the dry-run eviction's answer is evictionAnswer.test.ts's.
import { describe, expect, it } from 'vitest';
import { drainInputsFromList } from '../../../src/adapters/kube/parse/drainInputs.js';

describe('drainInputsFromList', () => {
  it('pods as drain reads them, DaemonSets by namespace/name, PDBs with selector and status', () => {
    const out = drainInputsFromList({
      kind: 'List',
      items: [
        {
          kind: 'Pod',
          metadata: { name: 'bare', namespace: 'default', labels: { app: 'x' } },
          spec: { nodeName: 'w1' },
          status: { phase: 'Running' },
        },
        { kind: 'DaemonSet', metadata: { name: 'cilium', namespace: 'kube-system' } },
        {
          kind: 'PodDisruptionBudget',
          metadata: { name: 'x-pdb', namespace: 'default' },
          spec: { selector: { matchLabels: { app: 'x' } } },
          status: { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 },
        },
      ],
    });
    expect(out.pods).toEqual([
      {
        namespace: 'default',
        name: 'bare',
        nodeName: 'w1',
        phase: 'Running',
        controller: undefined,
        mirror: false,
        terminating: false,
        ready: false,
        emptyDir: false,
        labels: { app: 'x' },
      },
    ]);
    expect(out.daemonSets).toEqual(['kube-system/cilium']);
    expect(out.pdbs).toEqual([
      {
        namespace: 'default',
        name: 'x-pdb',
        selector: { matchLabels: { app: 'x' } },
        status: { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 },
        observedGeneration: 0,
        expectedPods: 0,
      },
    ]);
  });
  it('another kind is a drifted format, never guessed around', () => {
    expect(() => drainInputsFromList({ kind: 'List', items: [{ kind: 'Secret', metadata: {} }] })).toThrow(/unexpected kind/);
  });
});
