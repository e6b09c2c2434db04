import { describe, expect, it } from 'vitest';
import type { DecisionRecord } from '../../src/core/model/record.js';
import { CRI_RESTART_NOT_WAITED, criRestartStep, STEP, stepPhase } from '../../src/core/steps.js';
import { barsInFlightMax, buildTimeline, chartName, renderTimeline, sharedDomain, TIMELINE_WIDTH } from '../../src/report/timeline.js';
import { HOLDS, RECORDS, T0, W1, W2 } from './timelineFixture.js';

const text = (input: Parameters<typeof buildTimeline>[0], options = {}) => buildTimeline(input, options)!.lines.join('\n');
/** the bar of a row: the characters between its frames */
const barOf = (lines: string[], label: string) => {
  const row = lines.find((l) => l.startsWith(`${label} `))!;
  return row.slice(row.indexOf('|') + 1, row.lastIndexOf('|'));
};
/** the phase characters of a bar in order, each run of one character once */
const phases = (bar: string) => bar.replace(/[ -]/g, '').replace(/(.)\1+/g, '$1');

describe('the timeline of a parallel roll (three workers, max-unavailable 2, a settle hold, a budget stop)', () => {
  const input = { records: RECORDS, holds: HOLDS, inFlightMax: 2 };

  it('renders stable text: the axis, a bar per node in roll order, the holds, the most in flight, the legend', () => {
    expect(text(input)).toBe(
      [
        '3 nodes from 2026-03-01 10:00:00Z to 10:02:35Z (2m35s); one column = 2.5 s',
        '        0s              38.7 s         1m17s          1m56s      2m35s',
        '        +---------------+--------------+--------------+--------------+',
        'w1      |CDDDDDDDDDDDDDDRRRR^^^^^^^^^^^^^^^^^^^^^^^PPU               | rebooted',
        'w2      |CWWWWWU                                                     | reboot skipped',
        'w3      |                       CDDDDDDDDDDRRRR^^^^^^^^^^^^^^^^^^^PPU| rebooted',
        '(holds) |      SSSSSSSSSSSSSSSSSS                    !               |',
        '        +---------------+--------------+--------------+--------------+',
        'most nodes in flight at once: 2',
        'C claim  D drain  R reboot  W wait for Talos to restart cri  P proof  ^ wait for Ready  U release',
        '- any other step  S settle or health gate holding a drain or a start  ! time budget: nothing new started from here',
        'S settle gate 18.0 s to 1m0s (w3): deployment default/web: 1 of 2 replicas available',
        '! time budget at 1m55s (w4): time-budget: 40s left, a worker may take 7m36s; w4 is left for the next run',
      ].join('\n'),
    );
  });

  it('draws each phase a node went through, in order, at the columns of its steps', () => {
    const { lines } = buildTimeline(input)!;
    expect(phases(barOf(lines, 'w1'))).toBe('CDR^PU');
    expect(phases(barOf(lines, 'w2'))).toBe('CWU');
    expect(phases(barOf(lines, 'w3'))).toBe('CDR^PU');
    const col = (s: number) => Math.floor((s * TIMELINE_WIDTH) / 155.6);
    // w3 starts when the settle gate let it (60 s), after w2 ended (18 s)
    expect(barOf(lines, 'w3').search(/\S/)).toBe(col(60));
    expect(barOf(lines, 'w2').trimEnd().length).toBe(col(18) + 1);
    // w1's drain covers 4.2 s to 40 s
    const w1 = barOf(lines, 'w1');
    expect(w1.indexOf('D')).toBe(col(4.2));
    // the reboot starts in the column the drain ends in: the later phase takes it
    expect(col(40)).toBe(col(40.3));
    expect(w1.lastIndexOf('D')).toBe(col(40) - 1);
    expect(w1.indexOf('R')).toBe(col(40.3));
  });

  it('marks the settle hold as a span and the budget stop as a moment', () => {
    const holds = barOf(buildTimeline(input)!.lines, '(holds)');
    const col = (s: number) => Math.floor((s * TIMELINE_WIDTH) / 155.6);
    expect(holds.indexOf('S')).toBe(col(18));
    expect(holds.lastIndexOf('S')).toBe(col(60)); // up to the column w3 starts in
    expect(holds.indexOf('!')).toBe(col(115.6));
    expect(holds.replace(/[ S!]/g, '')).toBe('');
  });

  it('computes the most in flight from the bars and says when the run counted otherwise', () => {
    expect(buildTimeline(input)!.inFlightMax).toBe(2);
    expect(text({ ...input, inFlightMax: 3 })).toContain('most nodes in flight at once: 2; the run counted 3\n');
    // one ending in the same millisecond another starts is not in flight with it
    expect(
      barsInFlightMax([
        { startMs: 0, endMs: 10 },
        { startMs: 10, endMs: 20 },
      ]),
    ).toBe(1);
    expect(
      barsInFlightMax([
        { startMs: 0, endMs: 10 },
        { startMs: 9, endMs: 20 },
        { startMs: 9, endMs: 9 },
      ]),
    ).toBe(3);
    expect(barsInFlightMax([])).toBe(0);
  });
});

