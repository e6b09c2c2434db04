// The report file: the whole run of `apply` or `plan` as one versioned JSON document, for a later
// step or an archive. Job outputs are capped at 1 MB (the `decisions` output drops detail beyond its
// budget, src/report/outputs.ts) and the summary at 1 MiB (it leaves out rows and details), so a
// 500-node roll keeps its details here only: this document is never truncated or compacted. Pure:
// plain data in, a plain object out; src/action/publish.ts serialises it and writes it through the
// masking port.
//
// Versioning: `schema` names the document, `version` its shape, and schema/run-report.v<version>.json
// is its published JSON Schema. A change that only adds keys or values keeps the version and updates
// that file; one that removes, renames or retypes a key bumps the version into a new file, so a
// consumer can refuse a shape it does not know instead of misreading it (docs/report-file.md).
import { OUTCOMES, type ConfigPreview, type DecisionRecord, type Outcome } from '../core/model/record.js';
import { partialCause, type RolloutResult, type RolloutView } from '../core/model/rolloutResult.js';
import type { StartCheckFinding } from '../core/model/startCheck.js';
import type { WindowsAt } from '../core/model/windows.js';
import type { Redactor } from '../core/redact.js';
import { stepPhase, type StepPhase } from '../core/steps.js';
import type { GateValue } from '../core/model/gates.js';
import { gateValueText } from './gates.js';
import { toDecisionOutput, type DecisionOutput } from './outputs.js';

export const RUN_REPORT_SCHEMA = 'talos-registry-auth-rollout/run-report';
export const RUN_REPORT_VERSION = 2;

/** Who ran: the claim token's parts (repository, run id, attempt, nonce) and the run's page. */
export interface RunIdentity {
  repository: string;
  runId: string;
  runAttempt: string;
  /** the claim token written into the owner annotation of the nodes this run claimed */
  owner: string;
  url?: string;
}

/** What the document is built from: the run's result as text tells it (src/core/model/rolloutResult.ts), who ran it and when. */
export type RunReportInput = RolloutView & {
  identity?: RunIdentity;
  /** ISO instant the document was built (the runner's clock) */
  generatedAt: string;
};

/** One node's bar on the timeline, as data: its span and each step's phase (src/core/steps.ts). */
export interface TimelineNode {
  node: string;
  outcome: Outcome;
  startedAt: string | null;
  endedAt: string | null;
  steps: Array<{ name: string; phase: StepPhase; startedAt: string; durationMs: number; ok: boolean }>;
}

/**
 * A health gate in the report file: its value as data (the first failing object and the typed finding,
 * src/core/model/gates.ts) and, in `value`, the same in words, the string that key always held
 * (docs/report-file.md: a key keeps its type; the data keys were added beside it).
 */
export type ReportGate = GateValue & { value: string };

/** A node's decision as the `decisions` output has it, whole, plus the plan's machine-config change list. */
export type ReportNode = DecisionOutput & { configPreview?: ConfigPreview };

export interface RunReportDocument {
  schema: typeof RUN_REPORT_SCHEMA;
  version: typeof RUN_REPORT_VERSION;
  generatedAt: string;
  /** null: the run's identity was not known */
  run: RunIdentity | null;
  mode: RolloutResult['mode'];
  /** the registry hosts rolled, in the run's order (version 1: one comma-separated string) */
  registry: RolloutResult['registry'];
  revision: RolloutResult['revision'];
  result: RolloutResult['result'];
  error: string | null;
  notice: string | null;
  /** what stopped a `partial` run (the time budget, the maintenance windows, a health gate); absent otherwise */
  stoppedBy?: NonNullable<RolloutResult['stoppedBy']>;
  talosReads: string | null;
  counts: Record<Outcome | 'notReached' | 'upToDate', number>;
  /** every node the run reached, in processing order, never compacted */
  nodes: ReportNode[];
  /** selected nodes the roll stopped before */
  notReached: string[];
  /** nodes left out because they already verified this revision */
  upToDate: string[];
  timeline: {
    inFlightMax: number | null;
    maxUnavailable: number | null;
    topologyKey: string | null;
    /** the settle gate's and the health gates' waits, the time budget's and the maintenance windows' stops */
    holds: NonNullable<RolloutResult['holds']>;
    /** apply: one entry per node started, in processing order; plan: empty */
    nodes: TimelineNode[];
  };
  /** plan: the workloads the settle gate would wait for; null: the gate is off or nothing was predicted */
  settleWaits: string[] | null;
  /** plan, with maintenance windows: whether one is open now and when the next opens; absent without windows */
  windows?: string;
  /** the same as data: the windows now and, open, after the union closes; instants in RFC 3339 (UTC), each with the zone to say it in */
  windowsAt?: { now: ReportWindowsAt; afterClose?: ReportWindowsAt };
  /** the start check that stopped the roll (a `partial` run, or a failed one a check ended), as data; absent otherwise */
  stop?: ReportStop;
  /** plan: each health gate's value now; absent when no gate is configured */
  gates?: ReportGate[];
  /** may the old credential be revoked (src/rules/revocation.ts); null: not judged */
  oldCredential: NonNullable<RolloutResult['revocation']> | null;
  /** apply with nothing to roll: the nodes to prove and what proving each found; absent when there was none */
  proofChecks?: NonNullable<RolloutResult['proofChecks']>;
  /** apply with `alertmanager-url`, a roll that started: the silences held for it (ids, matchers, how each ended) and the warnings; absent otherwise */
  silence?: NonNullable<RolloutResult['silence']>;
}

