// A dry-run eviction's end, as the drain forecast reads it (src/adapters/kube/parse/evictionAnswer.ts):
// exit code and stderr as the real kubectl prints them (the sim-kube test kubectl-eviction-dryrun.test.ts
// checks those texts against the real binary). The forecast's List is drainInputs.test.ts's.
import { describe, expect, it } from 'vitest';
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
