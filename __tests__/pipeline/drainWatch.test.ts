// The claim must hold for as long as the drain evicts: one watch of the node runs beside the drain,
// and the moment the node stops being ours (owner, cordon, uid) the drain is ended and the node is
// left as the other actor set it, reported as the guard reports it. Kubernetes' own controllers
// (the condition taints) are no other actor, beside the drain or in the guards around it.
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/errors.js';
import { keys, makeCluster, roll, verifiedRev } from './harness.js';

const OTHER = 'acme/infra/runs/43/attempts/1/bbbb';

/**
 * A drain that evicts `first`, lets another actor act, then takes a while before it evicts `rest`;
 * it stops evicting once it was ended (kubectl killed), as the real process does.
 */
function slowDrain(c: ReturnType<typeof makeCluster>, otherActor: () => void) {
  const evicted: string[] = [];
  const asSet: { node?: unknown } = {};
  c.kube.drainBody = async (_name, signal) => {
    evicted.push('first');
    otherActor();
    asSet.node = structuredClone(c.kube.nodes.get('w1'));
    for (let i = 0; i < 50 && !signal.aborted; i++) await new Promise((r) => setImmediate(r));
    if (!signal.aborted) evicted.push('rest');
  };
  return Object.assign(evicted, { asSet });
}

describe('the drain is ended the moment the claim is lost', () => {
  const cases: Array<[string, (c: ReturnType<typeof makeCluster>) => void, RegExp]> = [
    [
      'another actor replaces the owner annotation',
      (c) => c.kube.mutate('w1', (o) => (o.metadata.annotations[keys.owner] = OTHER)),
      /is held by/,
    ],
    ['another actor uncordons the node', (c) => c.kube.mutate('w1', (o) => (o.spec.unschedulable = false)), /uncordoned/],
    ['the node is re-created with a new uid', (c) => c.kube.replace('w1'), /uid changed/],
    ['the node is deleted', (c) => c.kube.remove('w1'), /w1 was deleted/],
  ];
  for (const [what, act, reason] of cases) {
    it(`${what}: no eviction after it, the node is left as set, no reboot, reported like the guard`, async () => {
      const c = makeCluster([{ name: 'w1' }]);
      const evicted = slowDrain(c, () => act(c));
      const res = await roll(c);
      expect([...evicted]).toEqual(['first']);
      const r = res.records[0];
      expect(r.outcome).toBe('failed');
      expect(r.reason).toMatch(/^guard failed during the drain \(the drain was ended at once\): /);
      expect(r.reason).toMatch(reason);
      expect(r.nextStep).toMatch(/left exactly as they set it/);
      expect(c.talos.mutatingCalls().filter((m) => m.startsWith('reboot'))).toEqual([]);
      expect(c.kube.watchCount).toBe(1);
      // left as set: nothing written to the node after the other actor's write
      expect(c.kube.nodes.get('w1')).toEqual(evicted.asSet.node);
    });
  }

  it('writes that keep the claim (a heartbeat, a label) do not end the drain', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const evicted = slowDrain(c, () => {
      c.kube.mutate('w1', (o) => (o.metadata.labels['team'] = 'x'));
      c.kube.mutate('w1', (o) => (o.status.conditions[0].lastHeartbeatTime = '2026-11-30T10:00:01Z'));
    });
    const res = await roll(c);
    expect([...evicted]).toEqual(['first', 'rest']);
    expect(res.records[0].outcome).toBe('rebooted');
  });

  it('a change written between the guard and the drain start is seen (the watch starts at the guard read)', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const evicted: string[] = [];
    const drain = c.kube.drain.bind(c.kube);
    c.kube.drain = async (name, ms, signal) => {
      c.kube.mutate('w1', (o) => (o.metadata.annotations[keys.owner] = OTHER));
      return drain(name, ms, signal);
    };
    c.kube.drainBody = async (_n, signal) => {
      for (let i = 0; i < 50 && !signal.aborted; i++) await new Promise((r) => setImmediate(r));
      if (!signal.aborted) evicted.push('all');
    };
    const res = await roll(c);
    expect(evicted).toEqual([]);
    expect(res.records[0].reason).toMatch(/guard failed during the drain/);
  });

  it('a watch that cannot be kept ends the drain; a guard read that still shows the claim fails the node and releases it', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.kube.watchError = new ToolError({
      tool: 'kubectl',
      command: 'kubectl get --raw /api/v1/nodes?watch=true',
      kind: 'forbidden',
      exitCode: 1,
      stderr: 'Error from server (Forbidden): nodes is forbidden: cannot watch',
    });
    const evicted = slowDrain(c, () => undefined);
    const res = await roll(c);
    expect([...evicted]).toEqual(['first']);
    const r = res.records[0];
    expect(r.outcome).toBe('failed');
    expect(r.reason).toMatch(/drain failed: it was ended because the node could not be watched: .*Forbidden/);
    expect(r.nextStep).toMatch(/could not be watched/);
    expect(c.talos.mutatingCalls().filter((m) => m.startsWith('reboot'))).toEqual([]);
    const s = c.kube.state('w1');
    expect(s.annotations[keys.owner]).toBeUndefined();
    expect(s.unschedulable).toBe(false);
  });
});

