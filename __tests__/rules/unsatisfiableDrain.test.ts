// The unsatisfiable-drain rule (src/rules/unsatisfiableDrain.ts, docs/refused-drains.md): each case it
// refuses, and each near miss it lets go ahead as today, both ways; the same rule in plan's forecast.
import { describe, expect, it } from 'vitest';
import type { PdbState } from '../../src/core/model/cluster.js';
import type { EvidenceVerdict } from '../../src/core/model/verdict.js';
import { ACTION_DRAIN_FLAGS, type DrainPodReading } from '../../src/core/workloads.js';
import { drainForecast, filterDrainPods } from '../../src/rules/drainForecast.js';
import { budgetMayNeverAllow, drainIsCertain, mayBeUnsatisfiable, unsatisfiableDrain } from '../../src/rules/unsatisfiableDrain.js';

const pod = (name: string, more: Partial<DrainPodReading> = {}): DrainPodReading => ({
  namespace: 'shop',
  name,
  nodeName: 'w-1',
  phase: 'Running',
  mirror: false,
  terminating: false,
  ready: true,
  emptyDir: false,
  labels: { app: 'db' },
  controller: { kind: 'StatefulSet', name: 'db' },
  controllerApiVersion: 'apps/v1',
  ...more,
});

/** A budget as the disruption controller leaves it over `healthy` Ready pods of `expected`, all observed. */
const pdb = (more: Partial<PdbState> = {}, healthy = 2, expected = 2): PdbState => ({
  namespace: 'shop',
  name: 'db',
  selector: { matchLabels: { app: 'db' } },
  maxUnavailable: 0,
  generation: 1,
  observedGeneration: 1,
  expectedPods: expected,
  status: { disruptionsAllowed: 0, currentHealthy: healthy, desiredHealthy: expected },
  ...more,
});

/** db-0 on w-1 (the node drained), db-1 on w-2 */
const POD_0 = pod('db-0');
const POD_1 = pod('db-1', { nodeName: 'w-2' });

function judge(pods: DrainPodReading[], pdbs: PdbState[], daemonSets: string[] = []) {
  return unsatisfiableDrain('w-1', filterDrainPods(pods, 'w-1', new Set(daemonSets), ACTION_DRAIN_FLAGS), pods, pdbs);
}

describe('unsatisfiableDrain: refused, each case of the rule', () => {
  it('maxUnavailable: 0 over pods that are all healthy: the budget, its spec and status, the pod it holds', () => {
    expect(judge([POD_0, POD_1], [pdb()])).toEqual({
      node: 'w-1',
      blocking: [
        {
          case: 'max-unavailable-zero',
          budgets: ['shop/db'],
          spec: 'maxUnavailable: 0',
          status: { disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2, expectedPods: 2 },
          pods: ['shop/db-0'],
        },
      ],
    });
  });

  it('maxUnavailable: "0%" is zero too (GetScaledValueFromIntOrPercent rounds 0% to 0)', () => {
    expect(judge([POD_0, POD_1], [pdb({ maxUnavailable: '0%' })])?.blocking[0].case).toBe('max-unavailable-zero');
  });

  it('minAvailable equal to the expected pods (a number), "100%", or a percentage that rounds up to all of them', () => {
    for (const minAvailable of [2, 3, '100%', '90%']) {
      const u = judge([POD_0, POD_1], [pdb({ maxUnavailable: undefined, minAvailable })]);
      expect(u?.blocking[0], String(minAvailable)).toMatchObject({ case: 'min-available-all', spec: `minAvailable: ${minAvailable}` });
    }
  });

  it('an explicit IfHealthyBudget policy is the default: refused', () => {
    expect(judge([POD_0, POD_1], [pdb({ unhealthyPodEvictionPolicy: 'IfHealthyBudget' })])).toBeDefined();
  });

  it('several pods of the node held by one budget are named together', () => {
    const p2 = pod('db-2');
    const u = judge([POD_0, POD_1, p2], [pdb({}, 3, 3)]);
    expect(u?.blocking).toHaveLength(1);
    expect(u?.blocking[0].pods).toEqual(['shop/db-0', 'shop/db-2']);
  });

  it('two budgets select one pod: the eviction API answers 500 every time, whatever they allow or the pods health', () => {
    const other = pdb({ name: 'all-shop', selector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] }, maxUnavailable: 5 });
    const allows = pdb({ maxUnavailable: 1, status: { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1 } });
    expect(judge([pod('db-0', { ready: false }), POD_1], [allows, other])).toEqual({
      node: 'w-1',
      blocking: [{ case: 'several-budgets', budgets: ['shop/all-shop', 'shop/db'], pods: ['shop/db-0'] }],
    });
  });
});

