// The drain forecast's two kubectl answers: the cluster-wide List of pods, DaemonSets and PDBs, and a
// dry-run eviction's end (exit code and stderr as the real kubectl prints them; the sim-kube test
// kubectl-eviction-dryrun.test.ts checks those texts against the real binary).
import { describe, expect, it } from 'vitest';
import { drainInputsFromList } from '../../../src/adapters/kube/parse/drainInputs.js';
import { evictionAnswer } from '../../../src/adapters/kube/parse/evictionAnswer.js';

describe('evictionAnswer', () => {
  it('exit 0: allowed', () => {
    expect(evictionAnswer({ exitCode: 0, stderr: '' })).toEqual({ kind: 'allowed' });
  });
  it("a 429: blocked, with the apiserver's message", () => {
    const stderr = "Error from server (TooManyRequests): Cannot evict pod as it would violate the pod's disruption budget.\n";
    expect(evictionAnswer({ exitCode: 1, stderr })).toEqual({
      kind: 'blocked',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
    });
  });
  it('NotFound: the pod is gone (drain counts it as evicted)', () => {
    expect(evictionAnswer({ exitCode: 1, stderr: 'Error from server (NotFound): pods "x" not found' })).toEqual({ kind: 'gone' });
  });
  it('anything else, or no answer in time: an error with the text', () => {
    const multi = 'Error from server: This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.';
    expect(evictionAnswer({ exitCode: 1, stderr: multi })).toEqual({ kind: 'error', message: multi });
    expect(evictionAnswer({ exitCode: null, stderr: '', timedOut: true })).toMatchObject({ kind: 'error' });
  });
});

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