describe('the node lifecycle controller is no other actor', () => {
  const taint = (key: string, effect: 'NoSchedule' | 'NoExecute') => ({ key, effect, timeAdded: '2026-11-30T10:00:00Z' });
  const conditionTaints: Array<[string, Array<ReturnType<typeof taint>>]> = [
    [
      'a network blip: unreachable NoSchedule and NoExecute',
      [taint('node.kubernetes.io/unreachable', 'NoSchedule'), taint('node.kubernetes.io/unreachable', 'NoExecute')],
    ],
    [
      'the kubelet reports NotReady',
      [taint('node.kubernetes.io/not-ready', 'NoSchedule'), taint('node.kubernetes.io/not-ready', 'NoExecute')],
    ],
    ['memory pressure', [taint('node.kubernetes.io/memory-pressure', 'NoSchedule')]],
    ['disk pressure', [taint('node.kubernetes.io/disk-pressure', 'NoSchedule')]],
    ['pid pressure', [taint('node.kubernetes.io/pid-pressure', 'NoSchedule')]],
    ['the network plugin reports NetworkUnavailable', [taint('node.kubernetes.io/network-unavailable', 'NoSchedule')]],
    [
      'the Cilium agent restarts (agent-not-ready, the Ready wait tolerates it too)',
      [taint('node.cilium.io/agent-not-ready', 'NoSchedule')],
    ],
  ];
  for (const [what, taints] of conditionTaints) {
    it(`${what}, added and removed again during the drain: the drain goes on and the node is rolled`, async () => {
      const c = makeCluster([{ name: 'w1' }]);
      const evicted = slowDrain(c, () => {
        c.kube.mutate('w1', (o) => (o.spec.taints = [...(o.spec.taints ?? []), ...taints]));
        // the condition clears a moment later: the controller removes what it added
        setImmediate(() =>
          c.kube.mutate(
            'w1',
            (o) => (o.spec.taints = (o.spec.taints ?? []).filter((t: { key: string }) => !taints.some((x) => x.key === t.key))),
          ),
        );
      });
      const res = await roll(c);
      expect([...evicted]).toEqual(['first', 'rest']);
      expect(res.records[0].outcome, res.records[0].reason).toBe('rebooted');
    });
  }

  // Kubernetes' observation, not a foreign write: the guard after the drain goes on while Talos answers
  const unreachable = [taint('node.kubernetes.io/unreachable', 'NoSchedule'), taint('node.kubernetes.io/unreachable', 'NoExecute')];
  /** the kubelet reports again once the machine booted: the controller lifts what it added */
  const liftOnReboot = (c: ReturnType<typeof makeCluster>) => {
    const hook = c.talos.rebootHook!;
    c.talos.rebootHook = (t) => {
      hook(t);
      c.kube.mutate(
        t.name,
        (o) => (o.spec.taints = (o.spec.taints ?? []).filter((x: { key: string }) => x.key !== 'node.kubernetes.io/unreachable')),
      );
    };
  };

  it('an unreachable blip still on when the drain ends: Talos answers, so the node is rebooted, proven and released', async () => {
    const renewals = (c: ReturnType<typeof makeCluster>) => c.kube.calls.filter((x) => x.method === 'patchLease').length;
    const plain = makeCluster([{ name: 'w1' }]);
    slowDrain(plain, () => undefined);
    await roll(plain);
    const c = makeCluster([{ name: 'w1' }]);
    liftOnReboot(c);
    const evicted = slowDrain(c, () => c.kube.mutate('w1', (o) => (o.spec.taints = [...(o.spec.taints ?? []), ...unreachable])));
    const res = await roll(c);
    expect([...evicted]).toEqual(['first', 'rest']);
    const r = res.records[0];
    expect(r.outcome, r.reason).toBe('rebooted');
    const asked = r.steps.find((s) => s.name === 'ask the Talos API (Kubernetes cannot reach the node)');
    expect(asked).toMatchObject({
      ok: true,
      detail: expect.stringMatching(/^Talos v1\.13\.8 answers; going on \(Kubernetes marks it node\.kubernetes\.io\/unreachable/),
    });
    expect(c.talos.mutatingCalls().filter((m) => m.startsWith('reboot'))).toHaveLength(1);
    const s = c.kube.state('w1');
    expect(s.annotations[keys.owner]).toBeUndefined();
    expect(verifiedRev(s)).toBe('rev-2');
    // the guard read is no Lease proof for the reboot once Talos was asked after it: one renewal more
    expect(renewals(c)).toBe(renewals(plain) + 1);
  });

  it('unreachable and the Talos API does not answer either: failed as a failed drain fails, released, never "left as they set it"', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const evicted = slowDrain(c, () => c.kube.mutate('w1', (o) => (o.spec.taints = [...(o.spec.taints ?? []), ...unreachable])));
    const version = c.talos.version.bind(c.talos);
    let down = false;
    c.talos.version = async (addresses) =>
      down
        ? new Map(addresses.map((a) => [a, { ok: false as const, error: `${a}: rpc error: code = Unavailable desc = connection refused` }]))
        : version(addresses);
    c.kube.drainBody = ((body) => async (name, signal) => {
      await body!(name, signal);
      down = true; // the machine went away with the drain
    })(c.kube.drainBody);
    const res = await roll(c);
    expect([...evicted]).toEqual(['first', 'rest']);
    const r = res.records[0];
    expect(r.outcome).toBe('failed');
    expect(r.reason).toMatch(
      /^w1 cannot be reached after drain: Kubernetes marks it node\.kubernetes\.io\/unreachable .*, and the Talos API does not answer either: .*connection refused/,
    );
    expect(r.nextStep).toMatch(
      /^The node was released .* and was not rebooted\. Neither Kubernetes nor the Talos API at 10\.0\.0\.10 reaches it/,
    );
    expect(r.nextStep).not.toMatch(/left exactly as they set it/);
    expect(c.talos.mutatingCalls().filter((m) => m.startsWith('reboot'))).toEqual([]);
    const s = c.kube.state('w1');
    expect(s.annotations[keys.owner]).toBeUndefined();
    expect(s.unschedulable).toBe(false);
    // released, so the run keeps no Lease for it
    expect(c.kube.leases.get('kube-system/registry-auth-rollout')?.spec?.holderIdentity ?? '').toBe('');
  });

  it('a worker claimed under memory pressure, relieved by its own drain (the taint lifted): rebooted, proven, released', async () => {
    const c = makeCluster([{ name: 'w1', taints: [taint('node.kubernetes.io/memory-pressure', 'NoSchedule')] }]);
    const evicted = slowDrain(c, () =>
      c.kube.mutate(
        'w1',
        (o) => (o.spec.taints = (o.spec.taints ?? []).filter((t: { key: string }) => t.key !== 'node.kubernetes.io/memory-pressure')),
      ),
    );
    const res = await roll(c);
    expect([...evicted]).toEqual(['first', 'rest']);
    const r = res.records[0];
    expect(r.outcome, r.reason).toBe('rebooted');
    expect(verifiedRev(c.kube.state('w1'))).toBe('rev-2');
    expect(c.kube.state('w1').annotations[keys.owner]).toBeUndefined();
  });

  it('memory pressure reported between the read and the claim: the claim retries (a benign move), the node is rolled', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    let once = false;
    c.kube.beforePatch = (name) => {
      if (once) return;
      once = true; // the claim's exact `test` of spec.taints fails on it
      c.kube.mutate(name, (o) => (o.spec.taints = [...(o.spec.taints ?? []), taint('node.kubernetes.io/memory-pressure', 'NoSchedule')]));
    };
    const res = await roll(c);
    const r = res.records[0];
    expect(r.outcome, r.reason).toBe('rebooted');
    expect(r.claim).toEqual({ attempts: 2, conflicts: ['condition taint node.kubernetes.io/memory-pressure:NoSchedule appeared'] });
  });

  it('memory pressure lifted between the claim and the guard before the drain (the settle wait): no other actor', async () => {
    const c = makeCluster([{ name: 'w1', taints: [taint('node.kubernetes.io/memory-pressure', 'NoSchedule')] }]);
    const patch = c.kube.patchNode.bind(c.kube);
    let lifted = false;
    c.kube.patchNode = async (name, ops) => {
      const out = await patch(name, ops);
      if (!lifted) {
        lifted = true; // right after the claim landed
        c.kube.mutate(
          'w1',
          (o) => (o.spec.taints = (o.spec.taints ?? []).filter((t: { key: string }) => t.key !== 'node.kubernetes.io/memory-pressure')),
        );
      }
      return out;
    };
    const res = await roll(c);
    expect(res.records[0].outcome, res.records[0].reason).toBe('rebooted');
  });

  it('any other taint added during the drain still ends it at once', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const evicted = slowDrain(c, () =>
      c.kube.mutate('w1', (o) => (o.spec.taints = [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }])),
    );
    const res = await roll(c);
    expect([...evicted]).toEqual(['first']);
    expect(res.records[0].reason).toMatch(
      /^guard failed during the drain \(the drain was ended at once\): taint dedicated=batch:NoSchedule appeared/,
    );
  });
});
