import { describe, expect, it } from 'vitest';
import type { RunAttemptInfo, RunLookup } from '../../src/adapters/github.js';
import type { NodeState } from '../../src/core/model/node.js';
import type { JsonPatchOp } from '../../src/core/model/patch.js';
import { ToolError } from '../../src/core/errors.js';
import { runFences } from '../../src/fences/run.js';
import { renderFencesSummary } from '../../src/report/fences.js';
import { annotationKeys } from '../../src/core/model/node.js';
import type { OwnerToken } from '../../src/core/owner.js';
import { acquireSpec } from '../../src/rules/lease.js';
import { TestClock } from '../fakes/clock.js';
import { FakeKube } from '../fakes/fakeKube.js';

const keys = annotationKeys('registry-auth-rollout');
const A = 'acme/infra/runs/101/attempts/1/aaaa'; // completed
const B = 'acme/infra/runs/102/attempts/1/bbbb'; // in progress
const C = 'acme/infra/runs/103/attempts/2/cccc'; // completed, holds no fence
const NS = 'kube-system';
const LEASE = 'registry-auth-rollout';
const config = { annotationPrefix: 'registry-auth-rollout', leaseNamespace: NS, leaseName: LEASE, kubeContext: 'admin@prod' };

class StubRuns implements RunLookup {
  readonly calls: string[] = [];
  constructor(private readonly states: Record<string, RunAttemptInfo['state']>) {}
  async runAttempt(owner: OwnerToken): Promise<RunAttemptInfo> {
    this.calls.push(`${owner.runId}/${owner.runAttempt}`);
    const url = `https://github.com/${owner.repository}/actions/runs/${owner.runId}/attempts/${owner.runAttempt}`;
    const state = this.states[owner.runId];
    if (!state) throw new Error('stub has no such run');
    return state === 'completed' ? { state, conclusion: 'failure', url } : { state, url };
  }
}

function claimAnnotations(owner: string, phase: string, wasCordoned: boolean): Record<string, string> {
  return { [keys.owner]: owner, [keys.phase]: phase, [keys.wasCordoned]: String(wasCordoned), 'team.example/keep': 'me' };
}

/** Two leftover fences the brief names (w2 mutating, w3 run in progress) plus two releasable ones and a clean node. */
function cluster() {
  const kube = new FakeKube();
  kube.addNode({ name: 'w1', ip: '10.0.0.11', unschedulable: true, annotations: claimAnnotations(A, 'claimed', false) });
  kube.addNode({ name: 'w2', ip: '10.0.0.12', unschedulable: true, annotations: claimAnnotations(A, 'mutating', false) });
  kube.addNode({ name: 'w3', ip: '10.0.0.13', unschedulable: true, annotations: claimAnnotations(B, 'claimed', false) });
  kube.addNode({ name: 'w4', ip: '10.0.0.14', unschedulable: true, annotations: claimAnnotations(A, 'claimed', true) });
  kube.addNode({ name: 'clean', ip: '10.0.0.15' });
  const runs = new StubRuns({ '101': 'completed', '102': 'in_progress', '103': 'completed' });
  return { kube, runs, clock: new TestClock() };
}

async function holdLease(kube: FakeKube, holder: string, now: number): Promise<void> {
  await kube.createLease(NS, LEASE, acquireSpec(holder, now));
  kube.calls.length = 0;
}

const ann = (kube: FakeKube, name: string) => kube.state(name).annotations;

