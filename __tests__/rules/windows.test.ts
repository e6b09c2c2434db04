// The windows rule (src/rules/windows.ts, docs/windows.md): open iff a start s has s <= now < s + duration,
// judged in absolute time, durations elapsed; the union of the windows; the next opening. The DST cases
// pin down what croner (the cron library) does in Europe/Copenhagen: on 2026-03-29 the clocks jump from
// 02:00 CET to 03:00 CEST (01:00Z), on 2026-10-25 from 03:00 CEST back to 02:00 CET (01:00Z).
import { describe, expect, it } from 'vitest';
import type { MaintenanceWindow, WindowsAt } from '../../src/core/model/windows.js';
import { Cron } from 'croner';
import { closedNow, windowsAt } from '../../src/rules/windows.js';
import { formatZoned, windowClosedNotice, windowPlanLine } from '../../src/report/windows.js';

const H = 3_600_000;
const CPH = 'Europe/Copenhagen';
const at = (iso: string) => Date.parse(iso);
const win = (start: string, hours: number, timezone = CPH): MaintenanceWindow => ({ start, durationMs: hours * H, timezone });
/** the answer with its instants said as the notice says them */
function said(w: WindowsAt | undefined) {
  if (!w) return undefined;
  if (w.open) {
    return {
      open: true,
      until: w.untilMs === undefined ? undefined : formatZoned(w.untilMs, w.timezone),
      atLeastUntil: w.atLeastUntilMs === undefined ? undefined : formatZoned(w.atLeastUntilMs, w.timezone),
    };
  }
  return { open: false, next: w.nextMs === undefined ? undefined : formatZoned(w.nextMs, w.timezone) };
}

