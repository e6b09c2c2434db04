// Step outputs. The publisher (src/action/publish.ts) sets them on success and on failure alike, so a later step can read what
// happened to each node without parsing the summary.
import type { HostToRoll } from '../core/model/hosts.js';
import type { Role } from '../core/model/node.js';
import type {
  ActionResult,
  DecisionRecord,
  DrainForecast,
  MarksNote,
  Outcome,
  ProofUndecided,
  QuarantineNote,
} from '../core/model/record.js';
import type { RolloutResult } from '../core/model/rolloutResult.js';
import type { EvidenceVerdict } from '../core/model/verdict.js';
import type { Redactor } from '../core/redact.js';
import type { FenceRow } from '../rules/fences.js';

export interface DecisionStepOutput {
  name: string;
  startedAt?: string;
  durationMs: number;
  ok: boolean;
  detail?: string;
}

/** One element of the `decisions` output. Absent facts are `null`, so every key is always present. */
export interface DecisionOutput {
  name: string;
  uid: string;
  role: Role;
  internalIP: string;
  outcome: Outcome;
  reason: string;
  /** the registry hosts the node's roll was for and why each (absent when the record has none: a node refused before its fresh read) */
  hosts?: HostToRoll[];
  evidence: EvidenceVerdict | null;
  proof: EvidenceVerdict | null;
  claim: { attempts: number; conflicts: string[] } | null;
  nextStep: string | null;
  /** why a node this run released stays cordoned (an operator's cordon, a quarantine kept); absent: it does not */
  cordonKept?: string;
  /** the autoscaler marks the run left in place: found before the claim, kept at a release (docs/autoscaler-marks.md); absent: none */
  autoscalerMarks?: MarksNote;
  /** set on a rebooted node whose post-reboot proof could not be decided (see ProofUndecided) */
  proofUndecided: ProofUndecided | null;
  durationMs: number;
  /** when the run started and ended the node (apply mode) */
  startedAt?: string;
  endedAt?: string;
  /** only on a `quarantined` node: what blocked its drain (PDBs and pods) and how to lift it */
  quarantine?: QuarantineNote;
  /** plan mode, only on a `planned-reboot` node: what its drain would meet now (dry-run evictions) */
  drainForecast?: DrainForecast;
  steps: DecisionStepOutput[];
}

export interface ActionOutputs {
  result: ActionResult;
  /** JSON array of DecisionOutput (the fences modes: of FenceRow) */
  decisions: string;
  rebooted: string;
  'reboots-skipped': string;
  refused: string;
  /** selected nodes never started (the roll stopped first) */
  left: string;
  /** the largest number of nodes in flight at once */
  'in-flight-max': string;
}

/**
 * GitHub caps a job's outputs at 1 MB. Hundreds of nodes with every step detail can pass that, so
 * beyond this budget the least useful fields go first (see `compact`); the counts and each node's
 * decision (name, uid, outcome, reason, verdict) are never dropped.
 */
export const DECISIONS_BUDGET_BYTES = 900_000;

export function toDecisionOutput(r: DecisionRecord): DecisionOutput {
  return {
    name: r.node,
    uid: r.uid,
    role: r.role,
    internalIP: r.internalIP,
    outcome: r.outcome,
    reason: r.reason,
    ...(r.hosts ? { hosts: r.hosts.map((h) => ({ ...h })) } : {}),
    evidence: r.evidence ? cloneVerdict(r.evidence) : null,
    proof: r.proof ? cloneVerdict(r.proof) : null,
    claim: r.claim ? { attempts: r.claim.attempts, conflicts: [...r.claim.conflicts] } : null,
    nextStep: r.nextStep ?? null,
    ...(r.cordonKept ? { cordonKept: r.cordonKept } : {}),
    ...(r.autoscalerMarks ? { autoscalerMarks: { found: [...r.autoscalerMarks.found], kept: [...r.autoscalerMarks.kept] } } : {}),
    proofUndecided: r.proofUndecided ? { ...r.proofUndecided } : null,
    durationMs: r.durationMs,
    ...(r.startedAt ? { startedAt: r.startedAt } : {}),
    ...(r.endedAt ? { endedAt: r.endedAt } : {}),
    ...(r.quarantine ? { quarantine: structuredClone(r.quarantine) } : {}),
    ...(r.drainForecast ? { drainForecast: structuredClone(r.drainForecast) } : {}),
    steps: r.steps.map((s) => ({
      name: s.name,
      startedAt: s.startedAt,
      durationMs: s.durationMs,
      ok: s.ok,
      ...(s.detail !== undefined ? { detail: s.detail } : {}),
    })),
  };
}

