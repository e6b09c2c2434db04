// plan's drain forecast in words (src/core/model/record.ts DrainForecast): the lines the job summary
// shows for a node and the one line its log says. Plain text; the summary escapes it (summary/forecast.ts).
import { plural } from '../core/format.js';
import type { DrainForecast } from '../core/model/record.js';
import { unsatisfiableForecastLine } from './unsatisfiableDrain.js';

/** One line per thing that would stop the drain now, or the one line saying it would go through. */
export function forecastLines(f: DrainForecast): string[] {
  if (f.unknown) return [`drain forecast not made: ${f.unknown}`];
  const lines: string[] = f.unsatisfiable ? [unsatisfiableForecastLine(f.unsatisfiable)] : [];
  if (f.refusals.length) {
    const byReason = new Map<string, string[]>();
    for (const r of f.refusals) byReason.set(r.reason, [...(byReason.get(r.reason) ?? []), r.pod]);
    for (const [reason, pods] of byReason) {
      lines.push(`drain would refuse at once, evicting nothing: ${reason}: ${pods.join(', ')} (the action never passes --force)`);
    }
  }
  const byBudgets = new Map<string, { budgets: string[]; pods: string[]; message: string }>();
  for (const b of f.blocked) {
    const key = b.budgets.join(',');
    const g = byBudgets.get(key) ?? { budgets: b.budgets, pods: [], message: b.message };
    g.pods.push(b.pod);
    byBudgets.set(key, g);
  }
  for (const g of byBudgets.values()) {
    const named = g.budgets.map((name) => {
      const s = f.budgets.find((x) => x.pdb === name);
      return s
        ? `PDB ${name} (allows ${plural(s.disruptionsAllowed, 'disruption')}; ${s.currentHealthy} healthy, ${s.desiredHealthy} needed)`
        : `PDB ${name}`;
    });
    const by = named.length ? named.join(', ') : `an eviction refusal (${g.message})`;
    lines.push(`drain would be blocked now by ${by}: ${plural(g.pods.length, 'pod')} ${g.pods.join(', ')}`);
  }
  for (const x of f.errors) lines.push(`dry-run eviction of ${x.pod} got no answer of the PDB check: ${x.message}`);
  if (lines.length === 0) {
    lines.push(
      f.evictions === 0
        ? 'drain would go through now: no pod to evict'
        : `drain would go through now: ${plural(f.evictions, 'pod')} to evict, every dry-run eviction allowed`,
    );
  }
  return lines;
}

/** The forecast in one line (the log). */
export function describeForecast(f: DrainForecast): string {
  return forecastLines(f).join('; ');
}