describe('the timeline: edge cases', () => {
  it('a one-node run: one bar over the whole axis', () => {
    const { lines, inFlightMax } = buildTimeline({ records: [W2], inFlightMax: 1 })!;
    expect(lines[0]).toBe('1 node from 2026-03-01 10:00:00Z to 10:00:18Z (18.0 s); one column = 300 ms');
    expect(barOf(lines, 'w2')).toMatch(/^C+-*W+-*U+$/);
    expect(barOf(lines, 'w2')).toHaveLength(TIMELINE_WIDTH);
    expect(inFlightMax).toBe(1);
    expect(lines.some((l) => l.startsWith('(holds)'))).toBe(false);
  });

  it('no node started: nothing to draw, unless the budget refused the first start', () => {
    expect(buildTimeline({ records: [] })).toBeUndefined();
    expect(renderTimeline({ records: [], holds: [] })).toBeUndefined();
    const { lines } = buildTimeline({ records: [], holds: [HOLDS[1]] })!;
    expect(lines[0]).toMatch(/^no node started from 2026-03-01 10:01:55Z to 10:01:55Z/);
    expect(barOf(lines, '(holds)')).toBe(`!${' '.repeat(TIMELINE_WIDTH - 1)}`);
    expect(lines).toContain('most nodes in flight at once: 0');
  });

  it('plan records (no start or end) are not drawn', () => {
    const planned: DecisionRecord = { ...W2, outcome: 'planned-skip', startedAt: undefined, endedAt: undefined };
    expect(buildTimeline({ records: [planned] })).toBeUndefined();
  });

  it('a phase shorter than a column still gets one, after the phase it shares a column with', () => {
    // a 10 min roll: 10 s a column; the proof (1 s) and the release (0.2 s) share the last one
    const at = (s: number) => new Date(T0 + s * 1000).toISOString();
    const r: DecisionRecord = {
      ...W1,
      startedAt: at(0),
      endedAt: at(600),
      steps: [
        { name: STEP.claim, startedAt: at(0), durationMs: 200, ok: true },
        { name: STEP.drain, startedAt: at(1), durationMs: 300_000, ok: true },
        { name: STEP.reboot, startedAt: at(301), durationMs: 1000, ok: true },
        { name: STEP.waitReady, startedAt: at(302), durationMs: 297_000, ok: true },
        { name: STEP.prove, startedAt: at(599), durationMs: 600, ok: true },
        { name: STEP.release, startedAt: at(599.7), durationMs: 300, ok: true },
      ],
    };
    const bar = barOf(buildTimeline({ records: [r] })!.lines, 'w1');
    expect(phases(bar)).toBe('CDR^PU');
    expect(bar).toHaveLength(TIMELINE_WIDTH);
    expect(bar.endsWith('PU')).toBe(true);
  });

  it('cuts long names in the middle, the same way on every row, and draws only ASCII', () => {
    const pool = (i: number) => `gke-prod-cluster-default-pool-1a2b3c4d-xy${i}z`;
    expect(chartName(pool(1))).toBe('gke-prod-cl~a2b3c4d-xy1z');
    expect(chartName(pool(1))).toHaveLength(24);
    expect(chartName(pool(2))).toBe('gke-prod-cl~a2b3c4d-xy2z');
    expect(chartName('wörker-1')).toBe('w?rker-1');
    const { lines } = buildTimeline({
      records: [
        { ...W1, node: pool(1) },
        { ...W2, node: 'wörker-2' },
      ],
    })!;
    const rows = lines.filter((l) => / \|.*\| /.test(l));
    expect(rows).toHaveLength(2);
    expect(new Set(rows.map((l) => l.indexOf('|'))).size).toBe(1);
    expect(new Set(rows.map((l) => l.lastIndexOf('|'))).size).toBe(1);
    // every line of the chart is printable ASCII but the free text at the end of a hold line
    for (const l of lines) expect(l).toMatch(/^[\x20-\x7e]*$/);
  });

  it('leaves out the domain every node shares when a name would be cut otherwise', () => {
    const aws = (i: number) => `ip-10-0-1-2${i}.eu-west-1.compute.internal`;
    expect(sharedDomain([aws(3), aws(4)])).toBe('.eu-west-1.compute.internal');
    expect(sharedDomain(['w1', 'w2'])).toBe('');
    expect(sharedDomain([aws(3), 'w2'])).toBe('');
    const { lines } = buildTimeline({
      records: [
        { ...W1, node: aws(3) },
        { ...W2, node: aws(4) },
      ],
      holds: [{ ...HOLDS[0], node: aws(5) }],
    })!;
    expect(lines[1]).toBe('node names without their shared domain .eu-west-1.compute.internal');
    expect(barOf(lines, 'ip-10-0-1-23')).toMatch(/^C/);
    expect(barOf(lines, 'ip-10-0-1-24')).toMatch(/^C/);
    expect(lines.some((l) => l.startsWith('S settle gate') && l.includes('(ip-10-0-1-25)'))).toBe(true);
  });

  it('keeps within maxBytes: the rows past it are counted, not drawn', () => {
    const many = Array.from({ length: 500 }, (_, i) => ({ ...W1, node: `worker-${i}` }));
    const html = renderTimeline({ records: many }, { maxBytes: 8000 })!;
    expect(Buffer.byteLength(html)).toBeLessThanOrEqual(8000);
    const t = buildTimeline({ records: many }, { maxBytes: 8000 })!;
    expect(t.omitted).toBeGreaterThan(0);
    expect(html).toContain(`... ${t.omitted} more nodes not drawn`);
    expect(html).toContain('worker-0 ');
    expect(renderTimeline({ records: many }, { maxBytes: 300 })).toBeUndefined();
  });
});

