// The report file's document: the whole run, versioned, never compacted, redacted. Plain objects only.
import { describe, expect, it } from 'vitest';
import { Redactor } from '../../src/core/redact.js';
import { renderRevocation, revocableOutput } from '../../src/report/revocation.js';
import { buildRunReport, RUN_REPORT_SCHEMA, RUN_REPORT_VERSION, type RunReportInput } from '../../src/report/runReport.js';
import { DECISIONS_BUDGET_BYTES } from '../../src/report/outputs.js';
import type { RevocationVerdict } from '../../src/rules/revocation.js';
import { record } from './fixtures.js';
import { HOLDS, W1 } from './timelineFixture.js';
import { checkReport } from './reportSchema.js';

/** The document as built, held to the report file's schema (schema/run-report.v2.json). */
const report: typeof buildRunReport = (input, options) => checkReport(buildRunReport(input, options));

const IDENTITY = {
  repository: 'acme/platform',
  runId: '4242',
  runAttempt: '1',
  owner: 'acme/platform/runs/4242/attempts/1/a1b2',
  url: 'https://github.com/acme/platform/actions/runs/4242/attempts/1',
};

const HOLDING: RevocationVerdict = {
  revocable: false,
  reason: '1 of 2 node(s) of the cluster still hold or may hold the old credential',
  holders: [{ node: 'w2', kind: 'not-verified', why: 'no verified-revision marker, not r7', selected: true }],
  judged: 2,
  outsideScope: 0,
  selectionConverged: false,
};

function input(over: Partial<RunReportInput> = {}): RunReportInput {
  return {
    identity: IDENTITY,
    generatedAt: '2026-03-01T10:10:00.000Z',
    mode: 'apply',
    registry: ['ghcr.io'],
    revision: 'r7',
    result: 'processed',
    records: [record('w1', 'rebooted'), record('w2', 'reboot-skipped')],
    ...over,
  };
}

describe('buildRunReport', () => {
  it('names its schema and version, the run, the mode, and every node with its evidence and steps', () => {
    const doc = report(input({ upToDate: ['cp-1'], notReached: ['w3'], revocation: HOLDING }));
    expect(doc.schema).toBe(RUN_REPORT_SCHEMA);
    expect(doc.version).toBe(RUN_REPORT_VERSION);
    expect(doc.run).toEqual(IDENTITY);
    expect(doc).toMatchObject({ mode: 'apply', registry: ['ghcr.io'], revision: 'r7', result: 'processed', error: null });
    expect(doc.nodes.map((n) => n.name)).toEqual(['w1', 'w2']);
    expect(doc.nodes[0].evidence?.values.files).toHaveLength(2);
    expect(doc.nodes[0].proof?.verdict).toBe('skip');
    expect(doc.nodes[0].steps).toHaveLength(13);
    expect(doc.counts).toMatchObject({ rebooted: 1, 'reboot-skipped': 1, failed: 0, notReached: 1, upToDate: 1 });
    expect(doc.upToDate).toEqual(['cp-1']);
    expect(doc.notReached).toEqual(['w3']);
    expect(doc.oldCredential).toEqual(HOLDING);
    // plain JSON: what a later step parses is what was built
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });

  it("carries the timeline's data: each started node's span with its steps' phases, the holds, the in-flight count", () => {
    const doc = report(input({ records: [W1, record('w9', 'planned-skip')], holds: HOLDS, inFlightMax: 2, maxUnavailable: 2 }));
    expect(doc.timeline.nodes.map((n) => n.node)).toEqual(['w1']);
    expect(doc.timeline.nodes[0]).toMatchObject({ startedAt: W1.startedAt, endedAt: W1.endedAt });
    expect(doc.timeline.nodes[0].steps.map((s) => s.phase)).toContain('drain');
    expect(doc.timeline).toMatchObject({ inFlightMax: 2, maxUnavailable: 2, topologyKey: null, holds: HOLDS });
  });

  it('is never compacted: 1000 nodes with long step details keep every detail, past the decisions output budget', () => {
    const many = Array.from({ length: 1000 }, (_, i) =>
      record(`node-${i}`, 'rebooted', { steps: record('x', 'rebooted').steps.map((s) => ({ ...s, detail: 'x'.repeat(400) })) }),
    );
    const doc = report(input({ records: many }));
    expect(Buffer.byteLength(JSON.stringify(doc))).toBeGreaterThan(DECISIONS_BUDGET_BYTES);
    expect(doc.nodes).toHaveLength(1000);
    expect(doc.nodes.every((n) => n.steps.length === 13 && n.steps.every((s) => s.detail === 'x'.repeat(400)))).toBe(true);
  });

  it('plan: the machine-config change list rides along; no identity, no verdict: null', () => {
    const configPreview = { shown: false as const, why: 'read through talosctl' };
    const doc = report(
      input({ mode: 'plan', result: 'planned', identity: undefined, records: [record('w1', 'planned-reboot', { configPreview })] }),
    );
    expect(doc.nodes[0].configPreview).toEqual(configPreview);
    expect(doc.run).toBeNull();
    expect(doc.oldCredential).toBeNull();
    expect(doc.timeline.nodes).toEqual([]);
  });

  it('redacts every string with the run redactor, and leaves the records untouched', () => {
    const secret = 's3cr3t-passw0rd';
    const records = [record('w1', 'failed', { reason: `kubectl said ${secret}` })];
    const before = JSON.stringify(records);
    const doc = report(input({ records, error: `boom ${secret}` }), { redactor: new Redactor([secret]) });
    expect(JSON.stringify(doc)).not.toContain(secret);
    expect(doc.nodes[0].reason).toBe('kubectl said ***');
    expect(JSON.stringify(records)).toBe(before);
  });
});

