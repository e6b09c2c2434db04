import { describe, expect, it } from 'vitest';
import type { RunAttemptInfo } from '../../src/adapters/github.js';
import type { LeaseState } from '../../src/adapters/types.js';
import type { NodeState } from '../../src/core/model/node.js';
import { fenceCapture, judgeFences, leaseReleaseCommand, ownersToLookUp, type FenceInput } from '../../src/rules/fences.js';
import { applyJsonPatch, nodeFromJson, nodeJson, PatchRejected } from '../fakes/jsonPatch.js';
import { keys, node } from './fixtures.js';
import { buildReleasePatch } from '../../src/rules/release.js';
import type { ClaimCapture } from '../../src/core/model/node.js';

const releaseOps = (capture: ClaimCapture) => buildReleasePatch(capture, keys, {});

const DONE = 'acme/infra/runs/101/attempts/1/aaaa';
const DONE_OTHER_NONCE = 'acme/infra/runs/101/attempts/1/ffff';
const RUNNING = 'acme/infra/runs/102/attempts/1/bbbb';
const ALSO_DONE = 'acme/infra/runs/103/attempts/2/cccc';
const url = (id: string, a = '1') => `https://github.com/acme/infra/actions/runs/${id}/attempts/${a}`;

const RUNS = new Map<string, RunAttemptInfo>([
  [DONE, { state: 'completed', conclusion: 'failure', url: url('101') }],
  [DONE_OTHER_NONCE, { state: 'completed', conclusion: 'failure', url: url('101') }],
  [RUNNING, { state: 'in_progress', url: url('102') }],
  [ALSO_DONE, { state: 'completed', conclusion: 'success', url: url('103', '2') }],
]);

function fence(
  name: string,
  owner: string | undefined,
  phase: string | undefined,
  wasCordoned: string | undefined,
  over: Partial<NodeState> = {},
): NodeState {
  const annotations: Record<string, string> = { other: 'x' };
  if (owner !== undefined) annotations[keys.owner] = owner;
  if (phase !== undefined) annotations[keys.phase] = phase;
  if (wasCordoned !== undefined) annotations[keys.wasCordoned] = wasCordoned;
  return node({ name, annotations, hasAnnotationsMap: true, unschedulable: true, ...over });
}

function lease(holder: string): LeaseState {
  return {
    namespace: 'kube-system',
    name: 'registry-auth-rollout',
    uid: 'l1',
    resourceVersion: '1',
    holderIdentity: holder,
    leaseDurationSeconds: 120,
  };
}

function judge(nodes: NodeState[], over: Partial<FenceInput> = {}) {
  return judgeFences({ nodes, keys, lease: undefined, runs: RUNS, ...over });
}

function decision(n: NodeState, over: Partial<FenceInput> = {}) {
  return judge([n], over).fences[0];
}

