// The Kubernetes Events of a node's roll, built from its decision record alone (what `kubectl describe
// node` shows), and the run's one Event on its Lease. Pure: plain objects in, plain objects out; the
// pipeline writes them (src/pipeline/events.ts) and kubectl turns them into core/v1 Events
// (src/adapters/kube/eventList.ts). Messages are built whole: the writer masks them, then folds each
// onto one line and cuts it to the Event API's note limit (eventMessage), so a cut never falls inside
// a secret before the masking could see it whole.
import type { EventReason, RolloutEvent } from '../core/events.js';
import type { ActionResult, DecisionRecord, StepRecord } from '../core/model/record.js';
import { plural } from '../core/format.js';
import { STEP, stepPhase, verifiedImageOf } from '../core/steps.js';
import { oneLine, truncateText } from './escape.js';

/** events.k8s.io's limit on a note (NoteLengthLimit); core/v1 does not check it, readers still expect it. */
export const EVENT_MESSAGE_MAX = 1024;

const CLAIM_STEPS: ReadonlySet<string> = new Set([STEP.claim]);
const DRAIN_STEPS: ReadonlySet<string> = new Set([STEP.drain, STEP.drainRetry]);
const REBOOT_STEPS: ReadonlySet<string> = new Set([STEP.reboot]);
const RELEASE_STEPS: ReadonlySet<string> = new Set([STEP.release]);
const RESTORE_STEPS: ReadonlySet<string> = new Set([STEP.releaseRestore]);
const PROOF_STEPS: ReadonlySet<string> = new Set([STEP.prove, STEP.waitProofFinal]);

/** Where a step ended, ISO (the runner's clock). */
function endOf(s: StepRecord): string {
  return new Date(Date.parse(s.startedAt) + s.durationMs).toISOString();
}

function lastOk(r: DecisionRecord, names: ReadonlySet<string>): StepRecord | undefined {
  return [...r.steps].reverse().find((s) => s.ok && names.has(s.name));
}

/**
 * A node's Events, in the order they happened: claimed, the reboot skipped (with its evidence) or
 * drained and rebooted, verified, released; or quarantined, refused or failed with the next step.
 * Only what the record shows happened is told: a step that failed has no Event of its own, the
 * outcome's Event says why the roll stopped.
 */
