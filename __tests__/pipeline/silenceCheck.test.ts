// The silence start check (src/pipeline/startChecks/silence.ts) against the Alertmanager twin through
// the real client, on a clock the test moves: created at begin, extended every third of the tail in
// place (same id), expired at end; never outliving the run by more than the tail when killed; every
// failure of Alertmanager a warning and `start` all the same.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AlertmanagerSim } from '../../sim/alertmanager/server.js';
import { openSilences } from '../../src/adapters/alertmanager/silences.js';
import { SilenceCheck, silenceCheck } from '../../src/pipeline/startChecks/silence.js';
import type { Clock } from '../../src/core/clock.js';
import type { SilenceMatcher } from '../../src/core/model/silence.js';
import { makeContext } from '../../src/pipeline/context.js';

/** A clock whose sleeps end only when the test moves it. */
class ManualClock implements Clock {
  private waiters: Array<{ at: number; resolve: () => void }> = [];
  constructor(public t = Date.parse('2026-12-06T10:00:00Z')) {}
  now = () => this.t;
  random = () => 0.5;
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.waiters.push({ at: this.t + ms, resolve }));
  }
  /** moves to `t + ms`, waking each sleeper due on the way, in order, and letting it sleep again */
  async advance(ms: number): Promise<void> {
    const target = this.t + ms;
    for (;;) {
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      const next = this.waiters.filter((w) => w.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.waiters = this.waiters.filter((w) => w !== next);
      this.t = Math.max(this.t, next.at);
      next.resolve();
    }
    this.t = target;
  }
}

const TAIL = 60_000;
const MATCHERS: SilenceMatcher[][] = [
  [{ name: 'node', value: 'worker-1|worker-2', isRegex: true, isEqual: true }],
  [{ name: 'instance', value: '(worker-1|worker-2)(:[0-9]+)?', isRegex: true, isEqual: true }],
];

let sim: AlertmanagerSim | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

async function setup(opts: { twinOffsetMs?: () => number } = {}) {
  const clock = new ManualClock();
  const offset = opts.twinOffsetMs ?? (() => 0);
  sim = await AlertmanagerSim.start({ now: () => clock.t + offset() });
  const log: string[] = [];
  const check = new SilenceCheck({
    open: () => openSilences({ url: sim!.url, http: { timeoutMs: 5000 } }),
    clock,
    log: (m) => log.push(m),
    url: sim.url,
    sets: MATCHERS,
    tailMs: TAIL,
    createdBy: 'talos-registry-auth-rollout',
    comment: 'roll',
  });
  return { clock, check, log, sim };
}

const posts = (s: AlertmanagerSim) => s.requests.filter((r) => r.method === 'POST');

/** one extension round of both silences has reached the twin (a GET and a POST each) */
async function extended(s: AlertmanagerSim, rounds: number) {
  await vi.waitFor(() => expect(posts(s).length).toBe(2 + 2 * rounds), { timeout: 10_000 });
}

