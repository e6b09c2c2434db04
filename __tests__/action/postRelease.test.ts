// The post step's releases ride out a passing failure too (the one writer, src/pipeline/write.ts): the run
// Lease answered 503 (an apiserver restarting) and a held node's release answered 500 ("etcdserver:
// request timed out") are tried again after a wait, a re-read deciding, and both end released. On
// the in-memory fakes and the virtual clock (the post step's kube and clock ports).
import { describe, expect, it } from 'vitest';
import { postMode } from '../../src/action/post.js';
import { saveAccess, saveHeld, saveLease, type StateStore } from '../../src/action/state.js';
import { ToolError } from '../../src/core/errors.js';
import type { JsonPatchOp } from '../../src/core/model/patch.js';
import { claimNode } from '../../src/pipeline/claim.js';
import { RunLock } from '../../src/pipeline/runLock.js';
import { keys, makeCluster, OWNER } from '../pipeline/harness.js';

const LEASE = ['kube-system', 'registry-auth-rollout'] as const;

function store(): StateStore {
  const m = new Map<string, string>();
  return { saveState: (k, v) => void m.set(k, v), getState: (k) => m.get(k) ?? '' };
}

const server = (stderr: string) => new ToolError({ tool: 'kubectl', command: 'kubectl patch', kind: 'server', exitCode: 1, stderr });

/** `method` fails with `error` for the first `times` calls whose ops `which` selects. */
function failFirst<K extends 'patchLease' | 'patchNode'>(
  c: ReturnType<typeof makeCluster>,
  method: K,
  which: (ops: JsonPatchOp[]) => boolean,
  times: number,
  error: ToolError,
): number[] {
  const orig = (c.kube[method] as (...a: unknown[]) => Promise<unknown>).bind(c.kube);
  const at: number[] = [];
  (c.kube as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
    const ops = args.at(-1) as JsonPatchOp[];
    if (which(ops)) {
      at.push(c.clock.now());
      if (at.length <= times) throw error;
    }
    return orig(...args);
  };
  return at;
}

describe('post step: releases that fail for a reason that passes are tried again', () => {
  it('the Lease answered 503 twice, a claimed node answered 500 once: both released after waits, the step succeeds', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const lock = new RunLock({ kube: c.kube, namespace: LEASE[0], name: LEASE[1], owner: OWNER, clock: c.clock });
    await lock.acquire();
    const { capture } = await claimNode(
      { kube: c.kube, keys, owner: OWNER, config: { claimAttempts: 1 } },
      await c.kube.getNode('w1'),
      c.clock,
    );
    const state = store();
    saveAccess(state, { annotationPrefix: 'registry-auth-rollout' });
    saveLease(state, { namespace: LEASE[0], name: LEASE[1], owner: OWNER });
    saveHeld(state, [{ node: 'w1', phase: 'claimed', capture, owner: OWNER }]);

    const leaseTries = failFirst(
      c,
      'patchLease',
      (ops) => ops.some((o) => o.op === 'remove' && o.path === '/spec/holderIdentity'),
      2,
      server('Error from server (ServiceUnavailable): apiserver is shutting down'),
    );
    const nodeTries = failFirst(
      c,
      'patchNode',
      (ops) => ops.some((o) => o.op === 'remove' && o.path.endsWith('~1owner')),
      1,
      server('Error from server: etcdserver: request timed out'),
    );
    const lines: string[] = [];
    const report = await postMode({ state, log: (l) => lines.push(l), kube: () => c.kube, clock: c.clock });

    expect(report.error).toBeUndefined();
    expect(report.nodes[0].releaseError).toBeUndefined();
    expect(report.lease).toEqual({ namespace: LEASE[0], name: LEASE[1], outcome: 'released' });
    expect((await c.kube.getLease(...LEASE))?.holderIdentity).toBeFalsy();
    expect(c.kube.state('w1').annotations[keys.owner]).toBeUndefined();
    expect(c.kube.state('w1').unschedulable).toBe(false);
    expect(leaseTries).toHaveLength(3);
    expect(nodeTries).toHaveLength(2);
    // each try after a wait (backoff), not at once
    expect(leaseTries[1] - leaseTries[0]).toBeGreaterThanOrEqual(500);
    expect(nodeTries[1] - nodeTries[0]).toBeGreaterThanOrEqual(500);
    expect(lines.join('\n')).toMatch(/trying again in/);
  });
});
