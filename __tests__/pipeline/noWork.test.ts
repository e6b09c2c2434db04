// What a run with nothing to roll asks for, and when the pre-flight check and the Talos client come
// (src/pipeline/run.ts): after the first listing, before the plan or the Lease, and in apply only when
// a node is selected to roll. A selection that selects nothing is an input error before either.
import { parseLabelSelector } from '../../src/core/labelSelector.js';
import { describe, expect, it } from 'vitest';
import { InputError, PreflightError } from '../../src/core/errors.js';
import type { PreflightSummary } from '../../src/core/model/preflight.js';
import type { RolloutDeps } from '../../src/pipeline/context.js';
import { HolderFencesError } from '../../src/pipeline/errors.js';
import { acquireSpec } from '../../src/rules/lease.js';
import { holderRenewsWhileWatched, keys, makeCluster, roll } from './harness.js';

const verified = { [keys.verified]: JSON.stringify({ 'ghcr.io': { revision: 'rev-2', proof: 'evidence' } }) };
const undecided = { [keys.verified]: JSON.stringify({ 'ghcr.io': { revision: 'rev-2', proof: 'undecided' } }) };
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

describe('a run with nothing to roll and a node to prove: the Talos reads of the evidence, nothing else', () => {
  it('opens the Talos client for the evidence, with no pre-flight and no Lease; proven, it writes the marker only', async () => {
    const c = makeCluster([
      { name: 'w1', current: true, annotations: undecided },
      { name: 'cp1', role: 'control-plane', annotations: verified },
    ]);
    const late = latePorts(c);
    const res = await roll(c, {}, late.deps);
    expect(res.result).toBe('clean');
    expect(late.seen).toEqual(['openTalos (no Lease)']);
    expect(res.preflight).toBeUndefined();
    expect(res.talosReads).toBe('reading Talos through the fakes');
    expect(res.proofChecks).toMatchObject([{ node: 'w1', by: 'evidence', proven: true }]);
    expect(c.kube.mutatingCalls()).toEqual(['patchNode w1']);
    expect(c.kube.leases.size).toBe(0);
    expect(c.talos.mutatingCalls()).toEqual([]);
  });

  it('a Talos client that cannot be opened fails no run: the node stays unproven, and the check says why', async () => {
    const c = makeCluster([{ name: 'w1', current: true, annotations: undecided }]);
    const late = latePorts(c);
    const res = await roll(
      c,
      {},
      {
        ...late.deps,
        openTalos: async () => {
          throw new Error('talosconfig: no such file');
        },
      },
    );
    expect(res.result).toBe('clean');
    expect(res.proofChecks).toEqual([
      expect.objectContaining({
        node: 'w1',
        proven: false,
        detail: 'the evidence could not be read: the Talos client could not be opened: talosconfig: no such file',
      }),
    ]);
    expect(res.proofChecks![0].by).toBeUndefined();
    expect(c.kube.mutatingCalls()).toEqual([]);
  });

  it('with verify-image, the pull alone: no Talos client', async () => {
    const c = makeCluster([{ name: 'w1', annotations: undecided }]);
    const late = latePorts(c);
    const res = await roll(c, { verifyImage: 'ghcr.io/acme/private:1' }, late.deps);
    expect(res.proofChecks).toMatchObject([{ node: 'w1', by: 'verify-image', proven: true }]);
    expect(late.seen).toEqual([]);
    expect(c.talos.calls).toEqual([]);
  });

  it('a plan proves nothing: it reads no Talos for a node to prove', async () => {
    const c = makeCluster([{ name: 'w1', current: true, annotations: undecided }]);
    const late = latePorts(c);
    const res = await roll(c, { mode: 'plan' }, late.deps);
    expect(res.proofChecks).toBeUndefined();
    expect(c.kube.mutatingCalls()).toEqual([]);
  });
});

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
    [
      'a node-selector matching no node',
      { nodeSelector: parseLabelSelector('pool=genral') },
      'node-selector',
      'pool=genral matches no node of the cluster',
    ],
    [
      'nodes and a node-selector that exclude each other',
      { nodes: ['w1'], nodeSelector: parseLabelSelector('pool=gpu') },
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
    const res = await roll(c, { nodeSelector: parseLabelSelector('pool=gpu') }, late.deps);
    expect(res.result).toBe('clean');
    expect(res.upToDate).toEqual(['w2']);
    expect(late.seen).toEqual([]);
  });
});

