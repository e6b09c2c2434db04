// mode: plan: read the evidence of every selected node in one batch and say what apply would do.
import type { DecisionRecord, EvidenceReadings, EvidenceVerdict, NodeState } from '../core/model.js';
import { readEvidence } from './readEvidence.js';
import { isTalosAtLeast, rebootEvidence } from '../rules/evidence.js';
import type { RunContext } from './context.js';

export async function planNodes(ctx: RunContext, selected: NodeState[]): Promise<DecisionRecord[]> {
  const t0 = ctx.clock.now();
  const targets = selected.map((n) => ({ name: n.name, address: n.internalIPs[0] }));
  const readings =
    ctx.config.reboot === 'always'
      ? new Map<string, EvidenceReadings>()
      : await readEvidence(ctx.talos, targets, ctx.config.criConfigPaths);
  const elapsed = ctx.clock.now() - t0;
  return selected.map((n) => {
    const r = readings.get(n.name);
    const evidence = r ? rebootEvidence(r, ctx.desired, { marginMs: ctx.config.evidenceMarginMs }) : undefined;
    const record: DecisionRecord = {
      node: n.name,
      uid: n.uid,
      role: n.role,
      internalIP: n.internalIPs[0],
      outcome: evidence?.verdict === 'skip' ? 'planned-skip' : 'planned-reboot',
      reason: evidence ? planReason(evidence) : 'reboot: always was requested, so every selected node is rebooted',
      steps: [],
      durationMs: elapsed,
    };
    return evidence ? { ...record, evidence } : record;
  });
}

/** What apply would do, from the evidence; on Talos >= 1.14 a reboot may still be skipped after the patch. */
function planReason(evidence: EvidenceVerdict): string {
  const v = evidence.values.talosVersion;
  if (evidence.verdict === 'reboot' && v && isTalosAtLeast(v, 1, 14)) {
    return `${evidence.reason}; Talos ${v} restarts cri itself after the patch, so the reboot is skipped if a new containerd start proves the credential within cri-restart-wait`;
  }
  return evidence.reason;
}
