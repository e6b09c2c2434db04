// A failed kubectl drain's stderr → the pods it was still waiting for (the texts kubectl 1.32 prints:
// docs/kubernetes-facts.md#k14-drain-timeout-output), and the PDB/pod list of a namespace.
import { describe, expect, it } from 'vitest';
import { blockedPods, parseDrainFailure } from '../../../src/adapters/kube/parse/drainOutput.js';
import { parsePdbsAndPods } from '../../../src/adapters/kube/parse/pdbJson.js';
import { drainTimeoutStderr } from '../../fakes/drainText.js';

const PDB_TIMEOUT = drainTimeoutStderr({
  node: 'w-1',
  pending: 'default/web-1',
  timeout: '8s',
  refused: ['default/web-1', 'shop/db-0', 'default/web-1'],
});

describe('parseDrainFailure', () => {
  it('a PDB timeout: every pod a PDB refused, and the ones still pending when it gave up', () => {
    const p = parseDrainFailure(PDB_TIMEOUT);
    expect(p).toEqual({ refusedByPdb: ['default/web-1', 'shop/db-0'], pending: ['default/web-1'] });
    // db-0 was evicted in the end: only what was still pending blocked the drain
    expect(blockedPods(p)).toEqual(['default/web-1']);
  });

  it('a pod that never terminated', () => {
    const stderr =
      `There are pending pods in node "w-1" when an error occurred: [error when waiting for pod "cache-1" in namespace "default" to terminate: context deadline exceeded, error when waiting for pod "cache-2" in namespace "default" to terminate: context deadline exceeded]\n` +
      'pod/cache-1\npod/cache-2\n';
    expect(blockedPods(parseDrainFailure(stderr))).toEqual(['default/cache-1', 'default/cache-2']);
  });

  it('a drain killed before its final report: the pods a PDB refused', () => {
    expect(blockedPods(parseDrainFailure(PDB_TIMEOUT.split('\n').slice(0, 3).join('\n')))).toEqual(['default/web-1', 'shop/db-0']);
  });

  it('nothing named', () => {
    expect(blockedPods(parseDrainFailure('error: the server doesn\'t have a resource type "nodes"'))).toEqual([]);
  });
});

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
