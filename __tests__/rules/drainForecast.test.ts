// kubectl drain's filters as the forecast mirrors them (kubernetes/kubectl pkg/drain/filters.go), and
// the forecast built from the dry-run evictions' answers.
import { describe, expect, it } from 'vitest';
import type { PdbState } from '../../src/core/model/cluster.js';
import { ACTION_DRAIN_FLAGS, type DrainPodReading, type EvictionAnswer } from '../../src/core/workloads.js';
import { budgetsCovering, drainForecast, filterDrainPods, unknownForecast } from '../../src/rules/drainForecast.js';

const pod = (name: string, more: Partial<DrainPodReading> = {}): DrainPodReading => ({
  namespace: 'default',
  name,
  nodeName: 'w-1',
  phase: 'Running',
  mirror: false,
  terminating: false,
  ready: true,
  emptyDir: false,
  labels: {},
  controller: { kind: 'ReplicaSet', name: `${name}-rs` },
  controllerApiVersion: 'apps/v1',
  ...more,
});
const ds = (name: string, more: Partial<DrainPodReading> = {}) =>
  pod(name, { namespace: 'kube-system', controller: { kind: 'DaemonSet', name: 'cilium' }, ...more });
const names = (ps: DrainPodReading[]) => ps.map((p) => `${p.namespace}/${p.name}`);
const DS = new Set(['kube-system/cilium']);

describe('filterDrainPods (the action flags: --ignore-daemonsets --delete-emptydir-data, no --force)', () => {
  it('evicts controlled pods and emptyDir pods, skips DaemonSet and mirror pods, refuses a bare pod', () => {
    const f = filterDrainPods(
      [
        pod('web'),
        pod('cache', { emptyDir: true }),
        ds('cilium-x'),
        pod('static', { mirror: true, controller: undefined }),
        pod('bare', { controller: undefined }),
      ],
      'w-1',
      DS,
      ACTION_DRAIN_FLAGS,
    );
    expect(names(f.evict)).toEqual(['default/web', 'default/cache']);
    expect(f.refusals).toEqual([
      { pod: 'default/bare', reason: 'cannot delete Pods that declare no controller (use --force to override)' },
    ]);
  });

  it('only the pods of the node', () => {
    expect(names(filterDrainPods([pod('a'), pod('b', { nodeName: 'w-2' })], 'w-1', DS, ACTION_DRAIN_FLAGS).evict)).toEqual(['default/a']);
  });

  it('finished pods are deleted whatever they are: bare, emptyDir, or of a DaemonSet that is gone', () => {
    const f = filterDrainPods(
      [
        pod('done', { controller: undefined, phase: 'Succeeded' }),
        pod('failed', { emptyDir: true, phase: 'Failed' }),
        ds('old', { phase: 'Failed', controller: { kind: 'DaemonSet', name: 'gone' } }),
      ],
      'w-1',
      new Set(),
      { ignoreDaemonSets: true, deleteEmptyDirData: false, force: false },
    );
    expect(names(f.evict)).toEqual(['default/done', 'default/failed', 'kube-system/old']);
    expect(f.refusals).toEqual([]);
  });

  it("a pod whose DaemonSet is missing is refused with the GET's NotFound text, deleted under --force", () => {
    const gone = ds('orphan', { controller: { kind: 'DaemonSet', name: 'gone' } });
    expect(filterDrainPods([gone], 'w-1', DS, ACTION_DRAIN_FLAGS).refusals).toEqual([
      { pod: 'kube-system/orphan', reason: 'cannot delete daemonsets.apps "gone" not found' },
    ]);
    expect(names(filterDrainPods([gone], 'w-1', DS, { ...ACTION_DRAIN_FLAGS, force: true }).evict)).toEqual(['kube-system/orphan']);
  });

  it('a DaemonSet kind of another apiVersion is not a DaemonSet to drain (isControllerRefDaemonSet)', () => {
    expect(names(filterDrainPods([ds('x', { controllerApiVersion: 'extensions/v1beta1' })], 'w-1', DS, ACTION_DRAIN_FLAGS).evict)).toEqual([
      'kube-system/x',
    ]);
  });

  it('without --ignore-daemonsets or --delete-emptydir-data, kubectl refuses them', () => {
    const f = filterDrainPods([ds('cilium-x'), pod('cache', { emptyDir: true })], 'w-1', DS, {
      ignoreDaemonSets: false,
      deleteEmptyDirData: false,
      force: false,
    });
    expect(f.refusals.map((r) => r.reason)).toEqual([
      'cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)',
      'cannot delete Pods with local storage (use --delete-emptydir-data to override)',
    ]);
    expect(f.evict).toEqual([]);
  });

  it('a bare pod with --force is evicted; a bare mirror pod is skipped, never refused', () => {
    expect(
      names(filterDrainPods([pod('bare', { controller: undefined })], 'w-1', DS, { ...ACTION_DRAIN_FLAGS, force: true }).evict),
    ).toEqual(['default/bare']);
    expect(filterDrainPods([pod('static', { mirror: true, controller: undefined })], 'w-1', DS, ACTION_DRAIN_FLAGS)).toEqual({
      evict: [],
      refusals: [],
    });
  });
});

