// `undrainable: quarantine` through the whole pipeline on the in-memory fakes: a drain that times out
// quarantines its node (cordoned, not rebooted, claim given up, annotation written) and the roll goes
// on; other drain failures keep their handling; a rerun rolls the node and lifts the quarantine.
import { describe, expect, it } from 'vitest';
import { DrainTimeoutError, ToolError } from '../../src/core/errors.js';
import { parseQuarantine } from '../../src/rules/quarantine.js';
import { CapacityStopError, QuarantinedNodesError } from '../../src/pipeline/errors.js';
import { keys, makeCluster, OWNER, roll, verifiedRev } from './harness.js';
import { drainTimeoutStderr } from '../fakes/drainText.js';

// kubectl drain's own words when its --timeout ran out against a PDB (docs/kubernetes-facts.md#k14-drain-timeout-output)
const STDERR = drainTimeoutStderr({ node: 'w2', pending: 'shop/web-1', timeout: '1m0s' });

// as the kube adapter classifies it (src/adapters/kube/kubectl.ts): the pods its output names, carried by the error
const timeout = (node: string) =>
  new DrainTimeoutError({
    tool: 'kubectl',
    command: `kubectl drain ${node}`,
    kind: 'timeout',
    exitCode: 1,
    stderr: STDERR,
    node,
    blockedPods: ['shop/web-1'],
  });

function blockedCluster(opts: { w2Cordoned?: boolean } = {}) {
  const c = makeCluster([{ name: 'w1' }, { name: 'w2', unschedulable: opts.w2Cordoned }, { name: 'w3' }]);
  let blocked = true;
  c.kube.drainErrorFor = (name) => (name === 'w2' && blocked ? timeout(name) : undefined);
  c.kube.disruptionBudgets.set('shop', {
    pdbs: [
      {
        namespace: 'shop',
        name: 'web-pdb',
        selector: { matchLabels: { app: 'web' } },
        status: { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 },
      },
      {
        namespace: 'shop',
        name: 'db-pdb',
        selector: { matchLabels: { app: 'db' } },
        status: { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1 },
      },
    ],
    pods: [
      { namespace: 'shop', name: 'web-1', labels: { app: 'web' } },
      { namespace: 'shop', name: 'db-0', labels: { app: 'db' } },
    ],
  });
  return { c, unblock: () => (blocked = false) };
}

