// The report file's schema (schema/run-report.v2.json, the version the code writes) against the TypeScript
// declaration it describes:
// a report with every optional field set and a minimal one both validate; every key each type of the
// document declares is a property of the schema and the other way round (the key tables below are
// complete by the compiler's check, so a field added to a type and not to the schema fails here); the
// enums are the declaration's own lists; and the checking helper every test reads a report through
// fails on a report the schema refuses.
import type { SilenceReport } from '../../src/core/model/silence.js';
import type { BlockingBudget, UnsatisfiableDrain } from '../../src/core/model/unsatisfiableDrain.js';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  OUTCOMES,
  ACTION_RESULTS,
  ROLL_HOLD_KINDS,
  type DrainForecast,
  type ProofUndecided,
  type QuarantineNote,
  type RollHold,
} from '../../src/core/model/record.js';
import { CEL_ERROR_CAUSES, CEL_RESULT_TYPES, STORAGE_RULES, type GateFinding, type GateObjectRef } from '../../src/core/model/gates.js';
import { EVIDENCE_RULES } from '../../src/core/model/verdict.js';
import { PARTIAL_CAUSES } from '../../src/core/model/rolloutResult.js';
import { PROOF_STEPS, type ProofCheck } from '../../src/core/model/proofCheck.js';
import { HOLDER_KINDS, type OldCredentialHolder, type RevocationVerdict } from '../../src/core/model/revocation.js';
import { RUN_MODES } from '../../src/core/model/rolloutResult.js';
import type { EvidenceValues, EvidenceVerdict } from '../../src/core/model/verdict.js';
import { STEP_PHASES } from '../../src/core/steps.js';
import type { DecisionStepOutput } from '../../src/report/outputs.js';
import {
  buildRunReport,
  RUN_REPORT_SCHEMA,
  RUN_REPORT_VERSION,
  type ReportGate,
  type ReportNode,
  type ReportStop,
  type RunIdentity,
  type RunReportDocument,
  type TimelineNode,
} from '../../src/report/runReport.js';
import { record, verdict } from './fixtures.js';
import {
  checkReport,
  compileSchema,
  loadStandalone,
  readReport,
  readSchema,
  REPORT_SCHEMA,
  reportSchemaFile,
  schemaErrors,
} from './reportSchema.js';

type Keys<T> = Record<keyof T, true>;
type Schema = {
  properties?: Record<string, Schema>;
  $ref?: string;
  anyOf?: Schema[];
  oneOf?: Schema[];
  items?: Schema;
  enum?: unknown[];
  required?: string[];
};

const defs = (REPORT_SCHEMA as { $defs: Record<string, Schema> }).$defs;
/** The object schema at `path` (property names, `[]` for an array's items), following $ref, null and the config preview's branches. */
function at(path: string[], s: Schema = REPORT_SCHEMA as Schema): Schema {
  const resolve = (x: Schema): Schema => {
    if (x.$ref) return resolve(defs[x.$ref.replace('#/$defs/', '')]);
    const objectBranch = (x.anyOf ?? []).find((b) => b.$ref || b.properties);
    return objectBranch ? resolve(objectBranch) : x;
  };
  let cur = resolve(s);
  for (const p of path) cur = resolve(p === '[]' ? cur.items! : cur.properties![p]);
  return cur;
}
const props = (s: Schema): string[] => Object.keys(s.properties ?? {}).sort();