/** The maintenance windows at one instant, as the report carries them. */
export type ReportWindowsAt =
  { open: true; until?: string; atLeastUntil?: string; timezone: string } | { open: false; nextOpening?: string; timezone: string };

/** What stopped the roll: the check's name and line, and for the maintenance windows when the next opens. */
export interface ReportStop {
  check: string;
  message: string;
  /** `check` is the maintenance windows: closed, and when the next opens */
  windows?: ReportWindowsAt;
}

const iso = (ms: number) => new Date(ms).toISOString();

function windowsAtReport(w: WindowsAt): ReportWindowsAt {
  if (w.open) {
    return {
      open: true,
      ...(w.untilMs !== undefined ? { until: iso(w.untilMs) } : {}),
      ...(w.atLeastUntilMs !== undefined ? { atLeastUntil: iso(w.atLeastUntilMs) } : {}),
      timezone: w.timezone,
    };
  }
  return { open: false, ...(w.nextMs !== undefined ? { nextOpening: iso(w.nextMs) } : {}), timezone: w.timezone };
}

function stopReport(stop: StartCheckFinding): ReportStop {
  // the maintenance windows' stop carries the windows at that instant (src/pipeline/startChecks/windows.ts)
  const v = stop.value as WindowsAt | undefined;
  const windows = partialCause(stop.check) === 'window' && v?.open === false ? windowsAtReport(v) : undefined;
  return { check: stop.check, message: stop.message, ...(windows ? { windows } : {}) };
}

function timelineNode(r: DecisionRecord): TimelineNode {
  return {
    node: r.node,
    outcome: r.outcome,
    startedAt: r.startedAt ?? null,
    endedAt: r.endedAt ?? null,
    steps: r.steps.map((s) => ({ name: s.name, phase: stepPhase(s.name), startedAt: s.startedAt, durationMs: s.durationMs, ok: s.ok })),
  };
}

/**
 * The document, every string of it redacted with `redactor` when given (the port masks the text again:
 * a secret found only in the serialised JSON, across a key and its value, is still caught there).
 */
export function buildRunReport(input: RunReportInput, options: { redactor?: Redactor } = {}): RunReportDocument {
  const records = input.records;
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, records.filter((r) => r.outcome === o).length])) as RunReportDocument['counts'];
  counts.notReached = input.notReached?.length ?? 0;
  counts.upToDate = input.upToDate?.length ?? 0;
  const doc: RunReportDocument = {
    schema: RUN_REPORT_SCHEMA,
    version: RUN_REPORT_VERSION,
    generatedAt: input.generatedAt,
    run: input.identity ? { ...input.identity } : null,
    mode: input.mode,
    registry: [...input.registry],
    revision: input.revision,
    result: input.result,
    error: input.error ?? null,
    notice: input.notice ?? null,
    ...(input.stoppedBy ? { stoppedBy: input.stoppedBy } : {}),
    talosReads: input.talosReads ?? null,
    counts,
    nodes: records.map((r) => ({
      ...toDecisionOutput(r),
      ...(r.configPreview ? { configPreview: structuredClone(r.configPreview) } : {}),
    })),
    notReached: [...(input.notReached ?? [])],
    upToDate: [...(input.upToDate ?? [])],
    timeline: {
      inFlightMax: input.inFlightMax ?? null,
      maxUnavailable: input.maxUnavailable ?? null,
      topologyKey: input.topologyKey ?? null,
      holds: (input.holds ?? []).map((h) => ({ ...h })),
      nodes: records.filter((r) => r.startedAt !== undefined).map(timelineNode),
    },
    settleWaits: input.settleWaits ? [...input.settleWaits] : null,
    ...(input.windows ? { windows: input.windows } : {}),
    ...(input.windowsAt
      ? {
          windowsAt: {
            now: windowsAtReport(input.windowsAt.now),
            ...(input.windowsAt.afterClose ? { afterClose: windowsAtReport(input.windowsAt.afterClose) } : {}),
          },
        }
      : {}),
    ...(input.stop ? { stop: stopReport(input.stop) } : {}),
    ...(input.gates ? { gates: input.gates.map((g) => ({ ...structuredClone(g), value: gateValueText(g) })) } : {}),
    oldCredential: input.revocation ? structuredClone(input.revocation) : null,
    ...(input.proofChecks?.length ? { proofChecks: structuredClone(input.proofChecks) } : {}),
    ...(input.silence ? { silence: structuredClone(input.silence) } : {}),
  };
  return options.redactor ? options.redactor.redactData(doc) : doc;
}
