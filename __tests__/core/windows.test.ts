// The `maintenance-windows` input (src/core/windows.ts): validated before anything runs, each error
// naming the input and the item.
import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/core/config.js';

const base: Record<string, string> = { 'auth-patch': '/tmp/p.yaml', revision: 'r1' };
const windows = (text: string) => readConfig((name) => ({ ...base, 'maintenance-windows': text })[name] ?? '').maintenanceWindows;
const refused = (text: string) => {
  try {
    windows(text);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('accepted');
};

describe('maintenance-windows', () => {
  it('empty by default: no window, always open', () => {
    expect(readConfig((name) => base[name] ?? '').maintenanceWindows).toEqual([]);
  });

  it('a YAML list of start, duration and timezone; UTC when no timezone is named', () => {
    const text = `
- start: '0 22 * * 1-5'
  duration: 4h
  timezone: Europe/Copenhagen
- { start: '30 0 2 * * *', duration: 1h30m }
`;
    expect(windows(text)).toEqual([
      { start: '0 22 * * 1-5', durationMs: 4 * 3_600_000, timezone: 'Europe/Copenhagen' },
      { start: '30 0 2 * * *', durationMs: 90 * 60_000, timezone: 'UTC' },
    ]);
  });

  it('a duration longer than the cron’s period is fine (the windows overlap: their union)', () => {
    expect(windows(`- { start: '0 * * * *', duration: 2h }`)).toHaveLength(1);
  });

  it.each([
    [
      "- { start: '61 2 * * *', duration: 1h }",
      'input "maintenance-windows": item 1: start "61 2 * * *" is not a cron (Invalid value for minute: 61)',
    ],
    ["- { start: '0 2 * *', duration: 1h }", 'item 1: start "0 2 * *" is not a cron'],
    ["- { start: '0 0 30 2 *', duration: 1h }", 'item 1: start "0 0 30 2 *" never fires'],
    [
      "- { start: '0 2 * * *', duration: 1h }\n- { start: '0 2 * * *', duration: 1h, timezone: Mars/Olympus }",
      'item 2: timezone "Mars/Olympus" is not an IANA time zone',
    ],
    ["- { start: '0 2 * * *', duration: 0s }", 'item 1: duration "0s" must be longer than zero'],
    ["- { start: '0 2 * * *', duration: -1h }", 'item 1: duration "-1h" is not a duration'],
    ["- { start: '0 2 * * *', duration: 4 }", 'item 1: duration is required'],
    ["- { start: '0 2 * * *' }", 'item 1: duration is required'],
    ['- { duration: 1h }', 'item 1: start is required'],
    ["- { start: '0 2 * * *', duration: 1h, zone: UTC }", 'item 1: unknown key "zone"'],
    ["start: '0 2 * * *'\nduration: 1h", 'must be a YAML list of windows'],
    ['- start: */30 * * * *\n  duration: 1h', 'is not YAML'],
    ['- 0 2 * * *', 'item 1: is not a mapping'],
  ])('refuses %j', (text, message) => {
    expect(refused(text)).toContain(message);
    expect(refused(text)).toMatch(/^input "maintenance-windows": /);
  });
});