const ISO = (s: number) => new Date(Date.UTC(2026, 2, 1, 10, 0, s)).toISOString();
const IDENTITY: RunIdentity = {
  repository: 'acme/platform',
  runId: '4242',
  runAttempt: '1',
  owner: 'acme/platform/runs/4242/attempts/1/a1b2',
  url: 'https://github.com/acme/platform/actions/runs/4242/attempts/1',
};
const FULL_VERDICT: EvidenceVerdict = {
  ...verdict('reboot', 'containerd may have read its config before the write', {
    criStartLatest: ISO(6),
    criStart: { earliestMs: 1, latestMs: 2 },
    configWrite: { earliestMs: 0, latestMs: 1 },
    configWrittenEarliest: ISO(1),
    gap: { lowMs: -1, highMs: 2 },
    readPath: 'mixed',
    criEvent: { pid: 1234, at: ISO(5), text: 'started with PID 1234' },
    servicePid: { pid: 1234, created: ISO(5) },
    runnerWindow: { before: ISO(4), after: ISO(7) },
    launchBeforePatch: { pid: 1000, latest: ISO(0) },
  }),
  ordering: 'undecidable',
  contradicts: false,
  incomplete: 'the EtcFileStatus was not there yet',
};
FULL_VERDICT.values.files.push({
  path: '/etc/cri/conf.d/20-customization.part',
  exists: true,
  credential: 'old',
  byHost: { 'ghcr.io': 'old' },
  latestWrite: ISO(1),
});
const FORECAST: DrainForecast = {
  ok: false,
  evictions: 2,
  blocked: [{ pod: 'shop/db-0', budgets: ['shop/db'], message: "Cannot evict pod as it would violate the pod's disruption budget." }],
  budgets: [{ pdb: 'shop/db', disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2 }],
  refusals: [{ pod: 'x/bare', reason: 'not managed by a controller' }],
  errors: [{ pod: 'x/two', message: 'more than one PodDisruptionBudget' }],
  unknown: 'the pod list failed',
};
const QUARANTINE: QuarantineNote = {
  blockers: [
    { pdb: 'shop/db', status: { disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2 }, pods: ['shop/db-0'] },
    { pods: ['x/stuck'] },
  ],
  lift: 'let shop/db allow the eviction, then rerun',
  byHand: 'kubectl patch node w3 --type=json -p …',
};
const UNDECIDED: ProofUndecided = {
  unproven: 'the gap is 0.4 s',
  settledBy: 'warning',
  residualRisk: 'containerd may run the old credential',
  nextStep: 'pull an image',
};
const HOLDS: RollHold[] = [
  { kind: 'settle', startedAt: ISO(10), endedAt: ISO(20), detail: 'shop/db', node: 'w2' },
  { kind: 'budget', startedAt: ISO(30), detail: 'time-budget 10m' },
];
/** A gate's finding of every shape: each result type, each error cause (one with every detail), each storage rule. */
const FINDINGS: GateFinding[] = [
  { type: 'boolean', value: false },
  { type: 'number', value: 3 },
  { type: 'number' },
  ...CEL_RESULT_TYPES.map((type) => ({ type })),
  ...CEL_ERROR_CAUSES.map((cause): GateFinding => ({ type: 'error', cause })),
  { type: 'error', cause: 'missing-field', field: 'status' },
  { type: 'error', cause: 'no-overload', operator: '_>_', types: ['string', 'int'] },
  ...STORAGE_RULES.map((rule): GateFinding => ({ type: 'storage', rule })),
];

const REVOCATION: RevocationVerdict = {
  revocable: false,
  reason: '1 of 4 node(s) may hold the old credential',
  holders: [{ node: 'w3', kind: 'quarantined', why: 'quarantined', selected: true }],
  judged: 4,
  outsideScope: 1,
  selectionConverged: false,
};

