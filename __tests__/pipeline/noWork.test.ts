// What a run with nothing to roll asks for, and when the pre-flight check and the Talos client come
// (src/pipeline/run.ts): after the first listing, before the plan or the Lease, and in apply only when
// a node is selected to roll. A selection that selects nothing is an input error before either.
import { describe, expect, it } from 'vitest';
import { InputError, PreflightError } from '../../src/core/errors.js';
import type { PreflightSummary } from '../../src/core/model/preflight.js';
import type { RolloutDeps } from '../../src/pipeline/context.js';
import { keys, makeCluster, roll } from './harness.js';

const verified = { [keys.verifiedRevision]: 'rev-2' };
const CHECKED: PreflightSummary = { ran: true, lines: ['pre-flight: ghcr.io token flow + manifest HEAD of org/app:1: ok'] };

/** The run's two late ports on the fakes, each recording when it was called and what the cluster held then. */
function latePorts(c: ReturnType<typeof makeCluster>, preflight: () => Promise<PreflightSummary> = async () => CHECKED) {
  const seen: string[] = [];
  const leaseAt = () => (c.kube.leases.size > 0 ? 'with a Lease' : 'no Lease');
  const deps: Partial<RolloutDeps> = {
    talos: undefined,
    preflight: () => {
      seen.push(`preflight (${leaseAt()}, ${c.talos.calls.length} Talos calls)`);
      return preflight();
    },
    openTalos: async () => {
      seen.push(`openTalos (${leaseAt()})`);
      return { client: c.talos, describe: 'reading Talos through the fakes' };
    },
  };
  return { deps, seen };
}

describe('a run with nothing to roll needs only the cluster reads', () => {
  it('apply, every node verified: clean; no pre-flight, no Talos client, no Lease, no write', async () => {
    const c = makeCluster([
      { name: 'w1', annotations: verified },
      { name: 'cp1', role: 'control-plane', annotations: verified },
    ]);
    const late = latePorts(c);
    const res = await roll(c, {}, late.deps);
    expect(res.result).toBe('clean');
    expect(res.upToDate).toEqual(['cp1', 'w1']);
    expect(late.seen).toEqual([]);
    expect(res.preflight).toBeUndefined();
    expect(res.talosReads).toBeUndefined();
    expect(c.kube.mutatingCalls()).toEqual([]);
    expect(c.kube.leases.size).toBe(0);
    expect(c.talos.calls).toEqual([]);
  });

  it('apply with a node to roll: the pre-flight check, then the Talos client, both before the Lease; the result carries both', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2', annotations: verified }]);
    const late = latePorts(c);
    const res = await roll(c, {}, late.deps);
    expect(res.result, res.error?.message).toBe('processed');
    expect(late.seen).toEqual(['preflight (no Lease, 0 Talos calls)', 'openTalos (no Lease)']);
    expect(res.preflight).toEqual(CHECKED);
    expect(res.talosReads).toBe('reading Talos through the fakes');
    expect(res.records.map((r) => r.node)).toEqual(['w1']);
  });

  it('a refused credential stops the run after the listing: no Talos client opened, no Lease, nothing written', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    const refused = new PreflightError({
      host: 'ghcr.io',
      verdict: 'refused',
      asked: 'GET https://ghcr.io/token',
      answered: '401 Unauthorized',
    });
    const late = latePorts(c, () => Promise.reject(refused));
    await expect(roll(c, {}, late.deps)).rejects.toBe(refused);
    expect(late.seen).toEqual(['preflight (no Lease, 0 Talos calls)']);
    expect(c.kube.mutatingCalls()).toEqual([]);
    expect(c.kube.leases.size).toBe(0);
  });

  it('plan, every node verified: the pre-flight check still runs and is reported (a refused credential is what a plan predicts); no Talos client', async () => {
    const c = makeCluster([{ name: 'w1', annotations: verified }]);
    const late = latePorts(c);
    const res = await roll(c, { mode: 'plan' }, late.deps);
    expect(res.result).toBe('clean');
    expect(res.preflight).toEqual(CHECKED);
    expect(late.seen).toEqual(['preflight (no Lease, 0 Talos calls)']);
  });
});

describe('a selection that selects nothing is an input error, before the pre-flight check', () => {
  it.each([
    ['a node-selector matching no node', { nodeSelector: 'pool=genral' }, 'node-selector', 'pool=genral matches no node of the cluster'],
    [
      'nodes and a node-selector that exclude each other',
      { nodes: ['w1'], nodeSelector: 'pool=gpu' },
      'node-selector',
      'pool=gpu matches none of the nodes named by nodes (w1): together they select no node',
    ],
    ['nodes naming no node of the cluster', { nodes: ['w9'] }, 'nodes', 'no such node: w9'],
  ])('%s', async (_what, over, input, message) => {
    const c = makeCluster([
      { name: 'w1', labels: { pool: 'general' } },
      { name: 'w2', labels: { pool: 'gpu' }, annotations: verified },
    ]);
    const late = latePorts(c);
    const err = await roll(c, over, late.deps).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).input).toBe(input);
    expect((err as InputError).message).toBe(`input "${input}": ${message}`);
    expect(late.seen).toEqual([]);
    expect(c.kube.mutatingCalls()).toEqual([]);
  });

  it('a node-selector matching only verified nodes is a clean run, not an error', async () => {
    const c = makeCluster([
      { name: 'w1', labels: { pool: 'general' } },
      { name: 'w2', labels: { pool: 'gpu' }, annotations: verified },
    ]);
    const late = latePorts(c);
    const res = await roll(c, { nodeSelector: 'pool=gpu' }, late.deps);
    expect(res.result).toBe('clean');
    expect(res.upToDate).toEqual(['w2']);
    expect(late.seen).toEqual([]);
  });
});
