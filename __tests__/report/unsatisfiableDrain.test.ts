// The unsatisfiable-drain refusal in words (src/report/unsatisfiableDrain.ts): each case's reason and fix.
import { describe, expect, it } from 'vitest';
import type { UnsatisfiableDrain } from '../../src/core/model/unsatisfiableDrain.js';
import { unsatisfiableForecastLine, unsatisfiableMessage, unsatisfiableNextStep } from '../../src/report/unsatisfiableDrain.js';

const U: UnsatisfiableDrain = {
  node: 'w-1',
  blocking: [
    {
      case: 'min-available-all',
      budgets: ['shop/db'],
      spec: 'minAvailable: 100%',
      status: { disruptionsAllowed: 0, currentHealthy: 3, desiredHealthy: 3, expectedPods: 3 },
      pods: ['shop/db-0', 'shop/db-2'],
    },
    { case: 'several-budgets', budgets: ['web/a', 'web/b'], pods: ['web/api-1'] },
  ],
};

describe('the unsatisfiable-drain refusal in words', () => {
  it('the reason names each budget with its spec and status, and the pods it holds; two budgets on one pod say why', () => {
    expect(unsatisfiableMessage(U)).toBe(
      'refused before its claim: the drain of w-1 can never finish: PDB shop/db (minAvailable: 100%; 3 of 3 pods healthy, allows 0 disruptions) holds 2 pods shop/db-0, shop/db-2; ' +
        'pod web/api-1 selected by 2 budgets (web/a, web/b): the eviction API refuses every eviction of a pod with more than one PodDisruptionBudget',
    );
  });
  it('the next step is the fix of each, then a rerun', () => {
    expect(unsatisfiableNextStep(U)).toBe(
      'let shop/db allow one eviction (minAvailable: 2, or maxUnavailable: 1), or scale its workload above 3 replicas, or move shop/db-0, shop/db-2 off w-1 yourself; ' +
        'make the selectors of web/a and web/b disjoint so each pod has at most one budget; then rerun: w-1 was not claimed, cordoned or changed',
    );
  });
  it("plan's line says what apply would do", () => {
    expect(unsatisfiableForecastLine(U)).toMatch(/^apply would refuse w-1 before claiming it: its drain can never finish: PDB shop\/db \(/);
  });
});
