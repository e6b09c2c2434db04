// Quarantine rules with plain objects: the annotation's format, the quarantine patch (applied with the
// apiserver's JSON Patch semantics), what a rerun's claim and release make of a quarantined node, the
// PDB selector matching that names what blocked a drain, and how a person lifts a quarantine.
import { describe, expect, it } from 'vitest';
import type { PdbState } from '../../src/core/model/cluster.js';
import type { ClaimCapture, NodeState } from '../../src/core/model/node.js';
import { buildClaimPatch, captureClaim, judgeClaimRejection } from '../../src/rules/claim.js';
import { selectNodes, validateInventory } from '../../src/rules/inventory.js';
import {
  buildQuarantinePatch,
  capacityStopMessage,
  describeBlockers,
  drainBlockers,
  formatQuarantine,
  liftQuarantine,
  parseQuarantine,
  quarantineOf,
  quarantineRecord,
  quarantinedAfter,
  quarantinedNodes,
  selectorMatches,
  type QuarantineRecord,
} from '../../src/rules/quarantine.js';
import { markerWrite } from '../../src/rules/marker.js';
import { buildReleasePatch } from '../../src/rules/release.js';
import { applyJsonPatch, nodeFromJson, nodeJson, PatchRejected } from '../fakes/jsonPatch.js';
import { keys, node, OTHER_OWNER, OWNER } from './fixtures.js';

const RECORD: QuarantineRecord = {
  v: 1,
  reason: 'drain-timeout',
  drainTimeout: '45m0s',
  blockedBy: [{ pdb: 'shop/db', status: { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 }, pods: ['shop/db-0'] }],
  at: '2026-12-01T10:00:00.000Z',
  run: 'acme/infra/runs/42/attempts/1/abcdef',
  wasCordoned: false,
};

/** A node as this run's claim left it (cordoned, owner, phase=mutating, was-cordoned). */
function claimed(over: Partial<NodeState> = {}, wasCordoned = false): { n: NodeState; capture: ClaimCapture } {
  const before = node({ name: 'w1', unschedulable: wasCordoned, ...over });
  const capture = captureClaim(before, OWNER, keys);
  const n = nodeFromJson(applyJsonPatch(nodeJson(before), buildClaimPatch(before, OWNER, keys)), 'worker');
  return { n: { ...n, annotations: { ...n.annotations, [keys.phase]: 'mutating' } }, capture };
}

const apply = (n: NodeState, ops: ReturnType<typeof buildQuarantinePatch>): NodeState =>
  nodeFromJson(applyJsonPatch(nodeJson(n), ops), n.role);

describe('the quarantined annotation', () => {
  it('round-trips, with a fixed key order (reason first)', () => {
    const text = formatQuarantine(RECORD);
    expect(text.startsWith('{"v":1,"reason":"drain-timeout","drainTimeout":"45m0s","blockedBy":')).toBe(true);
    expect(parseQuarantine(text)).toEqual({ ok: true, record: RECORD });
  });

  it.each([
    ['not JSON', 'quarantined', 'it is not JSON'],
    ['an array', '[]', 'it is not a JSON object'],
    ['another version', '{"v":2,"wasCordoned":false}', 'format version 2 is not 1'],
    ['no wasCordoned', '{"v":1}', 'wasCordoned is not true or false'],
    ['a string wasCordoned', '{"v":1,"wasCordoned":"false"}', 'wasCordoned is not true or false'],
  ])('refuses %s', (_what, text, error) => {
    expect(parseQuarantine(text)).toEqual({ ok: false, error });
  });

  it('an unreadable annotation counts as "was cordoned": lifting it never uncordons', () => {
    const n = node({ name: 'w1', annotations: { [keys.quarantined]: 'garbled' }, hasAnnotationsMap: true });
    expect(quarantineOf(n, keys)).toEqual({ text: 'garbled', wasCordoned: true, error: 'it is not JSON' });
    expect(quarantineOf(node({ name: 'w2' }), keys)).toBeUndefined();
  });
});

