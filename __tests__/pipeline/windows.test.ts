// Maintenance windows in a run (src/pipeline/startChecks/windows.ts, docs/windows.md), on the fakes and their
// virtual clock (2026-11-30T10:00:00Z at the start): checked before each start, a window that closes
// while a node is in flight lets it finish and starts no other; a run started outside every window
// reads the node listing and nothing else; a converged run stays `clean`; plan says open or not.
import { describe, expect, it } from 'vitest';
import { present } from '../../src/action/publish.js';
import type { MaintenanceWindow } from '../../src/core/model/windows.js';
import { makeCluster, roll } from './harness.js';

const H = 3_600_000;
const workers = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `w${i + 1}` }));
const utc = (start: string, durationMs: number): MaintenanceWindow => ({ start, durationMs, timezone: 'UTC' });
const publish = (res: Awaited<ReturnType<typeof roll>>) =>
  present({ kind: 'rollout', mode: 'apply', registry: ['ghcr.io'], revision: 'rev-2', failOnPartial: false, ...res });

describe('rollout: maintenance windows (fakes)', () => {
  it('a window closing while node 1 is in flight: node 1 finishes, node 2 is never claimed, partial with the next opening', async () => {
    const one = await roll(makeCluster(workers(1)), {});
    const tookMs = one.records[0].durationMs;
    expect(tookMs).toBeGreaterThan(2000);
    const c = makeCluster(workers(2));
    // opened at 10:00 today, closes halfway through node 1's roll
    const res = await roll(c, { maintenanceWindows: [utc('0 10 * * *', Math.round(tookMs / 2))] });
    expect(res.result).toBe('partial');
    expect(res.records.map((r) => [r.node, r.outcome])).toEqual([['w1', 'rebooted']]);
    expect(res.notReached).toEqual(['w2']);
    expect(c.kube.calls.filter((x) => x.name === 'w2')).toEqual([]);
    expect(res.notice).toBe(
      'outside every maintenance window: no further node was started; the next opens at 2026-12-01T10:00:00+00:00 (UTC)',
    );
    // the moment the scheduler found no window open: when node 1 ended
    expect(res.holds).toEqual([{ kind: 'window', startedAt: res.records[0].endedAt, detail: res.notice, node: 'w2' }]);
    // the Lease was released at the end (nothing left claimed)
    expect(c.kube.calls.some((x) => x.method === 'createLease')).toBe(true);
    const p = publish(res);
    expect(p.outputs?.result).toBe('partial');
    expect(p.outputs?.left).toBe('1');
    expect(p.annotations).toContainEqual({
      kind: 'notice',
      title: 'maintenance window closed',
      message: expect.stringContaining('the next opens at 2026-12-01T10:00:00+00:00 (UTC)'),
    });
    const html = p.summary!();
    expect(html).toContain('# maintenance window at ');
    expect(html).toContain('# maintenance window: none open, nothing new started from here');
  });

  it('a run started outside every window claims nothing: the listing only, no pre-flight, no Talos, no Lease', async () => {
    const c = makeCluster(workers(2));
    let preflights = 0;
    const res = await roll(
      c,
      { maintenanceWindows: [utc('0 2 * * *', H), { start: '0 22 * * 1-5', durationMs: 4 * H, timezone: 'Europe/Copenhagen' }] },
      { preflight: async () => (preflights++, { lines: [] }) as never },
    );
    expect(res.result).toBe('partial');
    expect(res.records).toEqual([]);
    expect(res.notReached).toEqual(['w1', 'w2']);
    // Monday 30 November, 10:00Z: the next is 22:00 in Copenhagen that evening, before 02:00 UTC
    expect(res.notice).toBe(
      'outside every maintenance window: no further node was started; the next opens at 2026-11-30T22:00:00+01:00 (Europe/Copenhagen)',
    );
    expect(c.kube.calls.map((x) => x.method)).toEqual(['listNodes']);
    expect(c.talos.calls).toEqual([]);
    expect(preflights).toBe(0);
    expect(publish(res).outputs).toMatchObject({ result: 'partial', left: '2' });
  });

  it('a converged run outside every window stays clean, on its one listing', async () => {
    const c = makeCluster(workers(1));
    expect((await roll(c)).result).toBe('processed');
    c.kube.calls.length = 0;
    const res = await roll(c, { maintenanceWindows: [utc('0 2 * * *', H)] }, { preflight: async () => ({ lines: [] }) as never });
    expect(res.result).toBe('clean');
    expect(res.notice).toBeUndefined();
    expect(c.kube.calls.map((x) => x.method)).toEqual(['listNodes']);
  });

  it('plan says whether a window is open now, until when, and when the next opens', async () => {
    const open = await roll(makeCluster(workers(1)), { mode: 'plan', maintenanceWindows: [utc('0 9 * * *', 2 * H)] });
    expect(open.result).toBe('planned');
    expect(open.windows).toBe(
      'maintenance windows: open now, until 2026-11-30T11:00:00+00:00 (UTC); after it closes, the next opens at 2026-12-01T09:00:00+00:00 (UTC)',
    );
    const closed = await roll(makeCluster(workers(1)), { mode: 'plan', maintenanceWindows: [utc('0 2 * * *', H)] });
    expect(closed.result).toBe('planned');
    expect(closed.windows).toBe(
      'maintenance windows: none open now, a run would start no node; the next opens at 2026-12-01T02:00:00+00:00 (UTC)',
    );
    const html = present({ kind: 'rollout', mode: 'plan', registry: ['ghcr.io'], revision: 'rev-2', failOnPartial: false, ...closed })
      .summary!();
    expect(html).toContain('<b>Maintenance windows:</b> none open now');
  });
});