function cloneVerdict(v: EvidenceVerdict): EvidenceVerdict {
  const out: EvidenceVerdict = {
    verdict: v.verdict,
    reason: v.reason,
    values: { ...v.values, files: v.values.files.map((f) => ({ ...f, ...(f.byHost ? { byHost: { ...f.byHost } } : {}) })) },
  };
  if (v.ordering !== undefined) out.ordering = v.ordering;
  if (v.contradicts !== undefined) out.contradicts = v.contradicts;
  if (v.failedRule !== undefined) out.failedRule = v.failedRule;
  return out;
}

// Each level keeps what the previous one kept minus the fields a consumer is least likely to need:
// 1 drops free-text step details, 2 drops the step start times and the per-file listing rows,
// 3 drops the steps, 4 keeps of the evidence only the verdict, its reason and the compared
// instants. Past that the output is returned as is: dropping whole decisions would hide nodes.
function compact(d: DecisionOutput, level: number): DecisionOutput {
  if (level === 0) return d;
  const steps =
    level >= 3 ? [] : d.steps.map((s) => (level >= 2 ? { name: s.name, durationMs: s.durationMs, ok: s.ok } : { ...s, detail: undefined }));
  const shrink = (v: EvidenceVerdict | null): EvidenceVerdict | null => {
    if (!v || level < 2) return v;
    if (level < 4) return { ...v, values: { ...v.values, files: [] } };
    const { criStartEarliest, configWrittenLatest, gapMs, gap, readPath, marginMs } = v.values;
    return {
      verdict: v.verdict,
      reason: v.reason,
      ordering: v.ordering,
      contradicts: v.contradicts,
      failedRule: v.failedRule,
      values: { criStartEarliest, configWrittenLatest, gapMs, gap, readPath, marginMs, files: [] },
    };
  };
  return { ...d, steps, evidence: shrink(d.evidence), proof: shrink(d.proof) };
}

const MAX_LEVEL = 4;

/** What the outputs of a run read of its result (src/core/model/rolloutResult.ts): how it ended, its nodes, how many it left and ran at once. */
export type OutputsInput = Pick<RolloutResult, 'result' | 'records'> & Partial<Pick<RolloutResult, 'notReached' | 'inFlightMax'>>;

export function buildOutputs(run: OutputsInput, options: { budgetBytes?: number; redactor?: Redactor } = {}): ActionOutputs {
  const { result, records } = run;
  const budget = options.budgetBytes ?? DECISIONS_BUDGET_BYTES;
  // A later step's script reads this output as it is: the runner's log masking never applies to it.
  const full = records.map(toDecisionOutput).map((d) => (options.redactor ? options.redactor.redactData(d) : d));
  let decisions = JSON.stringify(full);
  for (let level = 1; level <= MAX_LEVEL && Buffer.byteLength(decisions, 'utf8') > budget; level++) {
    decisions = JSON.stringify(full.map((d) => compact(d, level)));
  }
  const count = (o: Outcome): string => String(records.filter((r) => r.outcome === o).length);
  return {
    result,
    decisions,
    rebooted: count('rebooted'),
    'reboots-skipped': count('reboot-skipped'),
    refused: count('refused'),
    left: String(run.notReached?.length ?? 0),
    'in-flight-max': String(run.inFlightMax ?? 0),
  };
}

/**
 * The outputs of the fences modes, the same keys as every mode: `decisions` lists the fences read
 * (FenceRow), `refused` counts the fences left in place; they roll no node, so nothing was rebooted
 * or skipped, no selected node is left and none was in flight.
 */
export function buildFenceOutputs(
  result: ActionResult,
  rows: readonly FenceRow[],
  refused: number,
  options: { redactor?: Redactor } = {},
): ActionOutputs {
  return {
    result,
    decisions: JSON.stringify(options.redactor ? options.redactor.redactData([...rows]) : rows),
    rebooted: '0',
    'reboots-skipped': '0',
    refused: String(refused),
    left: '0',
    'in-flight-max': '0',
  };
}