describe('unsatisfiableDrain: goes ahead as today (uncertain, or it may allow)', () => {
  const cases: Array<[string, DrainPodReading[], PdbState[], string[]?]> = [
    [
      'the budget allows one (maxUnavailable: 1)',
      [POD_0, POD_1],
      [pdb({ maxUnavailable: 1, status: { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1 } })],
    ],
    [
      'minAvailable below the expected pods',
      [POD_0, POD_1],
      [pdb({ maxUnavailable: undefined, minAvailable: 1, status: { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1 } })],
    ],
    [
      'minAvailable "50%" of 2 (1 needed)',
      [POD_0, POD_1],
      [pdb({ maxUnavailable: undefined, minAvailable: '50%', status: { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1 } })],
    ],
    [
      'a pod it selects elsewhere is not Ready: the budget blocks only until it is',
      [POD_0, pod('db-1', { nodeName: 'w-2', ready: false })],
      [pdb({ maxUnavailable: undefined, minAvailable: 1, status: { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 } }, 1, 2)],
    ],
    [
      'maxUnavailable 0 but a selected pod not Ready (the controller counts it unhealthy)',
      [POD_0, pod('db-1', { nodeName: 'w-2', ready: false })],
      [pdb({}, 1, 2)],
    ],
    ['the pod on the node is not Ready (the unhealthy-pod path)', [pod('db-0', { ready: false }), POD_1], [pdb({}, 1, 2)]],
    [
      'the status is not observed yet (observedGeneration behind: 429 only until the controller catches up)',
      [POD_0, POD_1],
      [pdb({ generation: 2 })],
    ],
    ['no generation read', [POD_0, POD_1], [pdb({ generation: undefined })]],
    ['no expectedPods read (no status)', [POD_0, POD_1], [pdb({ expectedPods: undefined })]],
    [
      'unhealthyPodEvictionPolicy AlwaysAllow: a pod that turns unready is evicted',
      [POD_0, POD_1],
      [pdb({ unhealthyPodEvictionPolicy: 'AlwaysAllow' })],
    ],
    ['an unknown unhealthyPodEvictionPolicy', [POD_0, POD_1], [pdb({ unhealthyPodEvictionPolicy: 'Someday' })]],
    [
      "spec and status disagree (maxUnavailable 1 but 0 allowed: an eviction in flight, the controller's own view)",
      [POD_0, POD_1],
      [pdb({ maxUnavailable: 1 })],
    ],
    ['the status counts fewer healthy than expected', [POD_0, POD_1], [pdb({}, 1, 2)]],
    ['more pods selected than the controller expects (one appeared since)', [POD_0, POD_1, pod('db-2', { nodeName: 'w-3' })], [pdb()]],
    ['an empty selector (the eviction subresource skipped it before Kubernetes 1.29)', [POD_0, POD_1], [pdb({ selector: {} })]],
    ['no selector (selects nothing)', [POD_0, POD_1], [pdb({ selector: undefined })]],
    [
      'the pod on the node is Pending (evicted without a budget: canIgnorePDB)',
      [pod('db-0', { phase: 'Pending', ready: false }), POD_1],
      [pdb()],
    ],
    ['the pod on the node is being deleted', [pod('db-0', { terminating: true }), POD_1], [pdb()]],
    [
      'the pod on the node finished (drain deletes it, no budget asked)',
      [pod('db-0', { phase: 'Succeeded', ready: false }), POD_1],
      [pdb()],
    ],
    [
      'the pod on the node is a DaemonSet pod (drain leaves it)',
      [pod('db-0', { controller: { kind: 'DaemonSet', name: 'db' } }), POD_1],
      [pdb()],
      ['shop/db'],
    ],
    ['the pod on the node is a mirror pod (drain skips it)', [pod('db-0', { mirror: true, controller: undefined }), POD_1], [pdb()]],
    ['the budget is in another namespace', [POD_0, POD_1], [pdb({ namespace: 'other' })]],
    ['the budget selects other pods', [POD_0, POD_1], [pdb({ selector: { matchLabels: { app: 'web' } } })]],
    ['the node has no pod the budget selects', [POD_1], [pdb()]],
    [
      'two budgets, one of them with an empty selector, the other allowing (counts as one on an apiserver before 1.29)',
      [POD_0, POD_1],
      [
        pdb({ maxUnavailable: 1, status: { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1 } }),
        pdb({ name: 'ns', selector: {} }),
      ],
    ],
  ];
  for (const [what, pods, pdbs, daemonSets] of cases) {
    it(what, () => {
      expect(judge(pods, pdbs, daemonSets)).toBeUndefined();
    });
  }
});

