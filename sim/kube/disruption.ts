// The disruption controller: each PodDisruptionBudget's status (disruptionsAllowed, the healthy
// counts, the DisruptionAllowed condition) recomputed whenever a pod of its namespace or the budget
// changes. A budget a test sets directly holds while the pods are healthy, less each eviction in flight.
import type { SimContext } from './context.js';
import { clone } from './json.js';
import { isPodReady, isTerminating } from './objectFacts.js';
import { R } from './resources.js';
import { nowTime } from './schema.js';
import { matchLabelSelector } from './selectors.js';

export class DisruptionController {
  /** PDBs whose budget a test sets directly (addPdb / setPdbAllowed): ns/name → allowed when healthy */
  readonly pdbBudget = new Map<string, number>();
  private readonly pending = new Set<string>();

  constructor(private readonly ctx: SimContext) {}

  schedulePdb(ns: string): void {
    if (this.pending.has(ns)) return;
    this.pending.add(ns);
    this.ctx.timers.after(0, () => {
      this.pending.delete(ns);
      this.recomputePdbs(ns);
    });
  }

  /**
   * Budgets set by a test hold while the pods are healthy; each eviction in flight (its pod still
   * terminating) uses one up. Budgets created through the API follow minAvailable / maxUnavailable.
   */
  recomputePdbs(ns: string): void {
    const { store } = this.ctx;
    const pods = store.list(R.pods, ns);
    for (const b of store.list(R.poddisruptionbudgets, ns)) {
      const sel = b.spec?.selector;
      // an empty selector selects the whole namespace, an absent one nothing (policy/v1, disruption.go since 1.21)
      const matching = pods.filter((p) => matchLabelSelector(sel, p.metadata.labels));
      const live = matching.filter((p) => !isTerminating(p));
      const healthy = live.filter(isPodReady).length;
      const existing = new Set(pods.map((p) => p.metadata.name));
      const disrupted = Object.fromEntries(
        Object.entries((b.status?.disruptedPods ?? {}) as Record<string, string>).filter(([n]) => existing.has(n)),
      );
      const terminatingNames = new Set(pods.filter(isTerminating).map((p) => p.metadata.name));
      const key = `${ns}/${b.metadata.name}`;
      let allowed: number;
      let desired: number;
      const budget = this.pdbBudget.get(key);
      if (budget !== undefined) {
        allowed = Math.max(0, budget - Object.keys(disrupted).length);
        desired = Math.max(0, healthy - allowed);
      } else {
        const expected = live.length;
        const pct = (v: unknown) =>
          typeof v === 'string' && v.endsWith('%') ? Math.ceil((Number(v.slice(0, -1)) / 100) * expected) : Number(v ?? 0);
        desired =
          b.spec?.minAvailable !== undefined
            ? pct(b.spec.minAvailable)
            : b.spec?.maxUnavailable !== undefined
              ? Math.max(0, expected - pct(b.spec.maxUnavailable))
              : 0;
        // A terminating pod already counts as unhealthy; only evictions not yet visible as deletions count again.
        allowed = Math.max(0, healthy - desired - Object.keys(disrupted).filter((n) => !terminatingNames.has(n)).length);
      }
      const next = clone(b);
      const prevCond = (b.status?.conditions ?? [])[0];
      const condStatus = allowed > 0 ? 'True' : 'False';
      next.status = {
        ...(Object.keys(disrupted).length ? { disruptedPods: disrupted } : {}),
        observedGeneration: b.metadata.generation ?? 1,
        disruptionsAllowed: allowed,
        currentHealthy: healthy,
        desiredHealthy: desired,
        expectedPods: live.length,
        conditions: [
          {
            type: 'DisruptionAllowed',
            status: condStatus,
            observedGeneration: b.metadata.generation ?? 1,
            lastTransitionTime: prevCond?.status === condStatus ? prevCond.lastTransitionTime : nowTime(),
            reason: allowed > 0 ? 'SufficientPods' : 'InsufficientPods',
            message: '',
          },
        ],
      };
      store.update(R.poddisruptionbudgets, next);
    }
  }
}