describe('the old-credential verdict as shown', () => {
  it('the output is true only on a verdict that says so', () => {
    expect(revocableOutput({ ...HOLDING, revocable: true, holders: [] })).toBe('true');
    expect(revocableOutput(HOLDING)).toBe('false');
    expect(revocableOutput(undefined)).toBe('false');
  });

  it('one line, and the nodes that may still hold it, escaped; past 50 they are counted', () => {
    expect(renderRevocation({ ...HOLDING, revocable: true, holders: [], reason: 'all 2 node(s)…' })).toBe(
      '<p><b>Old credential:</b> ✅ safe to revoke — all 2 node(s)…</p>',
    );
    const html = renderRevocation({
      ...HOLDING,
      holders: [
        { node: '<w2>', kind: 'claimed', why: 'a | b', selected: true },
        { node: 'cp-1', kind: 'not-verified', why: 'no marker', selected: false },
      ],
    });
    expect(html).toContain('not safe to revoke yet');
    expect(html).toContain('<li><code>&lt;w2&gt;</code>: a &#124; b</li>');
    // a node outside the selection is named as such: this run does not roll it
    expect(html).toContain('<li><code>cp-1</code> (outside nodes/node-selector): no marker</li>');
    const many = Array.from({ length: 60 }, (_, i) => ({ node: `n${i}`, kind: 'not-verified' as const, why: 'no marker', selected: true }));
    const long = renderRevocation({ ...HOLDING, holders: many });
    expect(long.match(/<li>/g)).toHaveLength(51);
    expect(long).toContain('… 10 more (the report file lists every one)');
  });
});

describe('what stopped the roll and the windows, as data', () => {
  const next = Date.UTC(2026, 11, 8, 1);
  it('a window stop carries the next opening as an instant with its zone, never only the sentence', () => {
    const doc = report(
      input({
        result: 'partial',
        notice: 'outside every maintenance window: the next opens at 2026-12-08T02:00:00+01:00 (Europe/Copenhagen)',
        stoppedBy: 'window',
        stop: {
          check: 'window',
          message: 'outside every maintenance window: the next opens at 2026-12-08T02:00:00+01:00 (Europe/Copenhagen)',
          value: { open: false, nextMs: next, timezone: 'Europe/Copenhagen' },
        },
      }),
    );
    expect(doc.stop).toEqual({
      check: 'window',
      message: 'outside every maintenance window: the next opens at 2026-12-08T02:00:00+01:00 (Europe/Copenhagen)',
      windows: { open: false, nextOpening: '2026-12-08T01:00:00.000Z', timezone: 'Europe/Copenhagen' },
    });
  });

  it("another check's stop: its name and line; plan's windows now and after they close, each instant in UTC with its zone", () => {
    const budget = report(
      input({ result: 'partial', stop: { check: 'budget', message: 'the time budget is spent', value: { allowed: false } } }),
    );
    expect(budget.stop).toEqual({ check: 'budget', message: 'the time budget is spent' });
    const plan = report(
      input({
        mode: 'plan',
        result: 'planned',
        windowsAt: {
          now: { open: true, untilMs: Date.UTC(2026, 11, 7, 3), timezone: 'Europe/Copenhagen' },
          afterClose: { open: false, nextMs: next, timezone: 'Europe/Copenhagen' },
        },
      }),
    );
    expect(plan.windowsAt).toEqual({
      now: { open: true, until: '2026-12-07T03:00:00.000Z', timezone: 'Europe/Copenhagen' },
      afterClose: { open: false, nextOpening: '2026-12-08T01:00:00.000Z', timezone: 'Europe/Copenhagen' },
    });
    expect(report(input()).stop).toBeUndefined();
  });
});