describe('windowsAt', () => {
  it('no window at all: undefined (always open)', () => {
    expect(windowsAt([], at('2026-12-06T10:00:00Z'))).toBeUndefined();
  });

  it('open from the start included to the end excluded', () => {
    const w = [win('0 2 * * *', 1, 'UTC')];
    expect(said(windowsAt(w, at('2026-12-06T01:59:59.999Z')))).toEqual({ open: false, next: '2026-12-06T02:00:00+00:00 (UTC)' });
    expect(said(windowsAt(w, at('2026-12-06T02:00:00Z')))).toMatchObject({ open: true, until: '2026-12-06T03:00:00+00:00 (UTC)' });
    expect(said(windowsAt(w, at('2026-12-06T02:59:59.999Z')))).toMatchObject({ open: true });
    expect(said(windowsAt(w, at('2026-12-06T03:00:00Z')))).toEqual({ open: false, next: '2026-12-07T02:00:00+00:00 (UTC)' });
  });

  it('a window crossing midnight (22:00 + 4h) is open after midnight, from the start of the day before', () => {
    const w = [win('0 22 * * *', 4)];
    // 00:30 local on 7 December: the window of the 6th, 22:00 CET
    expect(said(windowsAt(w, at('2026-12-06T23:30:00Z')))).toMatchObject({
      open: true,
      until: '2026-12-07T02:00:00+01:00 (Europe/Copenhagen)',
    });
    expect(said(windowsAt(w, at('2026-12-07T01:00:00Z')))).toEqual({ open: false, next: '2026-12-07T22:00:00+01:00 (Europe/Copenhagen)' });
  });

  it('spring forward: a daily 02:30 start, inside the skipped hour, starts at 03:30 CEST that day (croner moves it by the gap)', () => {
    const w = [win('30 2 * * *', 1)];
    expect(said(windowsAt(w, at('2026-03-29T01:00:00Z')))).toEqual({ open: false, next: '2026-03-29T03:30:00+02:00 (Europe/Copenhagen)' });
    expect(said(windowsAt(w, at('2026-03-29T01:45:00Z')))).toMatchObject({
      open: true,
      until: '2026-03-29T04:30:00+02:00 (Europe/Copenhagen)',
    });
    // and the day after at 02:30 CEST again
    expect(said(windowsAt(w, at('2026-03-29T03:00:00Z')))).toEqual({ open: false, next: '2026-03-30T02:30:00+02:00 (Europe/Copenhagen)' });
  });

  it('fall back: a daily 02:30 start in the repeated hour starts once, at its second pass (02:30 CET)', () => {
    const w = [win('30 2 * * *', 1)];
    // 02:45 CEST, the first pass through 02:xx: closed (the window of the 24th ended at 03:30 CEST that day)
    expect(said(windowsAt(w, at('2026-10-25T00:45:00Z')))).toEqual({ open: false, next: '2026-10-25T02:30:00+01:00 (Europe/Copenhagen)' });
    expect(said(windowsAt(w, at('2026-10-25T01:30:00Z')))).toMatchObject({
      open: true,
      until: '2026-10-25T03:30:00+01:00 (Europe/Copenhagen)',
    });
  });

  it('the same answer whenever it is asked: every 15 minutes over both changes, as the starts counted from a week before', () => {
    for (const day of ['2026-03-29', '2026-10-25']) {
      for (const [cron, hours] of [
        ['30 2 * * *', 1],
        ['0 2 * * *', 0.5],
        ['0 1 * * *', 3],
      ] as const) {
        const w = win(cron, hours);
        const starts: number[] = [];
        const c = new Cron(cron, { timezone: CPH });
        for (
          let s = c.nextRun(new Date(at(`${day}T00:00:00Z`) - 7 * 24 * H));
          s && s.getTime() < at(`${day}T06:00:00Z`);
          s = c.nextRun(s)
        ) {
          starts.push(s.getTime());
        }
        for (let t = at(`${day}T00:00:00Z`) - H; t < at(`${day}T05:00:00Z`); t += H / 4) {
          const expected = starts.some((s) => s <= t && t < s + w.durationMs);
          expect({ day, cron, at: new Date(t).toISOString(), open: windowsAt([w], t)?.open }).toEqual({
            day,
            cron,
            at: new Date(t).toISOString(),
            open: expected,
          });
        }
      }
    }
  });

  it('closedNow: undefined while open, the next opening when closed', () => {
    const w = [win('0 22 * * *', 4)];
    expect(closedNow(w, at('2026-12-06T23:30:00Z'))).toBeUndefined();
    expect(closedNow([], at('2026-12-06T23:30:00Z'))).toBeUndefined();
    expect(closedNow(w, at('2026-12-07T01:00:00Z'))).toEqual({ open: false, nextMs: at('2026-12-07T21:00:00Z'), timezone: CPH });
  });

  it('a 01:00 + 3h window over the spring change lasts 3 hours of elapsed time, to 05:00 CEST', () => {
    const w = [win('0 1 * * *', 3)];
    expect(said(windowsAt(w, at('2026-03-29T00:00:00Z')))).toMatchObject({
      open: true,
      until: '2026-03-29T05:00:00+02:00 (Europe/Copenhagen)',
    });
    expect(windowsAt(w, at('2026-03-29T02:59:59Z'))?.open).toBe(true);
    expect(said(windowsAt(w, at('2026-03-29T03:00:00Z')))).toEqual({ open: false, next: '2026-03-30T01:00:00+02:00 (Europe/Copenhagen)' });
  });

  it('a 01:00 + 3h window over the autumn change lasts 3 hours of elapsed time, to 03:00 CET', () => {
    const w = [win('0 1 * * *', 3)];
    expect(said(windowsAt(w, at('2026-10-24T23:00:00Z')))).toMatchObject({
      open: true,
      until: '2026-10-25T03:00:00+01:00 (Europe/Copenhagen)',
    });
    // 02:30 CET, after the repeat: still open
    expect(windowsAt(w, at('2026-10-25T01:30:00Z'))?.open).toBe(true);
    expect(said(windowsAt(w, at('2026-10-25T02:00:00Z')))).toEqual({ open: false, next: '2026-10-26T01:00:00+01:00 (Europe/Copenhagen)' });
  });

  it('the union: overlapping and touching windows are one longer window', () => {
    const overlapping = [win('0 1 * * *', 2, 'UTC'), win('30 2 * * *', 2, 'UTC')];
    expect(said(windowsAt(overlapping, at('2026-12-06T01:30:00Z')))).toMatchObject({
      open: true,
      until: '2026-12-06T04:30:00+00:00 (UTC)',
    });
    const touching = [win('0 2 * * *', 1, 'UTC'), win('0 1 * * *', 1, 'UTC')];
    expect(said(windowsAt(touching, at('2026-12-06T01:15:00Z')))).toMatchObject({ open: true, until: '2026-12-06T03:00:00+00:00 (UTC)' });
    // a gap between them: each on its own
    const apart = [win('0 1 * * *', 1, 'UTC'), win('0 3 * * *', 1, 'UTC')];
    expect(said(windowsAt(apart, at('2026-12-06T01:15:00Z')))).toMatchObject({ open: true, until: '2026-12-06T02:00:00+00:00 (UTC)' });
    expect(said(windowsAt(apart, at('2026-12-06T02:15:00Z')))).toEqual({ open: false, next: '2026-12-06T03:00:00+00:00 (UTC)' });
  });

  it('the next opening is the earliest of every window, said in that window’s zone', () => {
    const w = [win('0 22 * * 1-5', 4), win('0 6 * * 0,6', 2, 'America/New_York')];
    // Saturday 2026-12-05 08:00Z: the weekday window is next on Monday, New York's on Saturday 06:00 EST = 11:00Z
    expect(said(windowsAt(w, at('2026-12-05T08:00:00Z')))).toEqual({ open: false, next: '2026-12-05T06:00:00-05:00 (America/New_York)' });
    // Sunday after New York's window: Monday 22:00 CET
    expect(said(windowsAt(w, at('2026-12-06T14:00:00Z')))).toEqual({ open: false, next: '2026-12-07T22:00:00+01:00 (Europe/Copenhagen)' });
  });

  it('a duration longer than the period: open all the time, said as open at least until the look-ahead', () => {
    const w = [win('0 * * * *', 2, 'UTC')];
    const a = windowsAt(w, at('2026-12-06T10:10:00Z'));
    expect(a?.open).toBe(true);
    expect(a && a.open && a.untilMs).toBeUndefined();
    expect(a && a.open && a.atLeastUntilMs! > at('2026-12-06T12:00:00Z')).toBe(true);
  });

  it('a 6-field cron counts seconds', () => {
    const w = [win('30 0 2 * * *', 1 / 60, 'UTC')];
    expect(windowsAt(w, at('2026-12-06T02:00:29Z'))?.open).toBe(false);
    expect(said(windowsAt(w, at('2026-12-06T02:00:30Z')))).toMatchObject({ open: true, until: '2026-12-06T02:01:30+00:00 (UTC)' });
  });
});