describe('the budgets alone: whether the pods need listing at all', () => {
  it('a full-health budget, or two budgets in one namespace, may hold a drain; others cannot', () => {
    expect(budgetMayNeverAllow(pdb())).toBe(true);
    expect(budgetMayNeverAllow(pdb({ maxUnavailable: 1 }))).toBe(false);
    expect(mayBeUnsatisfiable([])).toBe(false);
    expect(mayBeUnsatisfiable([pdb({ maxUnavailable: 1, status: { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1 } })])).toBe(
      false,
    );
    expect(mayBeUnsatisfiable([pdb()])).toBe(true);
    const allows = pdb({ maxUnavailable: 1, status: { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1 } });
    expect(mayBeUnsatisfiable([allows, { ...allows, name: 'other' }])).toBe(true);
    expect(mayBeUnsatisfiable([allows, { ...allows, name: 'other', namespace: 'web' }])).toBe(false);
  });
});

describe('drainIsCertain: only a roll that certainly drains is refused', () => {
  const verdict = (v: 'reboot' | 'skip', talosVersion?: string) =>
    ({ verdict: v, values: { ...(talosVersion ? { talosVersion } : {}) } }) as unknown as EvidenceVerdict;
  it('reboot: always drains; evidence saying reboot on Talos below 1.14 (or unread) drains', () => {
    expect(drainIsCertain('always', undefined)).toBe(true);
    expect(drainIsCertain('evidence', verdict('reboot', 'v1.13.2'))).toBe(true);
    expect(drainIsCertain('evidence', verdict('reboot'))).toBe(true);
  });
  it('evidence saying skip, Talos 1.14 (restarts cri itself), or no evidence: the drain may not happen', () => {
    expect(drainIsCertain('evidence', verdict('skip', 'v1.13.2'))).toBe(false);
    expect(drainIsCertain('evidence', verdict('reboot', 'v1.14.0'))).toBe(false);
    expect(drainIsCertain('evidence', undefined)).toBe(false);
  });
});

describe("plan's forecast asks the same rule", () => {
  const pods = [POD_0, POD_1];
  const filter = filterDrainPods(pods, 'w-1', new Set(), ACTION_DRAIN_FLAGS);
  const answers = new Map([
    ['shop/db-0', { kind: 'blocked' as const, message: "Cannot evict pod as it would violate the pod's disruption budget." }],
  ]);
  it('names the refusal apply would make when the drain is certain', () => {
    const f = drainForecast(filter, answers, [pdb()], { node: 'w-1', pods, drainIsCertain: true });
    expect(f.unsatisfiable).toEqual(judge(pods, [pdb()]));
    expect(f.ok).toBe(false);
  });
  it('says nothing of it when the roll may skip the drain, or without the pods', () => {
    expect(drainForecast(filter, answers, [pdb()], { node: 'w-1', pods, drainIsCertain: false }).unsatisfiable).toBeUndefined();
    expect(drainForecast(filter, answers, [pdb()]).unsatisfiable).toBeUndefined();
  });
});
