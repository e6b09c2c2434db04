// The run Lease deleted mid-roll: the node is left fenced (Talos was patched), and what the post
// step says about it is derived from how far the run got with it, never assumed: a node drained but
// never sent a reboot is not "being rebooted".
import { describe, expect, it } from 'vitest';
import type { HeldNode } from '../../src/core/model/phase.js';
import { presentPostReport } from '../../src/report/postStep.js';
import { choosePostAction } from '../../src/rules/postStep.js';
import { keys, makeCluster, roll } from './harness.js';

const LEASE = 'kube-system/registry-auth-rollout';

/** The roll of w1 with the run Lease deleted while its drain runs; the held node as last published, and the post step's text for it. */
async function leaseDeletedDuringDrain() {
  const c = makeCluster([{ name: 'w1' }]);
  c.kube.drainBody = async () => {
    c.kube.leases.delete(LEASE);
  };
  const published: HeldNode[][] = [];
  const res = await roll(c, {}, { publishHeld: (h) => published.push(h) });
  const held = published.at(-1)!.find((h) => h.node === 'w1')!;
  const now = c.kube.state('w1');
  const choice = choosePostAction(held, now, keys);
  const text = presentPostReport({
    kind: 'post',
    stateErrors: [],
    keys,
    kubectl: {},
    nodes: [{ held, choice, now }],
    leftClaimed: true,
  }).annotations.map((a) => a.message);
  return { c, res, held, choice, text: text.join('\n') };
}

describe('the run Lease deleted mid-roll: the explanation says what happened', () => {
  it('deleted while the drain ran: left fenced, drained, no reboot sent; the post step says so, not "being rebooted"', async () => {
    const { c, res, held, text } = await leaseDeletedDuringDrain();
    const r = res.records[0];
    expect(r.outcome).toBe('failed');
    expect(r.reason).toMatch(/the Lease was deleted/);
    expect(c.talos.mutatingCalls().filter((m) => m.startsWith('reboot'))).toEqual([]);
    // the phase it stopped in is the drain's (the reboot's Lease proof failed), the drain had finished
    expect(held).toMatchObject({ phase: 'left-fenced', stoppedIn: 'draining', drained: true });
    expect(text).not.toMatch(/being rebooted/);
    expect(text).toMatch(/because the run stopped after it was drained, before any reboot was sent/);
  });
});