export function nodeEvents(r: DecisionRecord): RolloutEvent[] {
  const about = { kind: 'Node' as const, name: r.node, uid: r.uid };
  const out: Array<{ reason: EventReason; type: 'Normal' | 'Warning'; message: string; at: string }> = [];
  /** a Normal Event at the end of the last step of `names` that succeeded, if any */
  const afterStep = (names: ReadonlySet<string>, reason: EventReason, message: string) => {
    const s = lastOk(r, names);
    if (s) out.push({ reason, type: 'Normal', message, at: endOf(s) });
  };
  const hosts = r.hosts?.length ? ` of ${r.hosts.map((h) => h.host).join(', ')}` : '';
  const endedAt = r.endedAt ?? r.steps.map(endOf).sort().at(-1) ?? r.startedAt ?? new Date(0).toISOString();
  // the autoscaler marks the run left in place (docs/autoscaler-marks.md): those found at the claim, told
  // with it; those a release kept, told with the release (or the quarantine that gave the claim up)
  const found = r.autoscalerMarks?.found.length ? `; autoscaler marks: ${r.autoscalerMarks.found.join('; ')}` : '';
  const kept = r.autoscalerMarks?.kept.length ? `; autoscaler marks: ${r.autoscalerMarks.kept.join('; ')}` : '';
  afterStep(
    CLAIM_STEPS,
    'Claimed',
    `cordoned and claimed for the registry credential rollout${hosts} (${plural(r.claim?.attempts ?? 1, 'attempt')})${found}`,
  );
  if (r.outcome === 'reboot-skipped') {
    // decided after the patch: by the reading before it, or by the wait for Talos to restart cri
    const decided = [...r.steps].reverse().find((s) => s.ok && (s.name === STEP.applyPatch || stepPhase(s.name) === 'cri-restart'));
    out.push({ reason: 'RebootSkipped', type: 'Normal', message: `reboot skipped: ${r.reason}`, at: decided ? endOf(decided) : endedAt });
  }
  afterStep(DRAIN_STEPS, 'Drained', 'drained (kubectl drain --ignore-daemonsets --delete-emptydir-data)');
  afterStep(REBOOT_STEPS, 'Rebooted', `rebooted (a new boot id): ${r.evidence ? r.evidence.reason : 'reboot: always was requested'}`);
  const proof = lastOk(r, PROOF_STEPS);
  if (proof && r.proof) {
    const u = r.proofUndecided;
    out.push(
      u
        ? {
            reason: 'Verified',
            type: u.settledBy === 'warning' ? 'Warning' : 'Normal',
            message: `the proof is undecided: ${u.unproven}; ${u.settledBy === 'warning' ? `residual risk: ${u.residualRisk}` : 'proven by verify-image instead'}`,
            at: endOf(proof),
          }
        : { reason: 'Verified', type: 'Normal', message: `containerd loaded the new credential: ${r.proof.reason}`, at: endOf(proof) },
    );
  }
  const pulled = [...r.steps].reverse().find((s) => s.ok && verifiedImageOf(s.name) !== undefined);
  if (pulled)
    out.push({
      reason: 'Verified',
      type: 'Normal',
      message: `pulled ${verifiedImageOf(pulled.name)} through containerd: the credential works`,
      at: endOf(pulled),
    });
  afterStep(
    RELEASE_STEPS,
    'Released',
    `released: the claim removed, the cordon state restored, verified marker written${hosts.replace(' of ', ' for ')}${kept}`,
  );
  afterStep(RESTORE_STEPS, 'Released', `released after the stop: the claim removed, the cordon state restored, no verified marker${kept}`);
  const stopped = STOPPED[r.outcome];
  if (stopped)
    out.push({
      reason: stopped,
      type: 'Warning',
      message: `${r.reason}${r.outcome === 'quarantined' ? kept : ''}${r.nextStep ? ` Next step: ${r.nextStep}` : ''}`,
      at: endedAt,
    });
  return ordered(out).map((e) => ({ about, ...e }));
}

const STOPPED: Partial<Record<DecisionRecord['outcome'], EventReason>> = {
  quarantined: 'Quarantined',
  refused: 'RolloutRefused',
  failed: 'RolloutFailed',
};

/** By time; equal instants keep the roll's order (Array.prototype.sort is stable). */
function ordered<T extends { at: string }>(events: T[]): T[] {
  return [...events].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
}

/**
 * One line, within the note limit: the last change an Event's text gets, applied by its writer
 * (src/pipeline/events.ts) after the masking, never here by a builder.
 */
export function eventMessage(text: string): string {
  return truncateText(oneLine(text), EVENT_MESSAGE_MAX);
}

/** The run's Event on its Lease: how the run ended, and how its nodes did. */
export function runEvent(
  lease: { namespace: string; name: string; uid?: string },
  run: { result: ActionResult; records: readonly DecisionRecord[]; notReached: number; at: string; error?: string },
): RolloutEvent {
  const counts = new Map<string, number>();
  for (const r of run.records) counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
  const nodes = [...counts].map(([outcome, n]) => `${n} ${outcome}`).join(', ') || 'no node rolled';
  const reason: EventReason = run.result === 'failed' ? 'RolloutFailed' : run.result === 'partial' ? 'RolloutPartial' : 'RolloutSucceeded';
  const left = run.notReached > 0 ? `; ${run.notReached} node(s) not reached` : '';
  const why = run.error ? `: ${run.error}` : '';
  return {
    about: { kind: 'Lease', ...lease },
    reason,
    type: reason === 'RolloutSucceeded' ? 'Normal' : 'Warning',
    message: `the run ended ${run.result}${why} (${nodes}${left})`,
    at: run.at,
  };
}