/** Every optional field of the document set, each node form once (the config preview in both of its shapes). */
function fullReport(): RunReportDocument {
  const started = { startedAt: ISO(0), endedAt: ISO(60) };
  return buildRunReport({
    identity: IDENTITY,
    generatedAt: ISO(90),
    mode: 'apply',
    registry: ['ghcr.io', 'registry.example.com'],
    revision: 'r7',
    result: 'failed',
    records: [
      record('w1', 'rebooted', {
        ...started,
        hosts: [
          { host: 'ghcr.io', why: 'no marker' },
          { host: 'registry.example.com', why: 'proof image changed', reprove: true },
        ],
        evidence: FULL_VERDICT,
        proof: FULL_VERDICT,
        proofUndecided: UNDECIDED,
        cordonKept: 'it was cordoned before this run claimed it: kept as found',
        autoscalerMarks: {
          found: ['cluster-autoscaler.kubernetes.io/scale-down-disabled="false" was set before the claim and is left as found'],
          kept: ['karpenter.sh/do-not-disrupt was set to "false" by someone else while the node was held: kept as they set it'],
        },
        configPreview: {
          shown: true,
          edits: [
            {
              target: 'RegistryAuthConfig/ghcr.io',
              action: 'replaced',
              fields: [{ name: 'password', change: 'changed' }],
              because: 'the patch gives it',
            },
          ],
          checks: ['parses'],
        },
      }),
      record('w2', 'planned-reboot', {
        drainForecast: FORECAST,
        configPreview: { shown: false, why: 'Talos is reached through talosctl' },
      }),
      record('w3', 'quarantined', { ...started, quarantine: QUARANTINE, nextStep: 'lift it' }),
      record('cp-1', 'failed', { ...started, evidence: undefined }),
    ],
    notReached: ['w4'],
    upToDate: ['w5'],
    error: 'w3 quarantined',
    notice: 'the time budget stopped the roll',
    talosReads: 'reading Talos through the API',
    inFlightMax: 2,
    maxUnavailable: 2,
    topologyKey: 'topology.kubernetes.io/zone',
    holds: HOLDS,
    settleWaits: ['shop/db'],
    stoppedBy: 'gate',
    windows: 'maintenance windows: open now, until 2026-12-07T04:00:00+01:00 (Europe/Copenhagen)',
    windowsAt: {
      now: { open: true, untilMs: Date.UTC(2026, 11, 7, 3), timezone: 'Europe/Copenhagen' },
      afterClose: { open: false, nextMs: Date.UTC(2026, 11, 8, 1), timezone: 'Europe/Copenhagen' },
    },
    stop: {
      check: 'window',
      message: 'outside every maintenance window: the next opens at 2026-12-08T02:00:00+01:00 (Europe/Copenhagen)',
      value: { open: false, nextMs: Date.UTC(2026, 11, 8, 1), timezone: 'Europe/Copenhagen' },
    },
    gates: [
      {
        name: 'storage/longhorn-volumes',
        holds: false,
        kind: 'Volume',
        selected: 3,
        failing: {
          count: 1,
          object: { kind: 'Volume', namespace: 'longhorn-system', name: 'pvc-1' },
          finding: { type: 'storage', rule: 'robustness-degraded' },
        },
      },
      { name: 'storage/persistentvolumes', holds: false, kind: 'PersistentVolume', unread: 'forbidden' },
      { name: 'db-ready', holds: true, kind: 'Cluster', selected: 0 },
      ...FINDINGS.map((finding, i) => ({
        name: `cel-${i}`,
        holds: false,
        kind: 'Cluster',
        selected: 1,
        failing: { count: 1, object: { kind: 'Cluster', name: 'pg' }, finding },
      })),
    ],
    revocation: REVOCATION,
    silence: {
      alertmanager: 'https://alertmanager.monitoring.svc:9093',
      silences: [
        { id: '1f2e3d4c-0000-4000-8000-000000000001', matchers: 'node=~"worker-1|worker-2"', state: 'expired' },
        { matchers: 'instance=~"(worker-1|worker-2)(:[0-9]+)?"', state: 'not-created' },
      ],
      warnings: ['Alertmanager silence: the silence instance=~"…" was not created: 400 Bad Request'],
    },
    proofChecks: [
      {
        node: 'worker-1',
        uid: 'u-1',
        hosts: [{ host: 'ghcr.io', why: 'ghcr.io: undecided' }],
        by: 'evidence',
        proven: false,
        detail: 'd',
        nextStep: 'n',
      },
    ],
  });
}

