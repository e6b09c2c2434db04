// mode: plan: read the evidence of every selected node in one batch and say what apply would do,
// with what the credential patch would change in each machine config: the action's own change list,
// built from the config read and checked locally; nothing is sent to a node, not even a dry run
// (docs/plan.md says what a plan can and cannot prove).
import { pool } from '../core/async.js';
import { ToolError, errorMessage } from '../core/errors.js';
import type { NodeState } from '../core/model/node.js';
import type { EvidenceReadings } from '../core/model/readings.js';
import type { ConfigPreview, DecisionRecord } from '../core/model/record.js';
import type { EvidenceVerdict } from '../core/model/verdict.js';
import { READ_CALLS_IN_FLIGHT, readEvidence } from './readEvidence.js';
import { rebootEvidence } from '../rules/evidence.js';
import type { HostToRoll } from '../core/model/hosts.js';
import { hostsToRoll } from '../rules/marker.js';
import { isTalosAtLeast } from '../rules/evidence/talosVersion.js';
import type { RunContext } from './context.js';

export async function planNodes(ctx: RunContext, selected: NodeState[]): Promise<DecisionRecord[]> {
  const t0 = ctx.clock.now();
  const targets = selected.map((n) => ({ name: n.name, address: n.internalIPs[0] }));
  const [readings, previews] = await Promise.all([
    ctx.config.reboot === 'always' ? new Map<string, EvidenceReadings>() : readEvidence(ctx.talos, targets, ctx.config.criConfigPaths),
    previewConfigs(ctx, targets),
  ]);
  const elapsed = ctx.clock.now() - t0;
  return selected.map((n, i) => {
    const { hosts, evidence } = evidenceBeforeClaim(ctx, n, readings.get(n.name));
    const record: DecisionRecord = {
      node: n.name,
      uid: n.uid,
      role: n.role,
      internalIP: n.internalIPs[0],
      outcome: evidence?.verdict === 'skip' ? 'planned-skip' : 'planned-reboot',
      reason: evidence ? planReason(evidence) : 'reboot: always was requested, so every selected node is rebooted',
      steps: [],
      durationMs: elapsed,
      configPreview: previews[i],
      hosts: hosts.map((h) => ({ ...h })),
    };
    return evidence ? { ...record, evidence } : record;
  });
}

/**
 * The hosts `n` is stale for, as apply's roll of it would judge them (src/rules/marker.ts), and the
 * evidence verdict its readings give before any claim or patch (none under `reboot: always`). Plan
 * shows it; apply's unsatisfiable-drain start check asks it whether the node's roll certainly drains.
 */
export function evidenceBeforeClaim(
  ctx: RunContext,
  n: NodeState,
  r: EvidenceReadings | undefined,
): { hosts: HostToRoll[]; evidence?: EvidenceVerdict } {
  const hosts = hostsToRoll(n.annotations, ctx.keys, ctx.want);
  const desired = ctx.desired.filter((d) => hosts.some((h) => h.host === d.host));
  return { hosts, ...(r ? { evidence: rebootEvidence(r, desired, { marginMs: ctx.config.evidenceMarginMs }) } : {}) };
}

/** What apply would do, from the evidence; on Talos >= 1.14 a reboot may still be skipped after the patch. */
function planReason(evidence: EvidenceVerdict): string {
  const v = evidence.values.talosVersion;
  if (evidence.verdict === 'reboot' && v && isTalosAtLeast(v, 1, 14)) {
    return `${evidence.reason}; Talos ${v} restarts cri itself after the patch, so the reboot is skipped if a new containerd start proves the credential within cri-restart-wait`;
  }
  return evidence.reason;
}

const CLI_PATH_PREVIEW: ConfigPreview = {
  shown: false,
  why: "Talos is reached through talosctl (no client certificate in the talosconfig), which applies the patch with Talos's own merge and re-encodes the whole config: the action cannot say which bytes it would write (docs/plan.md)",
};

/** The change list of the credential patch for every node, at most READ_CALLS_IN_FLIGHT at once; a failed one says why. */
async function previewConfigs(ctx: RunContext, targets: Array<{ name: string; address: string }>): Promise<ConfigPreview[]> {
  const preview = ctx.talos.previewCredentialPatch?.bind(ctx.talos);
  if (!preview) return targets.map(() => CLI_PATH_PREVIEW);
  return pool(targets, READ_CALLS_IN_FLIGHT, async (t): Promise<ConfigPreview> => {
    try {
      return await preview(t.address);
    } catch (e) {
      if (!(e instanceof ToolError)) throw e;
      return { shown: false, why: `the machine config could not be read or patched: ${errorMessage(e)}` };
    }
  });
}