describe('buildQuarantinePatch', () => {
  it('gives up the claim, keeps the cordon, writes the record; no verified-revision', () => {
    const { n, capture } = claimed();
    const record = quarantineRecord({
      capture,
      drainTimeout: '45m0s',
      blockedBy: RECORD.blockedBy,
      atMs: Date.parse(RECORD.at),
      run: RECORD.run,
    });
    expect(record).toEqual(RECORD);
    const after = apply(n, buildQuarantinePatch(capture, keys, record));
    expect(after.unschedulable).toBe(true);
    expect(after.annotations).toEqual({ [keys.quarantined]: formatQuarantine(RECORD) });
  });

  it('fails as a whole when the claim is no longer ours, or someone uncordoned the node', () => {
    const { n, capture } = claimed();
    const ops = buildQuarantinePatch(capture, keys, RECORD);
    expect(() => apply({ ...n, annotations: { ...n.annotations, [keys.owner]: OTHER_OWNER } }, ops)).toThrow(PatchRejected);
    expect(() => apply({ ...n, unschedulable: false }, ops)).toThrow(PatchRejected);
    expect(() => apply({ ...n, uid: 'uid-new' }, ops)).toThrow(PatchRejected);
  });

  it('does not fail on a phase or was-cordoned annotation someone removed by hand', () => {
    const { n, capture } = claimed();
    const { [keys.wasCordoned]: _w, [keys.phase]: _p, ...rest } = n.annotations;
    expect(apply({ ...n, annotations: rest }, buildQuarantinePatch(capture, keys, RECORD)).annotations[keys.quarantined]).toBeDefined();
  });
});

describe('a quarantined node in the next run', () => {
  const quarantined = (wasCordoned: boolean): NodeState => {
    const { n, capture } = claimed({}, wasCordoned);
    return apply(n, buildQuarantinePatch(capture, keys, { ...RECORD, wasCordoned }));
  };

  it('is no leftover claim for the inventory, and is selected again whatever revision it carries', () => {
    const q = { ...quarantined(false), annotations: { ...quarantined(false).annotations, [keys.verifiedRevision]: 'r2' } };
    expect(validateInventory([q], keys)).toEqual([]);
    expect(selectNodes([q], { want: { hosts: ['ghcr.io'], revision: 'r2' }, keys })).toMatchObject({
      selected: [{ name: 'w1' }],
      upToDate: [],
    });
  });

  it.each([false, true])('its claim takes was-cordoned from the record (%s), not from its cordon', (wasCordoned) => {
    const q = quarantined(wasCordoned);
    expect(q.unschedulable).toBe(true);
    const capture = captureClaim(q, OWNER, keys);
    expect(capture).toMatchObject({ wasCordoned, quarantined: q.annotations[keys.quarantined] });
    const after = apply(q, buildClaimPatch(q, OWNER, keys));
    expect(after.annotations[keys.wasCordoned]).toBe(String(wasCordoned));
  });

  it('its claim tests the record: a quarantine rewritten since the read fails the claim (then retried from a re-read)', () => {
    const q = quarantined(false);
    const rewritten = { ...q, annotations: { ...q.annotations, [keys.quarantined]: formatQuarantine({ ...RECORD, wasCordoned: true }) } };
    expect(() => apply(rewritten, buildClaimPatch(q, OWNER, keys))).toThrow(PatchRejected);
    expect(judgeClaimRejection(captureClaim(q, OWNER, keys), rewritten, keys).kind).toBe('retry');
  });

  it('its cordon is no conflict for the claim; an uncordon is', () => {
    const q = quarantined(false);
    const capture = captureClaim(q, OWNER, keys);
    expect(judgeClaimRejection(capture, q, keys).kind).toBe('retry');
    expect(judgeClaimRejection(capture, { ...q, unschedulable: false }, keys).kind).toBe('conflict');
  });

  it.each([
    { wasCordoned: false, cordonedAfter: false },
    { wasCordoned: true, cordonedAfter: true },
  ])(
    'the verified release restores the schedulability from before (was cordoned: $wasCordoned) and removes the quarantine in the same patch',
    ({ wasCordoned, cordonedAfter }) => {
      const q = quarantined(wasCordoned);
      const capture = captureClaim(q, OWNER, keys);
      const held = apply(q, buildClaimPatch(q, OWNER, keys));
      const marker = markerWrite(held.annotations, keys, { hosts: ['ghcr.io'], revision: 'r2' }, '2026-12-06T07:00:00.000Z', 'evidence');
      const after = apply(held, buildReleasePatch(capture, keys, { marker }));
      expect(after.unschedulable).toBe(cordonedAfter);
      expect(after.annotations).toEqual({ [keys.verified]: marker.value });
    },
  );

  it('a release without verification gives it back as the claim found it: cordoned and quarantined', () => {
    const q = quarantined(false);
    const capture = captureClaim(q, OWNER, keys);
    const held = apply(q, buildClaimPatch(q, OWNER, keys));
    const after = apply(held, buildReleasePatch(capture, keys, {}));
    expect(after.unschedulable).toBe(true);
    expect(after.annotations).toEqual({ [keys.quarantined]: q.annotations[keys.quarantined] });
  });

  it('quarantined again, the record keeps the first run’s wasCordoned', () => {
    const q = quarantined(false);
    const capture = captureClaim(q, OWNER, keys);
    const again = quarantineRecord({ capture, drainTimeout: '45m0s', blockedBy: [], atMs: 0, run: 'second' });
    expect(again.wasCordoned).toBe(false);
  });
});