describe('the silence start check', () => {
  it('creates one silence per matcher set at begin, extends each in place every third of the tail, expires it at end; ask always answers start', async () => {
    const { clock, check, sim } = await setup();
    const t0 = clock.t;
    await check.begin();
    const ids = posts(sim).map((r) => r.silenceID!);
    expect(ids).toHaveLength(2);
    for (const [i, id] of ids.entries()) {
      expect(sim.silences.get(id)).toMatchObject({
        matchers: MATCHERS[i],
        endsAt: new Date(t0 + TAIL).toISOString(),
        createdBy: 'talos-registry-auth-rollout',
      });
    }
    expect(check.extendEveryMs).toBe(TAIL / 3);
    // a reboot wait four tails long: the silences stay active the whole time, with the same ids
    for (let round = 1; round <= 12; round++) {
      await clock.advance(TAIL / 3);
      await extended(sim, round);
      for (const id of ids) {
        expect(sim.state(sim.silences.get(id)!)).toBe('active');
        expect(sim.silences.get(id)!.endsAt).toBe(new Date(clock.t + TAIL).toISOString());
      }
    }
    expect(await check.ask()).toEqual({ kind: 'start' });
    // every extension carried the id, the matchers and the startsAt Alertmanager holds (silence.go canUpdate)
    for (const r of posts(sim).slice(2)) expect(r.silenceID).toBe((r.body as { id: string }).id);
    expect(new Set(posts(sim).map((r) => r.silenceID))).toEqual(new Set(ids));
    await check.end();
    for (const id of ids) expect(sim.state(sim.silences.get(id)!)).toBe('expired');
    expect(sim.requests.filter((r) => r.method === 'DELETE').map((r) => r.path)).toEqual(ids.map((id) => `/api/v2/silence/${id}`));
    expect(check.report()).toEqual({
      alertmanager: sim.url,
      silences: [
        { id: ids[0], matchers: 'node=~"worker-1|worker-2"', state: 'expired' },
        { id: ids[1], matchers: 'instance=~"(worker-1|worker-2)(:[0-9]+)?"', state: 'expired' },
      ],
      warnings: [],
    });
  });

  it('a run killed mid-roll (no end, no more extensions) leaves silences that lapse within one tail of its last extension', async () => {
    let twinAhead = 0;
    const { clock, check, sim } = await setup({ twinOffsetMs: () => twinAhead });
    await check.begin();
    await clock.advance(TAIL / 3);
    await extended(sim, 1);
    const lastWrite = posts(sim).at(-1)!.at;
    // killed: the run's clock stops; Alertmanager's goes on
    twinAhead = TAIL - 1;
    for (const id of posts(sim).map((r) => r.silenceID!)) expect(sim.state(sim.silences.get(id)!)).toBe('active');
    twinAhead = TAIL;
    for (const id of posts(sim).map((r) => r.silenceID!)) {
      expect(sim.state(sim.silences.get(id)!)).toBe('expired');
      expect(Date.parse(sim.silences.get(id)!.endsAt) - lastWrite).toBeLessThanOrEqual(TAIL);
    }
  });

  it('an unreachable Alertmanager is a warning, said once, and the check answers start and ends without a throw', async () => {
    const { clock, check, sim, log } = await setup();
    sim.unreachable = true;
    await check.begin();
    expect(await check.ask()).toEqual({ kind: 'start' });
    await clock.advance(TAIL);
    await check.end();
    const report = check.report();
    expect(report.silences.map((s) => s.state)).toEqual(['not-created', 'not-created']);
    expect(report.warnings).toHaveLength(2);
    expect(report.warnings[0]).toMatch(
      /^Alertmanager silence: the silence node=~"worker-1\|worker-2" was not created: POST http:\/\/127\.0\.0\.1:\d+\/api\/v2\/silences: /,
    );
    expect(log.filter((l) => l.startsWith('warning:'))).toHaveLength(2);
    expect(sim.requests.every((r) => r.method === 'POST')).toBe(true);
  });

  it('Alertmanager gone mid-roll: the extension warns, the silence is created again once it answers, and expired at the end', async () => {
    let twinAhead = 0;
    const { clock, check, sim } = await setup({ twinOffsetMs: () => twinAhead });
    await check.begin();
    const first = posts(sim)[0].silenceID!;
    sim.unreachable = true;
    await clock.advance(TAIL / 3);
    await vi.waitFor(() => expect(check.report().warnings.length).toBe(2), { timeout: 10_000 });
    expect(check.report().warnings[0]).toMatch(/could not be extended \(it lapses at /);
    sim.unreachable = false;
    // meanwhile it lapsed at its own endsAt (Alertmanager's clock a third of a tail ahead of the run's: past it at the next extension)
    twinAhead = TAIL / 3;
    const before = posts(sim).length;
    await clock.advance(TAIL / 3);
    await vi.waitFor(() => expect(posts(sim).length).toBe(before + 2), { timeout: 10_000 });
    const again = check.report().silences[0].id!;
    expect(again).not.toBe(first);
    expect(sim.state(sim.silences.get(again)!)).toBe('active');
    await check.end();
    expect(sim.state(sim.silences.get(again)!)).toBe('expired');
  });

  it('a silence someone else expired is theirs: not created again, not expired again, a warning', async () => {
    const { clock, check, sim } = await setup();
    await check.begin();
    const [a, b] = posts(sim).map((r) => r.silenceID!);
    await clock.advance(1000);
    await fetch(`${sim.url}/api/v2/silence/${a}`, { method: 'DELETE' });
    await clock.advance(TAIL / 3);
    await vi.waitFor(() => expect(check.report().warnings).toHaveLength(1), { timeout: 10_000 });
    expect(check.report().warnings[0]).toContain(`silence ${a} was expired by someone else`);
    await vi.waitFor(() => expect(posts(sim).filter((r) => r.silenceID === b)).toHaveLength(2), { timeout: 10_000 });
    await check.end();
    expect(sim.requests.filter((r) => r.method === 'DELETE').map((r) => r.path)).toEqual([`/api/v2/silence/${a}`, `/api/v2/silence/${b}`]);
    expect(posts(sim).filter((r) => r.silenceID === a)).toHaveLength(1);
  });

  it('a client that cannot be opened (an unreadable CA file) is a warning', async () => {
    const { check } = await setup();
    const failing = new SilenceCheck({
      ...(check as unknown as { d: ConstructorParameters<typeof SilenceCheck>[0] }).d,
      open: () => {
        throw new Error('input "alertmanager-ca-file": cannot read "/x" (ENOENT)');
      },
    });
    await failing.begin();
    await failing.end();
    expect(failing.report().warnings).toEqual([
      'Alertmanager silence: the silence was not created: input "alertmanager-ca-file": cannot read "/x" (ENOENT)',
    ]);
  });

  it('is in the list only with alertmanager-url, with $NODES expanded to the selected nodes', () => {
    const base = {
      kube: {} as never,
      talos: {} as never,
      desired: [],
      owner: 'o/r/1/1/n',
      keys: {} as never,
      openSilences: () => ({}) as never,
    };
    const config = { revision: 'r1', settleTimeoutMs: 0 } as never;
    expect(silenceCheck(makeContext({ ...base, config }), [])).toEqual([]);
    const withAm = {
      ...(config as object),
      alertmanagerUrl: 'http://am:9093',
      alertmanagerMatchers: [[{ name: 'node', value: '$NODES', isRegex: true, isEqual: true }]],
      silenceTailMs: TAIL,
    } as never;
    const [c] = silenceCheck(makeContext({ ...base, config: withAm }), [
      { name: 'w.1', internalIPs: ['10.0.0.1'] },
      { name: 'w2', internalIPs: [] },
    ] as never);
    expect(c.report().silences).toEqual([{ matchers: 'node=~"10\\\\.0\\\\.0\\\\.1|w\\\\.1|w2"', state: 'not-created' }]);
  });
});