describe('runFences: fences (read-only)', () => {
  it('reports every fence, the runs and the release commands, and makes no mutating call', async () => {
    const { kube, runs, clock } = cluster();
    await holdLease(kube, B, clock.now());
    const r = await runFences({ mode: 'fences', kube, runs, config, clock });
    expect(kube.mutatingCalls()).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r).toMatchObject({ releasedNodes: [], refused: [], leaseReleased: false, failures: [] });
    expect(r.rows.map((x) => [x.node, x.phase, x.wasCordoned, x.schedulableNow, x.run?.state])).toEqual([
      ['w1', 'claimed', 'false', false, 'completed'],
      ['w2', 'mutating', 'false', false, 'completed'],
      ['w3', 'claimed', 'false', false, 'in_progress'],
      ['w4', 'claimed', 'true', false, 'completed'],
    ]);
    // each distinct owner looked up once (A owns three fences; B owns one and holds the Lease)
    expect(runs.calls.sort()).toEqual(['101/1', '102/1']);
    // what recover-fences would do, judged on the same read
    expect(r.decisions.map((d) => `${d.node}:${d.action}`)).toEqual(['w1:refuse', 'w2:refuse', 'w3:refuse', 'w4:refuse']);
    expect(r.leaseDecision).toMatchObject({ action: 'keep', holder: B });

    const html = renderFencesSummary(r);
    expect(html).toContain('<h2>Fences: 4 nodes carrying a claim</h2>');
    expect(html).toContain(`<code>${B}</code>`);
    expect(html).toContain('<a href="https://github.com/acme/infra/actions/runs/102/attempts/1">in progress</a>');
    expect(html).toContain(
      `kubectl --context=&#39;admin@prod&#39; patch node w1 --type=json -p &#39;[{&quot;op&quot;:&quot;test&quot;,&quot;path&quot;:&quot;/metadata/uid&quot;,&quot;value&quot;:&quot;${kube.state('w1').uid}&quot;}`,
    );
    expect(html).toContain('patch lease -n &#39;kube-system&#39;');
    expect(html).not.toContain('clean');
    expect(html).not.toMatch(/<h3>Actions/);
  });

  it('a lookup that throws is unknown, and fences mode still succeeds', async () => {
    const { kube, clock } = cluster();
    const r = await runFences({ mode: 'fences', kube, runs: new StubRuns({}), config, clock });
    expect(r.ok).toBe(true);
    expect(r.rows[0].run).toMatchObject({ state: 'unknown', error: 'stub has no such run' });
    expect(renderFencesSummary(r)).toContain('unknown</a>: stub has no such run');
  });

  it('no fences, no Lease', async () => {
    const kube = new FakeKube();
    kube.addNode({ name: 'w1', ip: '10.0.0.1' });
    const r = await runFences({ mode: 'fences', kube, runs: new StubRuns({}), config, clock: new TestClock() });
    expect(r.rows).toEqual([]);
    expect(renderFencesSummary(r)).toContain('No node carries a claim.');
    expect(renderFencesSummary(r)).toContain('does not exist');
  });
});