describe('undrainable: quarantine', () => {
  it('quarantines the node whose drain timed out, rolls the others, and fails the run naming it', async () => {
    const { c } = blockedCluster();
    // max-unavailable 2: the quarantined node holds one of the two
    const res = await roll(c, { undrainable: 'quarantine', maxUnavailable: { count: 2 } });

    expect(res.records.map((r) => [r.node, r.outcome])).toEqual([
      ['w1', 'rebooted'],
      ['w2', 'quarantined'],
      ['w3', 'rebooted'],
    ]);
    expect(res.notReached).toEqual([]);
    // not rebooted: only w1 and w3 were
    expect(c.talos.mutatingCalls().filter((m) => m.startsWith('reboot'))).toEqual(['reboot 10.0.0.10', 'reboot 10.0.0.12']);

    const w2 = c.kube.state('w2');
    expect(w2.unschedulable).toBe(true);
    expect(w2.annotations[keys.owner]).toBeUndefined();
    expect(w2.annotations[keys.phase]).toBeUndefined();
    expect(w2.annotations[keys.wasCordoned]).toBeUndefined();
    expect(verifiedRev(w2)).toBeUndefined();
    const parsed = parseQuarantine(w2.annotations[keys.quarantined]);
    expect(parsed).toMatchObject({
      ok: true,
      record: {
        reason: 'drain-timeout',
        drainTimeout: '1m0s',
        run: OWNER,
        wasCordoned: false,
        blockedBy: [{ pdb: 'shop/web-pdb', status: { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 }, pods: ['shop/web-1'] }],
      },
    });

    const rec = res.records[1];
    expect(rec.reason).toContain('PodDisruptionBudget shop/web-pdb');
    expect(rec.reason).toContain('OLD credential');
    expect(rec.quarantine?.lift).toContain('let PodDisruptionBudget shop/web-pdb allow the eviction, then rerun');
    expect(rec.quarantine?.byHand).toContain('patch node w2 --type=json');

    expect(res.result).toBe('failed');
    expect(res.error).toBeInstanceOf(QuarantinedNodesError);
    expect(res.error!.message).toContain('1 node(s) quarantined');
    expect(res.error!.message).toContain('- w2: drain timed out after 1m0s, blocked by PodDisruptionBudget shop/web-pdb');
    expect(res.error!.message).toContain('patch node w2');
    // one read of the namespace's PDBs and pods, only for the quarantine
    expect(c.kube.calls.filter((x) => x.method === 'listDisruptionBudgets')).toEqual([{ method: 'listDisruptionBudgets', name: 'shop' }]);
    // no claim is left: the Lease went back
    expect((await c.kube.getLease('kube-system', 'registry-auth-rollout'))?.holderIdentity ?? '').toBe('');
  });

  it('stop (the default) keeps today’s behaviour: released, uncordoned, the roll stops', async () => {
    const { c } = blockedCluster();
    const res = await roll(c);
    expect(res.records.map((r) => [r.node, r.outcome])).toEqual([
      ['w1', 'rebooted'],
      ['w2', 'failed'],
    ]);
    expect(res.notReached).toEqual(['w3']);
    expect(c.kube.state('w2').unschedulable).toBe(false);
    expect(c.kube.state('w2').annotations[keys.quarantined]).toBeUndefined();
    expect(c.kube.calls.some((x) => x.method === 'listDisruptionBudgets')).toBe(false);
  });

  it('a drain failure that is not a timeout is released as before, even with quarantine', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2' }]);
    c.kube.drainErrorFor = (name) =>
      name === 'w1'
        ? new ToolError({
            tool: 'kubectl',
            command: 'kubectl drain w1',
            kind: 'unknown',
            exitCode: 1,
            stderr:
              'error: unable to drain node "w1" due to error: [cannot delete Pods that declare no controller (use --force to override): default/bare], continuing command...',
          })
        : undefined;
    const res = await roll(c, { undrainable: 'quarantine' });
    expect(res.records[0].outcome).toBe('failed');
    expect(c.kube.state('w1').unschedulable).toBe(false);
    expect(c.kube.state('w1').annotations[keys.quarantined]).toBeUndefined();
    expect(res.notReached).toEqual(['w2']);
  });

  it('a rerun after the PDB allows it rolls the node, restores its schedulability and lifts the quarantine in the release', async () => {
    const { c, unblock } = blockedCluster();
    await roll(c, { undrainable: 'quarantine', maxUnavailable: { count: 2 } });
    unblock();
    const again = await roll(c, { undrainable: 'quarantine' });
    expect(again.result).toBe('processed');
    expect(again.records.map((r) => [r.node, r.outcome])).toEqual([['w2', 'rebooted']]);
    const w2 = c.kube.state('w2');
    expect(w2.unschedulable).toBe(false);
    expect(w2.annotations[keys.quarantined]).toBeUndefined();
    expect(verifiedRev(w2)).toBe('rev-2');
    // the claim wrote was-cordoned from the quarantine's record, not from the cordon it found
    const claim = c.kube.calls.filter(
      (x) =>
        x.method === 'patchNode' &&
        x.name === 'w2' &&
        x.ops?.some((o) => o.path === '/spec/unschedulable' && 'value' in o && o.value === true && o.op === 'add'),
    );
    expect(claim.at(-1)!.ops).toContainEqual({
      op: 'add',
      path: '/metadata/annotations/registry-auth-rollout~1was-cordoned',
      value: 'false',
    });
  });

  it('a node an operator cordoned before the first run stays cordoned once its quarantine is lifted', async () => {
    const { c, unblock } = blockedCluster({ w2Cordoned: true });
    await roll(c, { undrainable: 'quarantine', maxUnavailable: { count: 2 } });
    expect(parseQuarantine(c.kube.state('w2').annotations[keys.quarantined])).toMatchObject({ ok: true, record: { wasCordoned: true } });
    unblock();
    const again = await roll(c, { undrainable: 'quarantine' });
    expect(again.result).toBe('processed');
    const w2 = c.kube.state('w2');
    expect(w2.unschedulable).toBe(true);
    expect(w2.annotations[keys.quarantined]).toBeUndefined();
  });

  it('quarantined again by a rerun, the node keeps the wasCordoned of its first quarantine', async () => {
    const { c, unblock } = blockedCluster();
    await roll(c, { undrainable: 'quarantine', maxUnavailable: { count: 2 } });
    const first = parseQuarantine(c.kube.state('w2').annotations[keys.quarantined]);
    const again = await roll(c, { undrainable: 'quarantine' });
    expect(again.records.map((r) => [r.node, r.outcome])).toEqual([['w2', 'quarantined']]);
    const second = parseQuarantine(c.kube.state('w2').annotations[keys.quarantined]);
    expect(first).toMatchObject({ ok: true, record: { wasCordoned: false } });
    expect(second).toMatchObject({ ok: true, record: { wasCordoned: false } });
    unblock();
    await roll(c, { undrainable: 'quarantine' });
    expect(c.kube.state('w2').unschedulable).toBe(false);
  });

  it('a stop-mode rerun whose drain fails again gives the node back still quarantined and cordoned', async () => {
    const { c } = blockedCluster();
    await roll(c, { undrainable: 'quarantine', maxUnavailable: { count: 2 } });
    const text = c.kube.state('w2').annotations[keys.quarantined];
    const again = await roll(c);
    expect(again.records.map((r) => [r.node, r.outcome])).toEqual([['w2', 'failed']]);
    const w2 = c.kube.state('w2');
    expect(w2.unschedulable).toBe(true);
    expect(w2.annotations[keys.quarantined]).toBe(text);
    expect(w2.annotations[keys.owner]).toBeUndefined();
  });

  it('when the quarantine patch cannot land, the node is left fenced (claimed, cordoned), never uncordoned, and fails', async () => {
    const { c } = blockedCluster();
    const orig = c.kube.patchNode.bind(c.kube);
    c.kube.patchNode = async (name, ops) => {
      if (ops.some((o) => o.path.endsWith('quarantined') && o.op === 'add'))
        c.kube.mutate(name, (o) => (o.metadata.annotations['registry-auth-rollout/owner'] = 'someone-else'));
      return orig(name, ops);
    };
    const res = await roll(c, { undrainable: 'quarantine' });
    expect(res.records[1]).toMatchObject({ node: 'w2', outcome: 'failed' });
    expect(res.records[1].reason).toContain('quarantining it failed');
    expect(res.notReached).toEqual(['w3']);
    expect(c.kube.state('w2').unschedulable).toBe(true);
  });
});