describe('the timeline in HTML', () => {
  it('escapes names and hold details, keeps no pipe and no blank line, and balances its markup', () => {
    const html = renderTimeline({
      records: [{ ...W1, node: '<script>x</script>' }, W2],
      holds: [{ kind: 'settle', startedAt: W2.endedAt!, detail: 'deployment <b>x</b> | y\n\nz &amp;', node: 'w3' }],
    })!;
    expect(html.startsWith('<h3>Timeline of the roll</h3>\n<pre>')).toBe(true);
    expect(html.endsWith('</pre>')).toBe(true);
    expect(html).not.toMatch(/<(?!\/?(h3|pre)>)/);
    expect(html).toContain('&lt;script&gt;x&lt;/script&gt; &#124;C');
    expect(html).toContain('deployment &lt;b&gt;x&lt;/b&gt; &#124; y z &amp;amp;');
    expect(html).not.toContain('|');
    expect(html).not.toMatch(/\n\s*\n/);
  });
});

describe('the steps shared by the pipeline and the timeline', () => {
  it('gives each named step its phase and every other step `other`', () => {
    expect(stepPhase(STEP.claim)).toBe('claim');
    expect(stepPhase(STEP.drain)).toBe('drain');
    expect(stepPhase(STEP.drainRetry)).toBe('drain');
    expect(stepPhase(STEP.reboot)).toBe('reboot');
    expect(stepPhase(criRestartStep('20.0 s'))).toBe('cri-restart');
    expect(stepPhase(CRI_RESTART_NOT_WAITED)).toBe('other');
    expect(stepPhase(STEP.waitReady)).toBe('ready');
    expect(stepPhase(STEP.prove)).toBe('proof');
    expect(stepPhase(STEP.release)).toBe('release');
    expect(stepPhase(STEP.releaseRestore)).toBe('release');
    for (const other of [
      'read node',
      'guard (before drain)',
      'quorum gate (before drain)',
      'phase=mutating',
      're-read node (before the release)',
    ]) {
      expect(stepPhase(other), other).toBe('other');
    }
  });
});