describe(`schema/run-report.v${RUN_REPORT_VERSION}.json`, () => {
  it('accepts a report with every optional field set, and a minimal one', () => {
    expect(schemaErrors(fullReport())).toEqual([]);
    const minimal = buildRunReport({
      generatedAt: ISO(0),
      mode: 'plan',
      registry: ['ghcr.io'],
      revision: 'r7',
      result: 'clean',
      records: [],
    });
    expect(minimal.run).toBeNull();
    expect(schemaErrors(minimal)).toEqual([]);
  });

  it("names the document's schema and version", () => {
    expect(at(['schema'])).toMatchObject({ const: RUN_REPORT_SCHEMA });
    expect(at(['version'])).toMatchObject({ const: RUN_REPORT_VERSION });
  });

  it('has a property for every key the declaration gives each object of the document, and no other', () => {
    const doc: Keys<RunReportDocument> = {
      schema: true,
      version: true,
      generatedAt: true,
      run: true,
      mode: true,
      registry: true,
      revision: true,
      result: true,
      error: true,
      notice: true,
      stoppedBy: true,
      talosReads: true,
      counts: true,
      nodes: true,
      notReached: true,
      upToDate: true,
      timeline: true,
      settleWaits: true,
      windows: true,
      windowsAt: true,
      stop: true,
      gates: true,
      oldCredential: true,
      proofChecks: true,
      silence: true,
    };
    const run: Keys<RunIdentity> = { repository: true, runId: true, runAttempt: true, owner: true, url: true };
    const node: Keys<ReportNode> = {
      name: true,
      uid: true,
      role: true,
      internalIP: true,
      outcome: true,
      reason: true,
      hosts: true,
      evidence: true,
      proof: true,
      claim: true,
      nextStep: true,
      cordonKept: true,
      autoscalerMarks: true,
      proofUndecided: true,
      durationMs: true,
      startedAt: true,
      endedAt: true,
      quarantine: true,
      drainForecast: true,
      steps: true,
      configPreview: true,
    };
    const step: Keys<DecisionStepOutput> = { name: true, startedAt: true, durationMs: true, ok: true, detail: true };
    const ev: Keys<EvidenceVerdict> = {
      verdict: true,
      reason: true,
      values: true,
      ordering: true,
      contradicts: true,
      incomplete: true,
      failedRule: true,
    };
    const values: Keys<EvidenceValues> = {
      criState: true,
      criHealth: true,
      criPid: true,
      criStartEarliest: true,
      criStartLatest: true,
      criStartSource: true,
      configWrittenLatest: true,
      criStart: true,
      configWrite: true,
      configWrittenEarliest: true,
      configWrittenPath: true,
      marginMs: true,
      gapMs: true,
      gap: true,
      readPath: true,
      timeSynced: true,
      timeEpoch: true,
      files: true,
      talosVersion: true,
      criEvent: true,
      servicePid: true,
      runnerWindow: true,
      launchBeforePatch: true,
    };
    const file: Keys<EvidenceValues['files'][number]> = {
      path: true,
      exists: true,
      lastMod: true,
      updated: true,
      credential: true,
      byHost: true,
      latestWrite: true,
    };
    const undecided: Keys<ProofUndecided> = { unproven: true, settledBy: true, residualRisk: true, nextStep: true };
    const quarantine: Keys<QuarantineNote> = { blockers: true, lift: true, byHand: true };
    const forecast: Keys<DrainForecast> = {
      ok: true,
      evictions: true,
      blocked: true,
      budgets: true,
      refusals: true,
      errors: true,
      unknown: true,
      unsatisfiable: true,
    };
    const unsatisfiable: Keys<UnsatisfiableDrain> = { node: true, blocking: true };
    const blocking: Keys<BlockingBudget> = { case: true, budgets: true, spec: true, status: true, pods: true };
    const timeline: Keys<RunReportDocument['timeline']> = {
      inFlightMax: true,
      maxUnavailable: true,
      topologyKey: true,
      holds: true,
      nodes: true,
    };
    const hold: Keys<RollHold> = { kind: true, startedAt: true, endedAt: true, detail: true, node: true };
    const tnode: Keys<TimelineNode> = { node: true, outcome: true, startedAt: true, endedAt: true, steps: true };
    const tstep: Keys<TimelineNode['steps'][number]> = { name: true, phase: true, startedAt: true, durationMs: true, ok: true };
    const old: Keys<RevocationVerdict> = {
      revocable: true,
      reason: true,
      holders: true,
      judged: true,
      outsideScope: true,
      selectionConverged: true,
    };
    const holder: Keys<OldCredentialHolder> = { node: true, kind: true, why: true, selected: true };
    const gate: Keys<ReportGate> = { name: true, holds: true, value: true, kind: true, selected: true, failing: true, unread: true };
    const failing: Keys<NonNullable<ReportGate['failing']>> = { count: true, object: true, finding: true };
    const gateObject: Keys<GateObjectRef> = { kind: true, namespace: true, name: true };
    const proofCheck: Keys<ProofCheck> = { node: true, uid: true, hosts: true, by: true, proven: true, detail: true, nextStep: true };
    const proofHost: Keys<ProofCheck['hosts'][number]> = { host: true, why: true };
    const silence: Keys<SilenceReport> = { alertmanager: true, silences: true, warnings: true };
    const stop: Keys<ReportStop> = { check: true, message: true, windows: true };
    const windowsAt: Keys<NonNullable<RunReportDocument['windowsAt']>> = { now: true, afterClose: true };
    // one object schema for both branches of ReportWindowsAt (open: until / atLeastUntil; closed: nextOpening)
    const windowsAtEntry = { open: true, until: true, atLeastUntil: true, nextOpening: true, timezone: true };
    const silenceEntry: Keys<SilenceReport['silences'][number]> = { id: true, matchers: true, state: true };
    const counts: Keys<RunReportDocument['counts']> = {
      rebooted: true,
      'reboot-skipped': true,
      'planned-reboot': true,
      'planned-skip': true,
      refused: true,
      failed: true,
      quarantined: true,
      notReached: true,
      upToDate: true,
    };
    const cases: Array<[string[], object]> = [
      [[], doc],
      [['run'], run],
      [['nodes', '[]'], node],
      [['nodes', '[]', 'steps', '[]'], step],
      [['nodes', '[]', 'evidence'], ev],
      [['nodes', '[]', 'proof', 'values'], values],
      [['nodes', '[]', 'evidence', 'values', 'files', '[]'], file],
      [['nodes', '[]', 'proofUndecided'], undecided],
      [['nodes', '[]', 'quarantine'], quarantine],
      [['nodes', '[]', 'drainForecast'], forecast],
      [['nodes', '[]', 'drainForecast', 'unsatisfiable'], unsatisfiable],
      [['nodes', '[]', 'drainForecast', 'unsatisfiable', 'blocking', '[]'], blocking],
      [['timeline'], timeline],
      [['timeline', 'holds', '[]'], hold],
      [['timeline', 'nodes', '[]'], tnode],
      [['timeline', 'nodes', '[]', 'steps', '[]'], tstep],
      [['oldCredential'], old],
      [['oldCredential', 'holders', '[]'], holder],
      [['gates', '[]'], gate],
      [['gates', '[]', 'failing'], failing],
      [['gates', '[]', 'failing', 'object'], gateObject],
      [['proofChecks', '[]'], proofCheck],
      [['proofChecks', '[]', 'hosts', '[]'], proofHost],
      [['silence'], silence],
      [['stop'], stop],
      [['stop', 'windows'], windowsAtEntry],
      [['windowsAt'], windowsAt],
      [['windowsAt', 'now'], windowsAtEntry],
      [['windowsAt', 'afterClose'], windowsAtEntry],
      [['silence', 'silences', '[]'], silenceEntry],
      [['counts'], counts],
    ];
    for (const [path, keys] of cases) expect(props(at(path)), path.join('.') || '(document)').toEqual(Object.keys(keys).sort());
  });

  it("takes its enums from the declaration's lists: results, modes, outcomes, step phases, holder kinds", () => {
    expect(at(['result']).enum).toEqual([...ACTION_RESULTS]);
    expect(at(['mode']).enum).toEqual([...RUN_MODES]);
    expect(at(['nodes', '[]', 'outcome']).enum).toEqual([...OUTCOMES]);
    expect(at(['timeline', 'nodes', '[]', 'steps', '[]', 'phase']).enum).toEqual([...STEP_PHASES, 'other']);
    expect(at(['oldCredential', 'holders', '[]', 'kind']).enum).toEqual([...HOLDER_KINDS]);
    expect(at(['nodes', '[]', 'evidence', 'failedRule']).enum).toEqual([...EVIDENCE_RULES]);
    expect(at(['timeline', 'holds', '[]', 'kind']).enum).toEqual([...ROLL_HOLD_KINDS]);
    expect(at(['stoppedBy']).enum).toEqual([...PARTIAL_CAUSES]);
    const finding = at(['gates', '[]', 'failing', 'finding']).oneOf!;
    const branch = (p: string) => finding.map((b) => b.properties![p]).filter((x) => x?.enum);
    expect(branch('type').map((x) => x.enum)).toEqual([[...CEL_RESULT_TYPES]]);
    expect(branch('cause').map((x) => x.enum)).toEqual([[...CEL_ERROR_CAUSES]]);
    expect(branch('rule').map((x) => x.enum)).toEqual([[...STORAGE_RULES]]);
    expect(at(['proofChecks', '[]', 'by']).enum).toEqual([...PROOF_STEPS]);
    expect(props(at(['counts']))).toEqual([...OUTCOMES, 'notReached', 'upToDate'].sort());
  });

  it('the helper every test reads a report through fails on a report the schema refuses, naming where', () => {
    const good = fullReport();
    expect(() => checkReport(good)).not.toThrow();
    const cases: Array<[string, (d: any) => void, RegExp]> = [
      ['an unknown key', (d) => (d.extra = 1), /\/ must NOT have additional properties .*"additionalProperty":"extra"/],
      ['a result not declared', (d) => (d.result = 'done'), /\/result must be equal to one of the allowed values/],
      ['a missing field', (d) => delete d.nodes[0].steps, /\/nodes\/0 must have required property 'steps'/],
      ['a node key not declared', (d) => (d.nodes[1].rebootedAt = ISO(1)), /\/nodes\/1 must NOT have additional properties/],
      ['another version', (d) => (d.version = 1), /\/version must be equal to constant/],
      ['the hosts as one string (version 1)', (d) => (d.registry = 'ghcr.io, registry.example.com'), /\/registry must be array/],
      ['no host', (d) => (d.registry = []), /\/registry must NOT have fewer than 1 items/],
      ['an instant that is not one', (d) => (d.generatedAt = 'yesterday'), /\/generatedAt must match format "date-time"/],
    ];
    for (const [what, spoil, error] of cases) {
      const bad = structuredClone(good) as any;
      spoil(bad);
      expect(() => checkReport(bad), what).toThrow(error);
    }
    // the same through the file reader the end-to-end runs use
    const dir = mkdtempSync(join(tmpdir(), 'rar-schema-'));
    try {
      const file = join(dir, 'report.json');
      writeFileSync(file, JSON.stringify({ ...good, result: 'done' }));
      expect(() => readReport(file)).toThrow(/\/result must be equal to one of the allowed values/);
      writeFileSync(file, JSON.stringify(good));
      expect(readReport(file)).toEqual(good);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the session's one compilation of the schema", () => {
  it("a worker that loads ajv's standalone code of it answers as the compiled validator, errors included", () => {
    let source = '';
    const compiled = compileSchema(RUN_REPORT_VERSION, (s) => (source = s));
    const loaded = loadStandalone(source);
    expect(loaded).toBeTypeOf('function');
    const docs: unknown[] = [fullReport()];
    for (const spoil of [
      (d: any) => (d.extra = 1),
      (d: any) => (d.result = 'done'),
      (d: any) => delete d.nodes[0].steps,
      (d: any) => (d.generatedAt = 'yesterday'),
      (d: any) => (d.registry = []),
    ]) {
      const bad = structuredClone(fullReport()) as any;
      spoil(bad);
      docs.push(bad);
    }
    for (const doc of docs) {
      expect(loaded!(doc)).toBe(compiled(doc));
      expect(loaded!.errors ?? null).toEqual(compiled.errors ?? null);
    }
    expect(docs.filter((d) => !compiled(d))).toHaveLength(5);
  });

  it('no cached source: the schema is compiled (strict), not skipped', () => {
    expect(loadStandalone(undefined)).toBeUndefined();
  });
});

/**
 * Version 1's schema, as released: a report an older release wrote validates against the file its
 * `version` names, so that file never changes (docs/report-file.md "How the version changes").
 */
const V1_SHA256 = '8eaed292577ccb805c332ea5fef922985480b3398eeee2926e82f029fa500717';

describe('the earlier versions stay as released', () => {
  /** A version 1 document as the releases before version 2 wrote it: the hosts one comma-separated string. */
  const v1Report = {
    schema: RUN_REPORT_SCHEMA,
    version: 1,
    generatedAt: ISO(0),
    run: null,
    mode: 'apply',
    registry: 'ghcr.io, registry.example.com',
    revision: 'r7',
    result: 'clean',
    error: null,
    notice: null,
    talosReads: null,
    counts: Object.fromEntries([...OUTCOMES, 'notReached', 'upToDate'].map((k) => [k, 0])),
    nodes: [],
    notReached: [],
    upToDate: [],
    timeline: { inFlightMax: null, maxUnavailable: null, topologyKey: null, holds: [], nodes: [] },
    settleWaits: null,
    oldCredential: null,
  };

  it('keeps the file of every version, each naming its own; version 1 byte for byte as released', () => {
    expect(RUN_REPORT_VERSION).toBe(2);
    for (let v = 1; v <= RUN_REPORT_VERSION; v++) {
      const s = readSchema(v) as { $id: string; properties: { version: { const: number } } };
      expect(s.properties.version.const, `v${v}`).toBe(v);
      expect(s.$id, `v${v}`).toBe(`urn:talos-registry-auth-rollout:schema:run-report:v${v}`);
    }
    expect(
      createHash('sha256')
        .update(readFileSync(reportSchemaFile(1)))
        .digest('hex'),
    ).toBe(V1_SHA256);
  });

  it('version 2 retyped registry into a list: a version 1 report validates against version 1 only, a version 2 one against version 2 only', () => {
    expect(schemaErrors(v1Report, 1)).toEqual([]);
    expect(schemaErrors(v1Report, 2).join('\n')).toMatch(/\/registry must be array/);
    const v2 = buildRunReport({
      generatedAt: ISO(0),
      mode: 'apply',
      registry: ['ghcr.io', 'registry.example.com'],
      revision: 'r7',
      result: 'clean',
      records: [],
    });
    expect(v2.registry).toEqual(['ghcr.io', 'registry.example.com']);
    expect(schemaErrors(v2, 2)).toEqual([]);
    expect(schemaErrors(v2, 1).join('\n')).toMatch(/\/registry must be string/);
  });
});