describe('what blocked the drain', () => {
  it.each([
    [{ matchLabels: { app: 'db' } }, { app: 'db', tier: 'x' }, true],
    [{ matchLabels: { app: 'db' } }, { app: 'web' }, false],
    [{}, { anything: 'y' }, true],
    [undefined, { app: 'db' }, false],
    [{ matchExpressions: [{ key: 'app', operator: 'In', values: ['db', 'cache'] }] }, { app: 'cache' }, true],
    [{ matchExpressions: [{ key: 'app', operator: 'In', values: ['db'] }] }, {}, false],
    [{ matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['db'] }] }, {}, true],
    [{ matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['db'] }] }, { app: 'db' }, false],
    [{ matchExpressions: [{ key: 'app', operator: 'Exists' }] }, { app: '' }, true],
    [{ matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, { app: 'db' }, false],
    [{ matchExpressions: [{ key: 'app', operator: 'Gt', values: ['1'] }] }, { app: '2' }, false],
  ])('selector %j selects %j: %s', (selector, labels, want) => {
    expect(selectorMatches(selector, labels)).toBe(want);
  });

  const pdb = (name: string, app: string, allowed = 0): PdbState => ({
    namespace: 'shop',
    name,
    selector: { matchLabels: { app } },
    status: { disruptionsAllowed: allowed, currentHealthy: 1, desiredHealthy: 1 },
  });

  it('groups the blocked pods by the PDB that covers each; pods no PDB covers come last', () => {
    const blockers = drainBlockers(
      ['shop/web-1', 'shop/db-0', 'shop/web-2', 'shop/gone-1'],
      [pdb('web', 'web'), pdb('db', 'db'), pdb('cache', 'cache')],
      [
        { namespace: 'shop', name: 'web-1', labels: { app: 'web' } },
        { namespace: 'shop', name: 'web-2', labels: { app: 'web' } },
        { namespace: 'shop', name: 'db-0', labels: { app: 'db' } },
        { namespace: 'other', name: 'gone-1', labels: { app: 'db' } },
      ],
    );
    expect(blockers).toEqual([
      { pdb: 'shop/db', status: { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 }, pods: ['shop/db-0'] },
      { pdb: 'shop/web', status: { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 }, pods: ['shop/web-1', 'shop/web-2'] },
      { pods: ['shop/gone-1'] },
    ]);
    expect(describeBlockers(blockers)).toBe(
      'PodDisruptionBudget shop/db (allows 0 disruptions, 1/1 healthy) holding shop/db-0; ' +
        'PodDisruptionBudget shop/web (allows 0 disruptions, 1/1 healthy) holding shop/web-1, shop/web-2; ' +
        'pods no PodDisruptionBudget covers (still terminating, or gone since): shop/gone-1',
    );
    expect(describeBlockers([])).toBe('kubectl drain named no pod it was waiting for');
  });
});