// The run Lease is read and taken only once the selection holds a node to mutate, after the listing and
// the pre-flight check (src/pipeline/run.ts). Why a run that finds every node verified may end `clean`
// while another run holds the Lease: docs/preflight.md "Another run holding the Lease".
describe('the run Lease: read only once a node is to be mutated', () => {
  const OTHER = 'acme/infra/runs/40/attempts/2/123456';
  const leaseKey = 'kube-system/registry-auth-rollout';

  /** another run holds the Lease, renewed just now, placed without recording calls */
  async function heldByAnother(c: ReturnType<typeof makeCluster>): Promise<string> {
    await c.kube.createLease('kube-system', 'registry-auth-rollout', acquireSpec(OTHER, c.clock.now()));
    c.kube.calls.length = 0;
    return c.kube.leases.get(leaseKey)!.metadata.resourceVersion as string;
  }

  it('apply, every node verified: the node list is the one read; no Lease read', async () => {
    const c = makeCluster([
      { name: 'w1', annotations: verified },
      { name: 'cp1', role: 'control-plane', annotations: verified },
    ]);
    const res = await roll(c, {}, latePorts(c).deps);
    expect(res.result).toBe('clean');
    expect(c.kube.calls.map((x) => x.method)).toEqual(['listNodes']);
  });

  it('apply, every node verified, another run holds the Lease (between its nodes): clean, the Lease neither read nor touched', async () => {
    const c = makeCluster([
      { name: 'w1', annotations: verified },
      { name: 'w2', annotations: verified },
    ]);
    const rv = await heldByAnother(c);
    const late = latePorts(c);
    const res = await roll(c, {}, late.deps);
    expect(res.result, res.error?.message).toBe('clean');
    expect(res.upToDate).toEqual(['w1', 'w2']);
    expect(c.kube.calls.map((x) => x.method)).toEqual(['listNodes']);
    expect(late.seen).toEqual([]);
    expect(c.kube.leases.get(leaseKey)!.spec.holderIdentity).toBe(OTHER);
    expect(c.kube.leases.get(leaseKey)!.metadata.resourceVersion).toBe(rv);
  });

  it('apply with a node to roll: the Lease is read and taken after the listing and the pre-flight check, before the first node write', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2', annotations: verified }]);
    const late = latePorts(c);
    let callsAtPreflight = -1;
    const res = await roll(
      c,
      {},
      {
        ...late.deps,
        preflight: async () => {
          callsAtPreflight = c.kube.calls.length;
          return CHECKED;
        },
      },
    );
    expect(res.result, res.error?.message).toBe('processed');
    const methods = c.kube.calls.map((x) => x.method);
    const firstLease = methods.indexOf('getLease');
    expect(methods.slice(0, callsAtPreflight)).toEqual(['listNodes']);
    expect(firstLease).toBeGreaterThanOrEqual(callsAtPreflight);
    expect(methods.slice(firstLease, firstLease + 2)).toEqual(['getLease', 'createLease']);
    expect(methods.indexOf('patchNode')).toBeGreaterThan(firstLease + 1);
    expect(c.kube.mutatingCalls()[0]).toBe('createLease registry-auth-rollout');
  });

  it('another run holds the Lease and a node to roll: refused at the Lease, after the pre-flight check, nothing written', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2', annotations: verified }]);
    await heldByAnother(c);
    holderRenewsWhileWatched(c.kube);
    const late = latePorts(c);
    const err = await roll(c, {}, late.deps).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HolderFencesError);
    expect((err as Error).message).toContain(`is held by ${OTHER}`);
    expect((err as Error).message).toContain(`No node carries a claim of ${OTHER}.`);
    expect(late.seen).toEqual(['preflight (with a Lease, 0 Talos calls)', 'openTalos (with a Lease)']);
    expect(c.kube.mutatingCalls()).toEqual([]);
    expect(c.kube.leases.get(leaseKey)!.spec.holderIdentity).toBe(OTHER);
  });

  // The question the order raises: can a listing taken while another run is mid-roll show every node
  // verified while one is not? A node that run claimed carries its owner and phase from the claim's
  // patch to the release's, which writes the marker and drops the claim in one patch; so a claimed
  // node, whatever marker it carries, is never "nothing to do": the inventory refuses it, and then the
  // Lease is read to name the run that holds it.
  it('every node carries the marker, one is still claimed by the run holding the Lease: not clean; the error names that run and the node', async () => {
    const c = makeCluster([
      { name: 'w1', annotations: verified },
      {
        name: 'w2',
        unschedulable: true,
        annotations: { ...verified, [keys.owner]: OTHER, [keys.phase]: 'rebooting', [keys.wasCordoned]: 'false' },
      },
    ]);
    await heldByAnother(c);
    const late = latePorts(c);
    const err = await roll(c, {}, late.deps).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HolderFencesError);
    expect((err as Error).message).toContain(`is held by ${OTHER}`);
    expect((err as Error).message).toContain('- w2 (phase=rebooting, cordoned)');
    expect(c.kube.calls.map((x) => x.method).slice(0, 2)).toEqual(['listNodes', 'getLease']);
    expect(late.seen).toEqual([]);
    expect(c.kube.mutatingCalls()).toEqual([]);
  });

  it('a claim left on a node with the Lease free: the inventory says so (a residual claim), after one Lease read', async () => {
    const c = makeCluster([{ name: 'w1', annotations: { ...verified, [keys.owner]: OTHER, [keys.phase]: 'mutating' } }]);
    const late = latePorts(c);
    const err = await roll(c, {}, late.deps).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toContain('node w1 carries a residual claim');
    expect(c.kube.calls.map((x) => x.method)).toEqual(['listNodes', 'getLease']);
    expect(late.seen).toEqual([]);
    expect(c.kube.mutatingCalls()).toEqual([]);
  });
});
