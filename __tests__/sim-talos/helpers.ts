// Runs the fake talosctl the way the action does: a child process found through PATH, TZ=UTC.
import { spawn } from 'node:child_process';
import { delimiter } from 'node:path';
import type { TalosSim } from '../../sim/talos/index.js';
import type { KubeNodeHooks } from '../../sim/types.js';

export interface Ran {
  stdout: string;
  stderr: string;
  code: number | null;
  /** runner clock just before the spawn and just after the exit */
  t0: number;
  t1: number;
}

export function talosctl(sim: TalosSim, args: string[], env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    // the fake talosctl first on PATH whether or not the twin puts it there (it does only without the API)
    const path = `${sim.binDir}${delimiter}${sim.env().PATH}`;
    const child = spawn('talosctl', args, {
      env: { ...process.env, ...sim.env(), PATH: path, TZ: 'UTC', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ stdout, stderr, code, t0, t1: Date.now() }));
  });
}

export function recordingHooks(): KubeNodeHooks & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    nodeDown: (name) => {
      calls.push(`down ${name}`);
    },
    nodeUp: (name, bootID) => {
      calls.push(`up ${name} ${bootID}`);
    },
  };
}

/** Go Duration.String() text (as talosctl prints "(D ago)") back to whole seconds. */
export function goSeconds(d: string): number {
  const m = /^(-)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)$/.exec(d);
  if (!m) throw new Error(`not a Go duration: ${d}`);
  const s = Number(m[2] ?? 0) * 3600 + Number(m[3] ?? 0) * 60 + Number(m[4] ?? 0);
  return m[1] ? -s : s;
}

/** round-half-away-from-zero of ms to seconds, as time.Duration.Round(time.Second) */
export function roundSec(ms: number): number {
  return Math.sign(ms) * Math.floor(Math.abs(ms) / 1000 + 0.5);
}

/**
 * Replaces every "(D ago)" with "(D ago)" after checking that D is what a client rendering at some
 * instant in [t0, t1] would print for the matching timestamp (newest-first order of `stamps`).
 */
export function checkAgos(text: string, stamps: number[], t0: number, t1: number): string {
  let i = 0;
  return text.replace(/\((-?[0-9hms]+) ago\)/g, (_m, d: string) => {
    const ts = stamps[i++];
    const got = goSeconds(d);
    const lo = roundSec(t0 - ts);
    const hi = roundSec(t1 - ts);
    if (got < lo || got > hi) throw new Error(`"${d} ago" for stamp ${ts}: expected within [${lo}, ${hi}] s`);
    return '(D ago)';
  });
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Go's `Jan _2 15:04:05` / `Jan _2 2006 15:04` in UTC, written independently of the sim's formatter. */
export function lsTimeUTC(mtimeMs: number, nowMs: number): string {
  const d = new Date(Math.floor(mtimeMs / 1000) * 1000);
  const day = String(d.getUTCDate()).padStart(2, ' ');
  const hh = String(d.getUTCHours()).padStart(2, '0');
  const mm = String(d.getUTCMinutes()).padStart(2, '0');
  const ss = String(d.getUTCSeconds()).padStart(2, '0');
  if (nowMs - Math.floor(mtimeMs / 1000) * 1000 < 180 * 24 * 3600 * 1000) return `${MONTHS[d.getUTCMonth()]} ${day} ${hh}:${mm}:${ss}`;
  return `${MONTHS[d.getUTCMonth()]} ${day} ${d.getUTCFullYear()} ${hh}:${mm}`;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until<T>(fn: () => Promise<T | undefined>, timeoutMs: number, stepMs = 200): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(stepMs);
  }
}