describe('window texts', () => {
  it('the notice names the next opening with its offset and zone', () => {
    const closed = { open: false as const, nextMs: at('2026-12-07T01:00:00Z'), timezone: CPH };
    expect(windowClosedNotice(closed)).toBe(
      'outside every maintenance window: no further node was started; the next opens at 2026-12-07T02:00:00+01:00 (Europe/Copenhagen)',
    );
  });

  it('plan: open now until when, and the opening after', () => {
    const open = { open: true as const, untilMs: at('2026-12-07T01:00:00Z'), timezone: CPH };
    const next = { open: false as const, nextMs: at('2026-12-07T21:00:00Z'), timezone: CPH };
    expect(windowPlanLine(open, next)).toBe(
      'maintenance windows: open now, until 2026-12-07T02:00:00+01:00 (Europe/Copenhagen); after it closes, the next opens at 2026-12-07T22:00:00+01:00 (Europe/Copenhagen)',
    );
    expect(windowPlanLine(next)).toBe(
      'maintenance windows: none open now, a run would start no node; the next opens at 2026-12-07T22:00:00+01:00 (Europe/Copenhagen)',
    );
  });

  it('formatZoned: half-hour offsets and negative ones', () => {
    expect(formatZoned(at('2026-12-06T10:00:00Z'), 'Asia/Kolkata')).toBe('2026-12-06T15:30:00+05:30 (Asia/Kolkata)');
    expect(formatZoned(at('2026-07-01T10:00:00Z'), 'America/St_Johns')).toBe('2026-07-01T07:30:00-02:30 (America/St_Johns)');
  });
});