describe('a quarantined node is capacity out of service', () => {
  /** `n` workers, each running a pod whose PodDisruptionBudget never allows an eviction: every drain times out. */
  function allBlocked(n: number) {
    const c = makeCluster(Array.from({ length: n }, (_, i) => ({ name: `w${i + 1}` })));
    c.kube.drainErrorFor = (name) => timeout(name);
    return c;
  }
  const cordoned = (c: ReturnType<typeof makeCluster>) => [...c.kube.nodes.keys()].filter((n) => c.kube.state(n).unschedulable);

  it('four workers every drain of which times out, max-unavailable 1: one is quarantined, the run fails naming it, the others are not started', async () => {
    const c = allBlocked(4);
    const res = await roll(c, { undrainable: 'quarantine' });
    expect(res.records.map((r) => [r.node, r.outcome])).toEqual([['w1', 'quarantined']]);
    expect(cordoned(c)).toEqual(['w1']);
    expect(res.notReached).toEqual(['w2', 'w3', 'w4']);
    expect(res.result).toBe('failed');
    expect(res.error).toBeInstanceOf(QuarantinedNodesError);
    const other = (res.error as QuarantinedNodesError).other;
    expect(other).toBeInstanceOf(CapacityStopError);
    expect(res.error!.message).toContain('the roll stopped with 3 node(s) not started (w2, w3, w4)');
    expect(res.error!.message).toContain('count toward max-unavailable (1)');
    expect(res.error!.message).toContain('Quarantined: w1 (quarantined by this run)');
    expect(res.error!.message).toContain('w2: 1 worker out (quarantined: w1), max-unavailable is 1');
    expect(res.error!.message).toContain('1 node(s) quarantined');
    // no claim is left, and the Lease went back
    expect((await c.kube.getLease('kube-system', 'registry-auth-rollout'))?.holderIdentity ?? '').toBe('');
  });

  it('max-unavailable 2: never more than two out at once, quarantined ones included', async () => {
    const c = allBlocked(4);
    const res = await roll(c, { undrainable: 'quarantine', maxUnavailable: { count: 2 } });
    expect(res.records.map((r) => r.outcome)).toEqual(['quarantined', 'quarantined']);
    expect(cordoned(c).sort()).toEqual(['w1', 'w2']);
    expect(res.notReached).toEqual(['w3', 'w4']);
    expect(res.error!.message).toContain('Quarantined: w1 (quarantined by this run), w2 (quarantined by this run)');
  });

  it("an earlier run's quarantined node outside the selection counts too: nothing starts, the run fails naming it", async () => {
    const c = allBlocked(3);
    await roll(c, { undrainable: 'quarantine', nodes: ['w3'] });
    expect(cordoned(c)).toEqual(['w3']);
    c.kube.drainErrorFor = () => undefined;
    const res = await roll(c, { undrainable: 'quarantine', nodes: ['w1', 'w2'] });
    expect(res.records).toEqual([]);
    expect(res.result).toBe('failed');
    expect(res.notReached).toEqual(['w1', 'w2']);
    expect(res.error).toBeInstanceOf(CapacityStopError);
    expect(res.error!.message).toMatch(/Quarantined: w3 \(quarantined since \d{4}-\d\d-\d\dT[^ ]+ by acme\/infra\/runs\/42/);
    expect(c.kube.mutatingCalls().filter((m) => m.startsWith('patchNode w1') || m.startsWith('patchNode w2'))).toEqual([]);
  });

  it('a quarantined node selected again starts first and, once lifted, frees its slot for the others', async () => {
    const c = allBlocked(3);
    await roll(c, { undrainable: 'quarantine', nodes: ['w3'] });
    c.kube.drainErrorFor = () => undefined;
    const res = await roll(c, { undrainable: 'quarantine' });
    expect(res.result, res.error?.message).toBe('processed');
    expect(res.records.map((r) => [r.node, r.outcome])).toEqual([
      ['w3', 'rebooted'],
      ['w1', 'rebooted'],
      ['w2', 'rebooted'],
    ]);
    expect(cordoned(c)).toEqual([]);
  });

  it("with a topology key, a quarantined node's zone is out: the other zone's workers do not start", async () => {
    const c = makeCluster([
      { name: 'a1', labels: { zone: 'a' } },
      { name: 'a2', labels: { zone: 'a' } },
      { name: 'b1', labels: { zone: 'b' } },
    ]);
    c.kube.drainErrorFor = (name) => (name === 'a1' ? timeout(name) : undefined);
    const res = await roll(c, { undrainable: 'quarantine', maxUnavailable: { count: 3 }, topologyKey: 'zone' });
    expect(res.records.map((r) => [r.node, r.outcome])).toEqual([
      ['a1', 'quarantined'],
      ['a2', 'rebooted'],
    ]);
    expect(res.notReached).toEqual(['b1']);
    expect(res.error!.message).toContain('b1: zone=b waits while zone=a is out (quarantined: a1)');
  });
});