describe('liftQuarantine', () => {
  const n = { name: 'w1', uid: 'uid-w1' };
  const text = formatQuarantine(RECORD);

  it('says: fix the PDB, then rerun; by hand: a CAS-guarded patch that removes the record and uncordons only a node schedulable before', () => {
    const lift = liftQuarantine(n, RECORD, text, keys, { kubeContext: 'prod' });
    expect(lift.lift).toBe(
      'let PodDisruptionBudget shop/db allow the eviction, then rerun: the rerun reboots w1 and restores its schedulability',
    );
    expect(lift.byHand.startsWith("`kubectl --context='prod' patch node w1 --type=json -p ")).toBe(true);
    const before = node({ name: 'w1', unschedulable: true, hasAnnotationsMap: true, annotations: { [keys.quarantined]: text } });
    const ops = JSON.parse(lift.byHand.replace(/^.*-p '(.*)'`$/, '$1').replace(/'\\''/g, "'"));
    const after = nodeFromJson(applyJsonPatch(nodeJson(before), ops), 'worker');
    expect(after.unschedulable).toBe(false);
    expect(after.annotations).toEqual({});
    // a run claimed or re-quarantined it since: the patch fails
    expect(() =>
      applyJsonPatch(nodeJson({ ...before, annotations: { [keys.quarantined]: formatQuarantine({ ...RECORD, run: 'x' }) } }), ops),
    ).toThrow(PatchRejected);
  });

  it('a node cordoned before the run stays cordoned', () => {
    const lift = liftQuarantine(n, { ...RECORD, wasCordoned: true }, text, keys, {});
    expect(lift.lift).toContain('(it stays cordoned: it was cordoned before the run)');
    expect(lift.byHand).not.toContain('unschedulable');
  });
});

describe('a quarantined node is capacity out of service', () => {
  it('quarantinedNodes: every node carrying the annotation, readable or not, with when and by which run', () => {
    const nodes = [
      node({ name: 'w1' }),
      node({ name: 'w2', unschedulable: true, annotations: { [keys.quarantined]: formatQuarantine(RECORD) } }),
      node({ name: 'w3', unschedulable: true, annotations: { [keys.quarantined]: 'not json' } }),
    ];
    expect(quarantinedNodes(nodes, keys)).toEqual([
      { name: 'w2', role: 'worker', labels: nodes[1].labels, byThisRun: false, at: RECORD.at, run: RECORD.run },
      { name: 'w3', role: 'worker', labels: nodes[2].labels, byThisRun: false, at: undefined, run: undefined },
    ]);
  });

  it.each([
    [false, 'quarantined', true],
    [true, 'quarantined', true],
    [true, 'rebooted', false],
    [true, 'reboot-skipped', false],
    [true, 'failed', true],
    [true, 'refused', true],
    [false, 'failed', false],
  ] as const)('quarantinedAfter(was %s, %s) = %s', (was, outcome, want) => {
    expect(quarantinedAfter(was, outcome)).toBe(want);
  });

  it('capacityStopMessage names the quarantined nodes, why nothing more started, and each node left', () => {
    const m = capacityStopMessage({
      notStarted: [
        { node: 'w3', reason: 'max-unavailable', message: '2 workers out (quarantined: w1, w9), max-unavailable is 2' },
        { node: 'cp1', reason: 'workers-first', message: 'control planes start after every worker: 1 worker not finished' },
      ],
      quarantined: [
        { name: 'w1', role: 'worker', labels: {}, byThisRun: true },
        { name: 'w9', role: 'worker', labels: {}, byThisRun: false, at: '2026-11-01T10:00:00.000Z', run: 'acme/infra/runs/7/attempts/1/x' },
      ],
      maxUnavailable: 2,
      topologyKey: 'topology.kubernetes.io/zone',
    });
    expect(m.message).toBe(
      'the roll stopped with 2 node(s) not started (w3, cp1): quarantined nodes are out of service and count toward max-unavailable (2) ' +
        'and the topology.kubernetes.io/zone they are in, so starting another would exceed it. ' +
        'Quarantined: w1 (quarantined by this run), w9 (quarantined since 2026-11-01T10:00:00.000Z by acme/infra/runs/7/attempts/1/x). ' +
        'Not started: w3: 2 workers out (quarantined: w1, w9), max-unavailable is 2; cp1: control planes start after every worker: 1 worker not finished',
    );
    expect(m.nextStep).toMatch(/^Lift the quarantine .*or raise max-unavailable, then rerun\.$/);
  });
});