describe('runFences: recover-fences', () => {
  it("releases the completed run's claimed fences, restoring schedulability from was-cordoned; refuses mutating and in-progress ones", async () => {
    const { kube, runs, clock } = cluster();
    const w2 = kube.raw('w2');
    const w3 = kube.raw('w3');
    const r = await runFences({ mode: 'recover-fences', kube, runs, config, clock });

    expect(r.ok).toBe(true);
    expect(r.releasedNodes).toEqual(['w1', 'w4']);
    expect(kube.mutatingCalls()).toEqual(['patchNode w1', 'patchNode w4']);
    // w1 was schedulable before the claim: uncordoned; w4 was cordoned before: stays cordoned
    expect(kube.state('w1').unschedulable).toBe(false);
    expect(kube.state('w4').unschedulable).toBe(true);
    for (const n of ['w1', 'w4']) expect(ann(kube, n)).toEqual({ 'team.example/keep': 'me' });
    // refused fences are left byte for byte as they were
    expect(kube.raw('w2')).toEqual(w2);
    expect(kube.raw('w3')).toEqual(w3);
    expect(r.refused.map((x) => x.node)).toEqual(['w2', 'w3']);
    expect(r.refused[0].reason).toMatch(/phase is mutating/);
    expect(r.refused[1].reason).toMatch(/run attempt is in progress/);
    expect(r.leaseReleased).toBe(false);

    // every release is CAS-guarded: phase, uid and owner tested first
    const patch = kube.calls.find((c) => c.method === 'patchNode' && c.name === 'w1')!.ops!;
    expect(patch.slice(0, 3)).toEqual([
      { op: 'test', path: '/metadata/annotations/registry-auth-rollout~1phase', value: 'claimed' },
      { op: 'test', path: '/metadata/uid', value: kube.state('w1').uid },
      { op: 'test', path: '/metadata/annotations/registry-auth-rollout~1owner', value: A },
    ]);
    expect(renderFencesSummary(r)).toContain('<h3>Actions</h3>');
    expect(renderFencesSummary(r)).toMatch(/<li>w1: released/);
    expect(renderFencesSummary(r)).toMatch(/<td>refused: phase is mutating/);
  });

  it('a Lease held by a run in progress: nothing is released at all', async () => {
    const { kube, runs, clock } = cluster();
    await holdLease(kube, B, clock.now());
    const r = await runFences({ mode: 'recover-fences', kube, runs, config, clock });
    expect(kube.mutatingCalls()).toEqual([]);
    expect(r.releasedNodes).toEqual([]);
    expect(r.refused.find((x) => x.node === 'w1')!.reason).toMatch(/Lease is held by another run \(acme\/infra\/runs\/102/);
    expect(r.leaseReleased).toBe(false);
    expect(kube.leases.get(`${NS}/${LEASE}`)!.spec.holderIdentity).toBe(B);
    expect(r.ok).toBe(true);
  });

  it('a Lease held by the completed owner run is released, then its fences', async () => {
    const { kube, runs, clock } = cluster();
    await holdLease(kube, A, clock.now());
    const r = await runFences({ mode: 'recover-fences', kube, runs, config, clock });
    expect(r.leaseReleased).toBe(true);
    expect('holderIdentity' in kube.leases.get(`${NS}/${LEASE}`)!.spec).toBe(false);
    expect(r.releasedNodes).toEqual(['w1', 'w4']);
    expect(kube.mutatingCalls()).toEqual([`patchLease ${LEASE}`, 'patchNode w1', 'patchNode w4']);
    const leaseOps = kube.calls.find((c) => c.method === 'patchLease')!.ops!;
    expect(leaseOps[0]).toEqual({ op: 'test', path: '/spec/holderIdentity', value: A });
  });

  it('a Lease held by another completed run is released first; the fences are then judged against the freed Lease', async () => {
    const { kube, runs, clock } = cluster();
    await holdLease(kube, C, clock.now());
    const r = await runFences({ mode: 'recover-fences', kube, runs, config, clock });
    expect(r.leaseReleased).toBe(true);
    expect(r.releasedNodes).toEqual(['w1', 'w4']);
    expect(runs.calls.sort()).toEqual(['101/1', '102/1', '103/2']);
  });

  it('a Lease taken by a new run between the release and the fences stops every fence release', async () => {
    const { kube, runs, clock } = cluster();
    await holdLease(kube, C, clock.now());
    const fresh = 'acme/infra/runs/200/attempts/1/dddd';
    const patchLease = kube.patchLease.bind(kube);
    kube.patchLease = async (ns: string, name: string, ops: JsonPatchOp[]) => {
      const out = await patchLease(ns, name, ops);
      kube.leases.get(`${ns}/${name}`)!.spec.holderIdentity = fresh; // a new run acquires it at once
      return out;
    };
    const r = await runFences({ mode: 'recover-fences', kube, runs, config, clock });
    expect(r.leaseReleased).toBe(true);
    expect(r.releasedNodes).toEqual([]);
    expect(r.refused.find((x) => x.node === 'w1')!.reason).toContain(fresh);
  });

  it('a fence that changed after the read is not clobbered: reported as refused, not a failure', async () => {
    const { kube, runs, clock } = cluster();
    kube.beforePatch = (name) => {
      if (name === 'w1') kube.mutate('w1', (o) => (o.metadata.annotations[keys.phase] = 'mutating'));
    };
    const r = await runFences({ mode: 'recover-fences', kube, runs, config, clock });
    expect(r.ok).toBe(true);
    expect(r.releasedNodes).toEqual(['w4']);
    expect(r.refused.find((x) => x.node === 'w1')!.reason).toMatch(/changed since it was read/);
    expect(ann(kube, 'w1')[keys.owner]).toBe(A);
    expect(kube.state('w1').unschedulable).toBe(true);
  });

  it('a release failing on transport fails the step (ok=false) and says so; the others still go', async () => {
    const { kube, runs, clock } = cluster();
    const patchNode = kube.patchNode.bind(kube);
    kube.patchNode = async (name: string, ops: JsonPatchOp[]): Promise<NodeState> => {
      if (name === 'w1')
        throw new ToolError({
          tool: 'kubectl',
          command: 'kubectl patch node w1',
          kind: 'transport',
          exitCode: 1,
          stderr: 'connection reset by peer',
        });
      return patchNode(name, ops);
    };
    const r = await runFences({ mode: 'recover-fences', kube, runs, config, clock });
    expect(r.ok).toBe(false);
    expect(r.failures).toHaveLength(1);
    expect(r.failures[0]).toEqual({ node: 'w1', reason: expect.stringMatching(/^release failed: .*connection reset by peer/) });
    expect(r.releasedNodes).toEqual(['w4']);
    expect(renderFencesSummary(r)).toMatch(/<li>FAILED: w1: release failed/);
    expect(renderFencesSummary(r)).toMatch(/<td>failed: release failed/);
  });
});