const pdb = (name: string, labels: Record<string, string> | undefined, allowed = 0, namespace = 'default'): PdbState => ({
  namespace,
  name,
  selector: labels === undefined ? undefined : { matchLabels: labels },
  status: { disruptionsAllowed: allowed, currentHealthy: 2, desiredHealthy: 2 },
});

describe('budgetsCovering (eviction.go getPodDisruptionBudgets)', () => {
  // policy/v1: `selector: {}` covers the whole namespace, an absent one covers nothing (the disruption
  // controller since Kubernetes 1.21, kubernetes#99290; the eviction subresource since 1.29, kubernetes#119732)
  it('same namespace, matching selector; an empty selector covers every pod, an absent one none', () => {
    const p = pod('web', { labels: { app: 'web' } });
    const list = [
      pdb('web', { app: 'web' }),
      pdb('other', { app: 'db' }),
      pdb('all', {}),
      pdb('none', undefined),
      pdb('elsewhere', { app: 'web' }, 0, 'prod'),
    ];
    expect(budgetsCovering(p, list).map((b) => b.name)).toEqual(['web', 'all']);
  });
});

describe('drainForecast', () => {
  const msg = "Cannot evict pod as it would violate the pod's disruption budget.";
  it('names the blocked pods with their PDBs and the budgets with their status; not ok', () => {
    const f = filterDrainPods(
      [pod('web', { labels: { app: 'web' } }), pod('api'), pod('bare', { controller: undefined })],
      'w-1',
      DS,
      ACTION_DRAIN_FLAGS,
    );
    const answers = new Map<string, EvictionAnswer>([
      ['default/web', { kind: 'blocked', message: msg }],
      ['default/api', { kind: 'allowed' }],
    ]);
    expect(drainForecast(f, answers, [pdb('web-pdb', { app: 'web' })])).toEqual({
      ok: false,
      evictions: 2,
      blocked: [{ pod: 'default/web', budgets: ['default/web-pdb'], message: msg }],
      budgets: [{ pdb: 'default/web-pdb', disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2 }],
      refusals: [{ pod: 'default/bare', reason: 'cannot delete Pods that declare no controller (use --force to override)' }],
      errors: [],
    });
  });

  it('every eviction allowed (or the pod gone) and nothing refused: ok', () => {
    const f = filterDrainPods([pod('a'), pod('b')], 'w-1', DS, ACTION_DRAIN_FLAGS);
    const answers = new Map<string, EvictionAnswer>([
      ['default/a', { kind: 'allowed' }],
      ['default/b', { kind: 'gone' }],
    ]);
    expect(drainForecast(f, answers, []).ok).toBe(true);
  });

  it('an error or a missing answer is not ok and says so', () => {
    const f = filterDrainPods([pod('a'), pod('b')], 'w-1', DS, ACTION_DRAIN_FLAGS);
    const r = drainForecast(f, new Map([['default/a', { kind: 'error', message: 'boom' }]]), []);
    expect(r.ok).toBe(false);
    expect(r.errors).toEqual([
      { pod: 'default/a', message: 'boom' },
      { pod: 'default/b', message: 'no dry-run eviction was sent' },
    ]);
  });

  it('unknownForecast is not ok and carries why', () => {
    expect(unknownForecast('x')).toMatchObject({ ok: false, unknown: 'x', evictions: 0 });
  });
});
