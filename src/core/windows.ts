// The `maintenance-windows` input (docs/windows.md): a YAML list of `{ start, duration, timezone }`,
// validated here before anything runs, each error naming the input and the item. Its own file so
// config.ts only spreads it in. The cron is checked with the library the rule runs it with (croner),
// so a cron that passes here is one the rule can compute.
import { Cron } from 'croner';
import { parse } from 'yaml';
import { InputError } from './errors.js';
import type { MaintenanceWindow } from './model/windows.js';

export const WINDOWS_INPUT = 'maintenance-windows';
/** An item without `timezone` is in UTC: the zone a GitHub-hosted runner's own clock and a workflow's `schedule:` cron use. */
export const DEFAULT_WINDOW_TIMEZONE = 'UTC';
const KEYS = new Set(['start', 'duration', 'timezone']);
/** A fixed instant to ask whether a cron ever fires, so the check does not depend on when it runs. */
const PROBE_FROM = new Date('2000-01-01T00:00:00Z');

/** Empty: no window, always open. */
export function readWindowsInput(text: string, parseDuration: (input: string, text: string) => number): MaintenanceWindow[] {
  if (!text.trim()) return [];
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    throw new InputError(WINDOWS_INPUT, `is not YAML (${firstLine(e)}); quote each cron, e.g. start: '0 2 * * *'`);
  }
  if (!Array.isArray(doc) || doc.length === 0) {
    throw new InputError(
      WINDOWS_INPUT,
      "must be a YAML list of windows, e.g. - { start: '0 2 * * *', duration: 4h, timezone: Europe/Copenhagen }",
    );
  }
  return doc.map((item, i) => readWindow(item, `item ${i + 1}`, parseDuration));
}

function readWindow(item: unknown, at: string, parseDuration: (input: string, text: string) => number): MaintenanceWindow {
  const fail = (message: string): never => {
    throw new InputError(WINDOWS_INPUT, `${at}: ${message}`);
  };
  if (!item || typeof item !== 'object' || Array.isArray(item)) return fail('is not a mapping of start, duration and timezone');
  const fields = item as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((k) => !KEYS.has(k));
  if (unknown.length > 0) fail(`unknown key ${unknown.map((k) => `"${k}"`).join(', ')} (a window has start, duration and timezone)`);
  const start = fields.start;
  if (typeof start !== 'string' || !start.trim()) return fail("start is required: a cron, e.g. '0 2 * * *'");
  if (typeof fields.duration !== 'string' || !fields.duration.trim())
    return fail('duration is required: a duration such as 4h, 90m or 1h30m');
  const timezone = fields.timezone === undefined ? DEFAULT_WINDOW_TIMEZONE : fields.timezone;
  if (typeof timezone !== 'string' || !isTimeZone(timezone))
    return fail(`timezone ${JSON.stringify(timezone)} is not an IANA time zone (e.g. Europe/Copenhagen, UTC)`);
  let durationMs = 0;
  try {
    durationMs = parseDuration(WINDOWS_INPUT, fields.duration);
  } catch {
    fail(`duration "${fields.duration}" is not a duration (use e.g. 90m, 4h, 1h30m)`);
  }
  if (durationMs <= 0) fail(`duration "${fields.duration}" must be longer than zero`);
  let cron: Cron;
  try {
    cron = new Cron(start.trim(), { timezone });
  } catch (e) {
    return fail(`start "${start}" is not a cron (${firstLine(e)}); give 5 fields (minute hour day month weekday) or 6 (seconds first)`);
  }
  if (!cron.nextRun(PROBE_FROM)) fail(`start "${start}" never fires`);
  return { start: start.trim(), durationMs, timezone };
}

/** As Intl (which croner converts with) knows it; rejects what croner would only reject when it first computes. */
function isTimeZone(zone: string): boolean {
  if (!zone.trim()) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0].replace(/^CronPattern: /, '');
}
