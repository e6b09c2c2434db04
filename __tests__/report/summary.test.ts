import { describe, expect, it } from 'vitest';
import type { DecisionRecord, Outcome } from '../../src/core/model/record.js';
import { GITHUB_SUMMARY_LIMIT_BYTES, renderSummary, SUMMARY_BUDGET_BYTES, type SummaryInput } from '../../src/report/summary.js';
import { record, verdict } from './fixtures.js';
import { HOLDS, RECORDS, W1 } from './timelineFixture.js';

const base = (records: DecisionRecord[], extra: Partial<SummaryInput> = {}): SummaryInput => ({
  mode: 'apply',
  registry: ['ghcr.io'],
  revision: 'r42',
  result: 'processed',
  records,
  ...extra,
});

const rowOf = (html: string, node: string): string => {
  const row = html.split('\n').find((l) => l.startsWith(`<tr><td>${node}</td>`));
  if (!row) throw new Error(`no row for ${node}`);
  return row;
};

const detailsOf = (html: string, node: string): string | undefined => {
  const start = html.indexOf(`<details><summary>${node} — `);
  return start < 0 ? undefined : html.slice(start, html.indexOf('</details>', start));
};

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('renderSummary', () => {
  it('heads the summary with the registry, the revision and one line of counts', () => {
    const html = renderSummary(
      base([record('w1', 'rebooted'), record('w2', 'reboot-skipped'), record('w3', 'reboot-skipped'), record('w4', 'failed')], {
        result: 'failed',
        notReached: ['cp-1', 'cp-2'],
        upToDate: 7,
      }),
    );
    expect(html).toMatch(/^<h2>Registry auth rollout: <code>ghcr\.io<\/code> revision <code>r42<\/code><\/h2>/);
    expect(html).toContain(
      '<p>Result: <b>failed</b> · 1 rebooted · 2 reboots skipped · 0 planned (0 reboot, 0 skip) · 0 refused · 1 failed · 2 not reached · 7 already up to date</p>',
    );
  });

  // The Reason cell is a few words (the rule the evidence rested on, and for a rebooted node its proof);
  // the evidence columns beside it back them, the whole sentence is in the details.
  const BRIEF: Record<string, string> = {
    rebooted:
      'rebooted: the node’s config held an old credential, or none, for the registry · proven: containerd started after the new config',
    'reboot-skipped': 'no reboot needed: containerd started after the config with the new credential was written',
    'planned-reboot': 'would reboot: the node’s config held an old credential, or none, for the registry',
    'planned-skip': 'would skip the reboot: containerd started after the config with the new credential was written',
    refused: 'claim conflict: owner held by another run',
    failed: 'drain timed out after 45m',
  };

  it.each<[Outcome, string]>([
    ['rebooted', 'rebooted'],
    ['reboot-skipped', 'reboot skipped'],
    ['planned-reboot', 'planned reboot'],
    ['planned-skip', 'planned skip'],
    ['refused', 'refused'],
    ['failed', 'failed'],
  ])('renders a %s node as a row and a details block', (outcome, label) => {
    const r = record('w1', outcome);
    const html = renderSummary(base([r], { mode: outcome.startsWith('planned') ? 'plan' : 'apply' }));
    const row = rowOf(html, 'w1');
    const cells = [...row.matchAll(/<td>(.*?)<\/td>/g)].map((m) => m[1]);
    expect(cells).toHaveLength(9);
    expect(cells[1]).toBe('worker');
    expect(cells[2]).toContain(label);
    expect(cells[3]).toBe(BRIEF[outcome]);
    // a record with only the ISO strings (no bounds) still shows them
    expect(cells[4]).toBe('2026-03-01T10:00:05.000Z');
    expect(cells[5]).toBe('2026-03-01T09:59:00.000Z');
    expect(cells[6]).toBe('≥ +1m5s');
    expect(cells[7]).toBe(r.claim ? '1' : '—');
    expect(cells[8]).toBe(outcome === 'rebooted' ? '4m5s' : '4.2 s');

    const details = detailsOf(html, 'w1');
    expect(details).toBeDefined();
    expect(details).toContain(`<summary>w1 — ${label}</summary>`);
    expect(details).toContain('/etc/cri/conf.d/01-registries.part');
    expect(details).toContain('≥ +1m5s');
    expect(details).toContain('v1.13.8');
    for (const s of r.steps) expect(details).toContain(`<td>${s.name}</td><td>${s.startedAt}</td>`);
    if (r.nextStep) expect(details).toContain(`<b>Next step:</b> ${r.nextStep}`);
    else expect(details).not.toContain('Next step');
    // a rebooted node's proof is worded as a proof, never as "skip the reboot"
    if (r.proof) {
      expect(details).toContain(
        '<b>Proof after the reboot:</b> proven: the running containerd started after the config with the new credential was written',
      );
      expect(details).not.toMatch(/Proof[^<]*:<\/b> skip the reboot/);
    }
  });

  it('a rebooted node shows the post-reboot proof that decided, compactly, with the gap and its read path', () => {
    const day = Date.UTC(2026, 2, 1);
    const oldStart = Date.UTC(2026, 1, 19, 8, 0, 0);
    const evidence = verdict('reboot', 'cri.toml carries the old credential', {
      criStart: { earliestMs: oldStart, latestMs: oldStart + 1000 },
      configWrite: { earliestMs: oldStart - 60_000, latestMs: oldStart - 59_001 },
      gap: { lowMs: 58_000, highMs: 61_000 },
      readPath: 'cli',
    });
    // API readings after the reboot: exact instants, a 412 ms gap known to the microsecond
    const write = day + (10 * 3600 + 15 * 60 + 44) * 1000 + 586.25;
    const proof = verdict('skip', 'containerd started after the config write', {
      criStart: { earliestMs: write + 411.9, latestMs: write + 412.3 },
      configWrite: { earliestMs: write, latestMs: write },
      gap: { lowMs: 411.9, highMs: 412.3 },
      readPath: 'api',
      marginMs: 10,
    });
    const html = renderSummary(base([record('w1', 'rebooted', { evidence, proof })]));
    const cells = [...rowOf(html, 'w1').matchAll(/<td>(.*?)<\/td>/g)].map((m) => m[1]);
    expect(cells[4]).toBe('10:15:44.998Z');
    expect(cells[5]).toBe('10:15:44.586Z');
    expect(cells[6]).toBe('+412 ms ± 200 µs (api)');
    const details = detailsOf(html, 'w1')!;
    // the pre-patch reading keeps its column in the details, dated because it is not the run's day
    expect(details).toContain('2026-02-19 08:00:00.5Z ± 500 ms');
    expect(details).toContain('+59.5 s ± 1.5 s (cli)');
    expect(details).toContain('<td>margin</td><td>2 s</td><td>10 ms</td>');
  });

  it('counts up-to-date nodes given by name', () => {
    expect(renderSummary(base([record('w1', 'rebooted')], { upToDate: ['a', 'b', 'c'] }))).toContain('· 3 already up to date</p>');
  });

  it('says plan mode is read-only', () => {
    expect(renderSummary(base([record('w1', 'planned-skip')], { mode: 'plan', result: 'planned' }))).toContain(
      'Registry auth rollout plan (read-only)',
    );
  });

  it('says nothing was to do on a clean run, without a table', () => {
    const html = renderSummary(base([], { result: 'clean' }));
    expect(html).toContain('Nothing to do: every selected node already verified revision <code>r42</code>.');
    expect(html).not.toContain('<table>');
  });

  it('lists claim conflicts and the failure, and rows for nodes not reached', () => {
    const html = renderSummary(
      base(
        [
          record('w1', 'reboot-skipped', {
            claim: { attempts: 3, conflicts: ['taint a:NoSchedule appeared', 'annotations map appeared'] },
          }),
          record('w2', 'failed'),
        ],
        { result: 'failed', notReached: ['cp-1'], error: 'w2: drain timed out' },
      ),
    );
    expect(detailsOf(html, 'w1')).toContain(
      '<b>Claim:</b> 3 attempts; conflicts:</p>\n<ul><li>taint a:NoSchedule appeared</li><li>annotations map appeared</li></ul>',
    );
    expect(rowOf(html, 'w1')).toContain('<td>3</td>');
    expect(rowOf(html, 'cp-1')).toContain('not reached');
    expect(detailsOf(html, 'cp-1')).toBeUndefined();
    expect(html).toContain('<p><b>Error:</b> w2: drain timed out</p>');
    expect(detailsOf(html, 'w2')).toContain('<b>failed</b>');
  });

  it('renders missing evidence as dashes', () => {
    const html = renderSummary(base([record('w1', 'refused', { evidence: undefined, claim: undefined })]));
    const cells = [...rowOf(html, 'w1').matchAll(/<td>(.*?)<\/td>/g)].map((m) => m[1]);
    expect(cells.slice(4, 7)).toEqual(['—', '—', '—']);
  });

  describe('escaping', () => {
    const evil = '<script>alert(1)</script>';
    const r = record(evil, 'failed', {
      uid: 'u"1',
      reason: 'a | b & c\n\nd <img src=x onerror=alert(1)>',
      nextStep: 'run `kubectl` | tee\n\n# heading',
      claim: { attempts: 2, conflicts: ['<b>owner</b> held by x|y'] },
      evidence: verdict('reboot', 'unparseable <output>', {
        criState: '<i>Running</i>',
        files: [{ path: '/etc/<x>|y', lastMod: 'Mar  1\n09:59', credential: 'unknown' }],
      }),
      steps: [{ name: 'drain', startedAt: '2026-03-01T10:00:00Z', durationMs: 5, ok: false, detail: 'error: <pod> x|y\n\nz' }],
    });
    const html = renderSummary(
      base([r], { registry: ['reg<1>.io'], revision: "r'1", error: '</table><script>x</script>', notReached: ['n|<2>'] }),
    );

    it('leaves no tag from the data', () => {
      expect(html).not.toContain('<script');
      expect(html).not.toContain('<img');
      expect(html).not.toContain('<i>Running');
      expect(html).not.toContain('<b>owner');
      expect(html).not.toContain('<pod>');
      expect(html).not.toContain('<output>');
      expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(html).toContain('reg&lt;1&gt;.io');
      expect(html).toContain('r&#39;1');
      expect(html).toContain('u&quot;1');
      expect(html).toContain('a &#124; b &amp; c<br><br>d &lt;img');
    });

    it('leaves no pipe and no data newline', () => {
      expect(html).not.toContain('|');
      expect(html).toContain('/etc/&lt;x&gt;&#124;y');
      expect(html).toContain('Mar  1<br>09:59');
      // Sections are separated by one blank line; a blank line anywhere else would come from data.
      const sections = html.trimEnd().split('\n\n');
      expect(sections.every((s) => /^<(h2|p|table|details)[ >]/.test(s))).toBe(true);
      expect(html).not.toContain('\n\n# heading');
    });

    it('balances the markup it writes', () => {
      for (const tag of ['table', 'tr', 'td', 'details', 'summary', 'p', 'ul', 'li', 'code']) {
        const open = html.match(new RegExp(`<${tag}[ >]`, 'g'))?.length ?? 0;
        const close = html.match(new RegExp(`</${tag}>`, 'g'))?.length ?? 0;
        expect(close, tag).toBe(open);
      }
    });
  });

  describe('size', () => {
    const outcomes: Outcome[] = ['rebooted', 'reboot-skipped', 'reboot-skipped', 'reboot-skipped'];
    const big = (n: number, extra: (i: number) => Partial<DecisionRecord> = () => ({})): DecisionRecord[] =>
      Array.from({ length: n }, (_, i) =>
        record(`worker-pool-a-${String(i).padStart(4, '0')}-abcdefghij`, outcomes[i % outcomes.length], {
          claim: { attempts: i % 50 === 7 ? 2 : 1, conflicts: i % 50 === 7 ? ['annotations map appeared'] : [] },
          ...extra(i),
        }),
      );

    it('keeps everything for a small roll', () => {
      const html = renderSummary(base(big(20)));
      expect(html.match(/<details>/g)).toHaveLength(20);
      expect(html).not.toContain('left out');
    });

    it('stays under the budget with 1000 nodes, keeping every row and the interesting details', () => {
      const records = big(1000);
      records[999] = record('cp-3', 'failed');
      const html = renderSummary(base(records, { result: 'failed', notReached: ['cp-4', 'cp-5'] }));
      expect(bytes(html)).toBeLessThanOrEqual(SUMMARY_BUDGET_BYTES);
      expect(bytes(html)).toBeLessThan(GITHUB_SUMMARY_LIMIT_BYTES);
      // Every node keeps its row.
      for (const r of records) expect(html).toContain(`<tr><td>${r.node}</td>`);
      expect(html).toContain('<tr><td>cp-5</td>');
      // Details were dropped, it says so, and the failure and the claim retries survived.
      const kept = html.match(/<details>/g)?.length ?? 0;
      expect(kept).toBeGreaterThan(0);
      expect(kept).toBeLessThan(1000);
      expect(html).toMatch(new RegExp(`Details left out for ${1000 - kept} of 1000 nodes`));
      expect(detailsOf(html, 'cp-3')).toBeDefined();
      for (let i = 7; i < 999; i += 50) expect(detailsOf(html, records[i].node), records[i].node).toBeDefined();
      // Kept by interest, then newest first: rebooted nodes outrank skipped ones, and of the
      // rebooted the newest keep their details and the oldest lose them.
      const plain = (o: Outcome) => records.filter((r) => r.outcome === o && r.claim!.attempts === 1);
      const rebooted = plain('rebooted');
      expect(detailsOf(html, rebooted[rebooted.length - 1].node)).toBeDefined();
      expect(detailsOf(html, rebooted[0].node)).toBeUndefined();
      expect(plain('reboot-skipped').filter((r) => detailsOf(html, r.node))).toEqual([]);
      const keptRebooted = rebooted.map((r) => detailsOf(html, r.node) !== undefined);
      expect(keptRebooted.indexOf(true)).toBe(keptRebooted.lastIndexOf(false) + 1);
      expect(html).toMatch(/\(\d+ rebooted, \d+ reboot skipped\), the least eventful and oldest first/);
    });

    it('stays under the budget when every field is huge', () => {
      const huge = 'x<'.repeat(50_000);
      const records = big(1000, () => ({
        node: `n-${huge.slice(0, 300)}`,
        reason: huge,
        nextStep: huge,
        steps: Array.from({ length: 30 }, () => ({ name: huge, startedAt: huge, durationMs: 1, ok: true, detail: huge })),
      })).map((r, i) => ({ ...r, node: `${i}-${r.node}` }));
      const html = renderSummary(base(records, { error: huge, registry: [huge], revision: huge }));
      expect(bytes(html)).toBeLessThanOrEqual(SUMMARY_BUDGET_BYTES);
      expect(html).toMatch(/\d+ more nodes not listed/);
      expect(html).toContain('<td>0-n-');
    });

    it("keeps one node's many steps from crowding out the others", () => {
      const many = Array.from({ length: 5000 }, (_, i) => ({
        name: `retry ${i}`,
        startedAt: '2026-03-01T10:00:00Z',
        durationMs: 1,
        ok: true,
      }));
      const html = renderSummary(base([record('w1', 'failed', { steps: many }), ...big(10)]));
      expect(detailsOf(html, 'w1')).toMatch(/… \d+ more steps in this node's log group/);
      expect(bytes(detailsOf(html, 'w1')!)).toBeLessThan(40_000);
      expect(html.match(/<details>/g)).toHaveLength(11);
    });

    it('honours a smaller budget', () => {
      const html = renderSummary(base(big(100)), { budgetBytes: 60_000 });
      expect(bytes(html)).toBeLessThanOrEqual(60_000);
      expect(html).toContain('left out');
    });
  });
});

describe('renderSummary: which path read Talos', () => {
  it('says it under the counts, escaped', () => {
    const html = renderSummary(
      base([record('w1', 'rebooted')], {
        talosReads: 'reading Talos through talosctl: /tmp/talosconfig, context "omni": the context has no client certificate <x>',
      }),
    );
    expect(html).toContain(
      '<p><b>Talos readings:</b> reading Talos through talosctl: /tmp/talosconfig, context &quot;omni&quot;: the context has no client certificate &lt;x&gt;</p>',
    );
  });
});

describe('renderSummary: the outcome cell', () => {
  it('is the label alone for a decided node, and names an undecided proof and how it was settled', () => {
    const plain = renderSummary(base([record('w1', 'rebooted')]));
    expect(plain).toContain('<td>🔄 rebooted</td>');
    const undecided = record('w2', 'rebooted', {
      proofUndecided: { unproven: 'the order cannot be proven', settledBy: 'verify-image', residualRisk: 'r' },
    });
    const html = renderSummary(base([undecided]));
    expect(html).toContain('<td>🔄 rebooted (proof undecided; proven by verify-image)</td>');
  });
});

describe('renderSummary: the timeline of the roll', () => {
  const sectionsOf = (html: string) => html.trimEnd().split('\n\n');

  it('comes after the table (kept as it is) and before the details, with every node started and the holds', () => {
    const html = renderSummary(base(RECORDS, { result: 'partial', holds: HOLDS, inFlightMax: 2, maxUnavailable: 2, notReached: ['w4'] }));
    const sections = sectionsOf(html);
    const at = sections.findIndex((s) => s.startsWith('<h3>Timeline of the roll</h3>\n<pre>'));
    expect(sections[at - 1]).toMatch(/^<table>\n<tr><th>Node<\/th>/);
    expect(sections[at + 1]).toMatch(/^<details><summary>w1 — /);
    const pre = sections[at];
    for (const n of ['w1', 'w2', 'w3']) expect(pre).toMatch(new RegExp(`\\n${n} +&#124;`));
    expect(pre).toContain('\n(holds) ');
    expect(pre).toContain('most nodes in flight at once: 2\n');
    expect(pre).toContain('! time budget at 1m55s (w4)');
    // one timeline, nothing of it elsewhere
    expect(html.replace(pre, '')).not.toMatch(/Timeline|&#124;[C-]/);
  });

  it('is left out in plan mode and when no record has a start and an end', () => {
    expect(renderSummary(base(RECORDS, { mode: 'plan', result: 'planned' }))).not.toContain('Timeline');
    expect(renderSummary(base([record('w1', 'rebooted')]))).not.toContain('Timeline');
  });

  it('fits the budget with 1000 nodes: the table keeps every row, the timeline draws what fits and counts the rest', () => {
    const records = Array.from({ length: 1000 }, (_, i) => ({ ...W1, node: `worker-pool-a-${String(i).padStart(4, '0')}` }));
    const html = renderSummary(base(records));
    expect(bytes(html)).toBeLessThanOrEqual(SUMMARY_BUDGET_BYTES);
    for (const r of records) expect(html).toContain(`<tr><td>${r.node}</td>`);
    expect(html).toMatch(/\.\.\. \d+ more nodes not drawn/);
    expect(html).toContain('\nworker-pool-a-0000 &#124;');
  });
});

describe('renderSummary: several registries', () => {
  it('names the hosts each node was rolled for (row and details) and each host’s credential per file', () => {
    const v = verdict('reboot', '/etc/cri/conf.d/cri.toml holds an old credential for mirror.local:5000');
    v.values.files = [
      { path: '/etc/cri/conf.d/cri.toml', exists: true, credential: 'old', byHost: { 'ghcr.io': 'desired', 'mirror.local:5000': 'old' } },
    ];
    const r = record('w1', 'rebooted', {
      evidence: v,
      hosts: [
        { host: 'ghcr.io', why: 'ghcr.io proven with no image, not verify-image ghcr.io/acme/p:2', reprove: true },
        { host: 'mirror.local:5000', why: 'no verified marker for mirror.local:5000' },
      ],
    });
    const html = renderSummary(base([r], { registry: ['ghcr.io', 'mirror.local:5000'] }));
    // the run's hosts are a list: each its own code span in the heading
    expect(html).toMatch(
      /^<h2>Registry auth rollout: <code>ghcr\.io<\/code>, <code>mirror\.local:5000<\/code> revision <code>r42<\/code><\/h2>/,
    );
    expect(rowOf(html, 'w1')).toContain('<b>Hosts:</b> ghcr.io (proof image changed), mirror.local:5000');
    const details = detailsOf(html, 'w1')!;
    expect(details).toContain('<b>Rolled for:</b> <code>ghcr.io</code> (ghcr.io proven with no image');
    expect(details).toContain('<td>ghcr.io: desired, mirror.local:5000: old</td>');
    // a record without hosts (a single-host run's older records, a node refused before its fresh read) shows no line
    expect(rowOf(renderSummary(base([record('w2', 'rebooted')])), 'w2')).not.toContain('Hosts:');
  });
});