describe('fence rows', () => {
  it('only nodes with an owner or phase annotation, sorted, with what a person needs', () => {
    const nodes = [
      fence('w3', RUNNING, 'mutating', 'true'),
      node({ name: 'clean', annotations: { [keys.verifiedRevision]: 'r1', [keys.wasCordoned]: 'false' }, hasAnnotationsMap: true }),
      fence('w1', DONE, 'claimed', 'false', { unschedulable: false }),
      fence('w2', undefined, 'claimed', undefined),
    ];
    const { rows } = judge(nodes);
    expect(rows.map((r) => r.node)).toEqual(['w1', 'w2', 'w3']);
    expect(rows[0]).toMatchObject({
      node: 'w1',
      uid: 'uid-w1',
      owner: DONE,
      phase: 'claimed',
      wasCordoned: 'false',
      schedulableNow: true,
      run: RUNS.get(DONE),
    });
    expect(rows[2]).toMatchObject({
      owner: RUNNING,
      phase: 'mutating',
      wasCordoned: 'true',
      schedulableNow: false,
      run: RUNS.get(RUNNING),
    });
    expect(rows[1].releaseCommand).toBeUndefined();
    expect(rows[1].note).toMatch(/no owner annotation/);
  });

  it('the release command is CAS-guarded on uid and owner and restores schedulability from was-cordoned', () => {
    const [uncordon, keep] = judge([fence('a', DONE, 'claimed', 'false'), fence('b', DONE, 'mutating', 'true')]).rows;
    for (const [row, uid] of [
      [uncordon, 'uid-a'],
      [keep, 'uid-b'],
    ] as const) {
      expect(row.releaseCommand).toMatch(/^`kubectl patch node [ab] --type=json -p '/);
      expect(row.releaseCommand).toContain(`{"op":"test","path":"/metadata/uid","value":"${uid}"}`);
      expect(row.releaseCommand).toContain(`{"op":"test","path":"/metadata/annotations/registry-auth-rollout~1owner","value":"${DONE}"}`);
    }
    expect(uncordon.releaseCommand).toContain('{"op":"add","path":"/spec/unschedulable","value":false}');
    expect(keep.releaseCommand).not.toContain('/spec/unschedulable');
    expect(judge([fence('a', DONE, 'claimed', 'false')], { kubectl: { kubeContext: 'admin@prod' } }).rows[0].releaseCommand).toMatch(
      /^`kubectl --context='admin@prod' patch node a /,
    );
  });

  it('a missing or garbled was-cordoned leaves the node cordoned in the command, and says so', () => {
    for (const wc of [undefined, 'yes']) {
      const n = fence('a', DONE, 'claimed', wc);
      const [row] = judge([n]).rows;
      expect(row.releaseCommand).not.toContain('/spec/unschedulable');
      expect(row.note).toMatch(/leaves the node cordoned/);
      expect(fenceCapture(n, keys).wasCordoned).toBe(true);
    }
  });

  it('the printed patch actually releases the node, and fails once the owner changed', () => {
    const n = fence('a', DONE, 'claimed', 'false');
    const ops = JSON.parse(/-p '(.*)'`$/.exec(judge([n]).rows[0].releaseCommand!)![1]);
    const released = nodeFromJson(applyJsonPatch(nodeJson(n), ops), 'worker');
    expect(released.unschedulable).toBe(false);
    expect(released.annotations).toEqual({ other: 'x' });
    const stolen = fence('a', RUNNING, 'claimed', 'false');
    expect(() => applyJsonPatch(nodeJson(stolen), ops)).toThrow(PatchRejected);
  });
});

describe('recover-fences decisions', () => {
  it('releases a claimed fence of a completed run when the Lease is absent, free, or held by that same run', () => {
    const n = fence('a', DONE, 'claimed', 'false');
    for (const l of [undefined, lease(''), lease(DONE), lease(DONE_OTHER_NONCE)]) {
      const d = decision(n, { lease: l });
      expect(d.action, JSON.stringify(l)).toBe('release');
      if (d.action === 'release') {
        expect(d.capture).toMatchObject({ node: 'a', uid: 'uid-a', owner: DONE, wasCordoned: false });
        expect(d.reason).toMatch(/uncordon/);
      }
    }
    const kept = decision(fence('b', DONE, 'claimed', 'true'));
    expect(kept.action === 'release' && kept.capture.wasCordoned).toBe(true);
  });

  const refusals: Array<[string, NodeState, Partial<FenceInput>, RegExp]> = [
    ['mutating', fence('a', DONE, 'mutating', 'false'), {}, /phase is mutating/],
    ['unknown phase', fence('a', DONE, 'draining', 'false'), {}, /phase is "draining", not claimed/],
    ['no phase', fence('a', DONE, undefined, 'false'), {}, /phase is missing/],
    ['run in progress', fence('a', RUNNING, 'claimed', 'false'), {}, /run attempt is in progress/],
    ['run queued', fence('a', DONE, 'claimed', 'false'), { runs: new Map([[DONE, { state: 'queued', url: url('101') }]]) }, /is queued/],
    [
      'run unknown',
      fence('a', DONE, 'claimed', 'false'),
      { runs: new Map([[DONE, { state: 'unknown', url: url('101'), error: 'GitHub API 403: Resource not accessible' }]]) },
      /is unknown: GitHub API 403: Resource not accessible/,
    ],
    ['run not looked up', fence('a', DONE, 'claimed', 'false'), { runs: new Map() }, /was not looked up/],
    ['unparseable owner', fence('a', 'by hand', 'claimed', 'false'), {}, /"by hand" is not an owner token/],
    ['no owner', fence('a', undefined, 'claimed', 'false'), {}, /no owner annotation/],
    ['was-cordoned garbled', fence('a', DONE, 'claimed', 'maybe'), {}, /was-cordoned is missing or not true\/false/],
    [
      'Lease held by another (completed) run',
      fence('a', DONE, 'claimed', 'false'),
      { lease: lease(ALSO_DONE) },
      /Lease is held by another run \(acme\/infra\/runs\/103/,
    ],
    ['Lease held by another run', fence('a', DONE, 'claimed', 'false'), { lease: lease(RUNNING) }, /Lease is held by another run/],
    [
      'Lease held by a stranger',
      fence('a', DONE, 'claimed', 'false'),
      { lease: lease('kube-controller') },
      /Lease is held by another run \(kube-controller\)/,
    ],
  ];
  for (const [what, n, over, reason] of refusals) {
    it(`refuses: ${what}`, () => {
      const d = decision(n, over);
      expect(d.action).toBe('refuse');
      expect(d.reason).toMatch(reason);
    });
  }

  it('lists every reason that applies', () => {
    const d = decision(fence('a', RUNNING, 'mutating', 'false'), { lease: lease(ALSO_DONE) });
    expect(d.reason).toMatch(/mutating.*in progress.*Lease is held/);
  });
});

describe('Lease decision', () => {
  it('none when absent or free; release when the holder run completed; keep otherwise', () => {
    expect(judge([]).lease).toMatchObject({ action: 'none', reason: 'the Lease does not exist' });
    expect(judge([], { lease: lease('') }).lease).toMatchObject({ action: 'none', reason: 'the Lease is free' });
    expect(judge([], { lease: lease(ALSO_DONE) }).lease).toMatchObject({ action: 'release', holder: ALSO_DONE });
    expect(judge([], { lease: lease(RUNNING) }).lease).toMatchObject({
      action: 'keep',
      holder: RUNNING,
      reason: expect.stringMatching(/in progress/),
    });
    expect(judge([], { lease: lease('kube-controller') }).lease).toMatchObject({
      action: 'keep',
      reason: expect.stringMatching(/not an owner token/),
    });
    expect(judge([], { lease: lease(ALSO_DONE), runs: new Map() }).lease).toMatchObject({
      action: 'keep',
      reason: expect.stringMatching(/not looked up/),
    });
  });

  it('leaseReleaseCommand carries the holder CAS', () => {
    const cmd = leaseReleaseCommand('kube-system', 'registry-auth-rollout', RUNNING, { kubeconfig: '/tmp/k c' });
    expect(cmd).toMatch(/^`kubectl --kubeconfig='\/tmp\/k c' patch lease -n 'kube-system' 'registry-auth-rollout' --type=json -p '/);
    expect(cmd).toContain(`{"op":"test","path":"/spec/holderIdentity","value":"${RUNNING}"}`);
  });
});

describe('ownersToLookUp', () => {
  it('each distinct owner once, the Lease holder included', () => {
    const nodes = [
      fence('a', DONE, 'claimed', 'false'),
      fence('b', DONE, 'mutating', 'false'),
      fence('c', RUNNING, 'claimed', 'false'),
      fence('d', undefined, 'claimed', 'false'),
    ];
    expect(ownersToLookUp(nodes, keys, lease(ALSO_DONE)).sort()).toEqual([DONE, RUNNING, ALSO_DONE].sort());
    expect(ownersToLookUp(nodes, keys, lease(DONE)).sort()).toEqual([DONE, RUNNING].sort());
  });
});

describe('quarantined nodes', () => {
  const RECORD = JSON.stringify({
    v: 1,
    reason: 'drain-timeout',
    drainTimeout: '45m0s',
    blockedBy: [{ pdb: 'shop/db', status: { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 }, pods: ['shop/db-0'] }],
    at: '2026-12-01T10:00:00.000Z',
    run: DONE,
    wasCordoned: false,
  });
  const quarantined = (name: string, text = RECORD, over: Partial<NodeState> = {}) =>
    node({ name, unschedulable: true, hasAnnotationsMap: true, annotations: { [keys.quarantined]: text }, ...over });

  it('are listed beside the fences, not as fences: since, run, what blocked the drain, how to lift it', () => {
    const j = judge([quarantined('w2'), quarantined('w1', 'garbled'), node({ name: 'clean' })]);
    expect(j.rows).toEqual([]);
    expect(j.fences).toEqual([]);
    expect(j.quarantined.map((q) => q.node)).toEqual(['w1', 'w2']);
    expect(j.quarantined[1]).toMatchObject({
      node: 'w2',
      since: '2026-12-01T10:00:00.000Z',
      run: DONE,
      wasCordoned: false,
      blockedBy: 'PodDisruptionBudget shop/db (allows 0 disruptions, 1/1 healthy) holding shop/db-0',
      schedulableNow: false,
      lift: 'let PodDisruptionBudget shop/db allow the eviction, then rerun: the rerun reboots w2 and restores its schedulability',
    });
    expect(j.quarantined[1].byHand).toContain('"op":"add","path":"/spec/unschedulable","value":false');
    // unreadable: lifting it by hand leaves it cordoned
    expect(j.quarantined[0].wasCordoned).toBeUndefined();
    expect(j.quarantined[0].note).toContain('cannot be read');
    expect(j.quarantined[0].byHand).not.toContain('unschedulable');
  });

  it('a claim left on a quarantined node is released by recover-fences as its claim found it: cordoned and quarantined', () => {
    const n = quarantined('w2', RECORD, {
      annotations: { [keys.quarantined]: RECORD, [keys.owner]: DONE, [keys.phase]: 'claimed', [keys.wasCordoned]: 'false' },
    });
    const d = decision(n);
    expect(d.action).toBe('release');
    if (d.action !== 'release') return;
    expect(d.reason).toContain('keep it cordoned and quarantined');
    expect(judge([n]).quarantined[0].claimedBy).toBe(DONE);
    const after = nodeFromJson(
      applyJsonPatch(nodeJson(n), [
        { op: 'test', path: '/metadata/annotations/registry-auth-rollout~1phase', value: 'claimed' },
        ...releaseOps(d.capture),
      ]),
      'worker',
    );
    expect(after.unschedulable).toBe(true);
    expect(after.annotations).toEqual({ [keys.quarantined]: RECORD });
  });
});
