// The run's passes over the inventory (src/pipeline/run.ts), on the in-memory fakes: a later pass that
// finds the inventory unsafe, or a cancellation while the run lists the nodes again, keeps the report of
// the work already done complete and true (safety defects 3 and 9 of the acceptance testing).
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/errors.js';
import { keys, makeCluster, OWNER, roll } from './harness.js';

const LEASE = ['kube-system', 'registry-auth-rollout'] as const;

const forbidden = (what: string) =>
  new ToolError({ tool: 'kubectl', command: what, kind: 'forbidden', exitCode: 1, stderr: 'Error from server (Forbidden)' });

const isReleasePatch = (ops: { op: string; path: string }[]) => ops.some((o) => o.op === 'remove' && o.path.endsWith('owner'));

describe('a later pass that finds the inventory unsafe keeps the report complete and true', () => {
  it('two nodes sharing an InternalIP at the re-listing: the rolled node stays in the result, nothing claims "nothing was changed"', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2', current: true }]);
    c.kube.drain = async (name) => {
      c.kube.calls.push({ method: 'drain', name });
      // a node registers with w2's address while w1 is drained
      c.kube.addNode({ name: 'w9', ip: '10.0.0.11' });
    };
    const res = await roll(c);
    expect(res.result).toBe('failed');
    expect(res.records.map((r) => [r.node, r.outcome])).toEqual([
      ['w1', 'rebooted'],
      ['w2', 'reboot-skipped'],
    ]);
    expect(res.error?.message).toMatch(/10\.0\.0\.11/);
    expect(res.error?.message).not.toMatch(/nothing was changed/i);
    expect(res.error?.message).toMatch(/2 node\(s\) were already processed/);
  });

  it('a failed release after a failed credential patch never says nothing on Talos was changed', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.talos.patchFails = 'rpc error: code = Unavailable';
    const orig = c.kube.patchNode.bind(c.kube);
    c.kube.patchNode = async (name, ops) => {
      if (isReleasePatch(ops)) throw forbidden(`kubectl patch node ${name}`);
      return orig(name, ops);
    };
    const res = await roll(c);
    expect(res.result).toBe('failed');
    const r = res.records[0];
    expect(r.outcome).toBe('failed');
    expect(`${r.reason} ${r.nextStep}`).not.toMatch(/nothing on Talos was changed/i);
    expect(r.reason).toMatch(/credential patch/);
    expect(r.reason).toMatch(/releas/);
    expect(r.nextStep).toMatch(/patch node w1 --type=json/);
    // the claim is still on the node: the Lease stays held so nobody starts over it
    expect(c.kube.state('w1').annotations[keys.owner]).toBe(OWNER);
    expect((await c.kube.getLease(...LEASE))?.holderIdentity).toBe(OWNER);
  });
});

describe('a cancellation late in the run keeps the report of finished work', () => {
  it('cancelled while the run lists the nodes again at the end: every rolled node is in the result', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2', current: true }]);
    let cancelled = false;
    let lists = 0;
    const orig = c.kube.listNodes.bind(c.kube);
    c.kube.listNodes = async () => {
      if (++lists === 2) {
        // the runner's signal kills the running `kubectl get nodes`
        cancelled = true;
        throw new ToolError({
          tool: 'kubectl',
          command: 'kubectl get nodes',
          kind: 'unknown',
          exitCode: null,
          stderr: 'signal: terminated',
        });
      }
      return orig();
    };
    const res = await roll(c, {}, { cancelled: () => cancelled });
    expect(res.result).toBe('failed');
    expect(res.records.map((r) => [r.node, r.outcome])).toEqual([
      ['w1', 'rebooted'],
      ['w2', 'reboot-skipped'],
    ]);
    expect(res.error?.message).toMatch(/cancel/);
    // finished work is kept and the Lease is given back (no node is held)
    expect((await c.kube.getLease(...LEASE))?.holderIdentity).toBe('');
  });
});
