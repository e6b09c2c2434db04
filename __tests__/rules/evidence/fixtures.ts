// The readings the evidence tests judge: a node read over the Talos API or through talosctl on a
// timeline (the config write, the containerd launch, the runner's read window), and the row each
// condition's test file lists (src/rules/evidence.ts and src/rules/evidence/).
import { expect, it } from 'vitest';
import { DEFAULT_EVIDENCE_MARGIN_MS } from '../../../src/core/config.js';
import type { AuthFields, DesiredCredential } from '../../../src/core/model/credential.js';
import type { EvidenceReadings, Instant, ServiceEvent } from '../../../src/core/model/readings.js';
import { rebootEvidence } from '../../../src/rules/evidence.js';

// Instants as each read path delivers them (docs/talos-evidence-timing.md):
// - API: nanosecond timestamps, exact bounds;
// - CLI: "(D ago)" placed in the runner window ± 500 ms, RFC 3339 / ls -l seconds as [t, t + 999].
export const S = 1000;
export const H = 3600 * S;
export const CRI = '/etc/cri/conf.d/cri.toml';
export const PART = '/etc/cri/conf.d/01-registries.part';
export const NEW: AuthFields = { username: 'ci-bot', password: 'new-secret-token', auth: '', identitytoken: '' };
export const OLD: AuthFields = { username: 'ci-bot', password: 'old-secret-token', auth: '', identitytoken: '' };
export const ghcr: DesiredCredential = { host: 'ghcr.io', tomlHost: 'ghcr.io', fields: NEW };

export const exact = (ms: number): Instant => ({ earliestMs: ms, latestMs: ms, via: 'api', text: new Date(ms).toISOString() });
export const second = (ms: number, via: 'api' | 'cli' = 'cli'): Instant => {
  const t = Math.floor(ms / S) * S;
  return { earliestMs: t, latestMs: t + 999, via, text: new Date(t).toISOString() };
};

/** One node's timeline, on the node clock (ms): W the config write, L the containerd launch. */
export interface Timeline {
  W: number;
  L: number;
  pid?: number;
  /** runner clock before and after the service read */
  before: number;
  after: number;
}

export const T0 = Date.UTC(2026, 7, 20, 12, 0, 0);

/** The events Talos logs for one run, oldest first: pre-launch (before L), then the start event. */
export function run(L: number, pid: number): Array<{ state: string; message: string; t: number }> {
  return [
    { state: 'Starting', message: 'Starting service', t: L - 40 },
    { state: 'Waiting', message: 'Waiting for network, etc files', t: L - 39 },
    { state: 'Preparing', message: 'Running pre state', t: L - 3 },
    { state: 'Preparing', message: 'Creating service runner', t: L - 1.5 },
    {
      state: 'Running',
      message: `Process Process(["/bin/containerd" "--address" "/run/containerd/containerd.sock"]) started with PID ${pid}`,
      t: L + 0.4,
    },
    { state: 'Running', message: 'Health check successful', t: L + 1200 },
  ];
}

/** API path: exact instants; the write's status recorded 0.3 ms after the write. */
export function apiNode(tl: Timeline, over: { events?: ServiceEvent[] } = {}): EvidenceReadings {
  const pid = tl.pid ?? 1893;
  return {
    node: 'w1',
    talosVersion: { ok: true, value: 'v1.14.0' },
    criService: {
      ok: true,
      value: {
        via: 'api',
        state: 'Running',
        health: 'OK',
        events: over.events ?? run(tl.L, pid).map((e) => ({ state: e.state, message: e.message, at: exact(e.t) })),
        clientBeforeMs: tl.before,
        clientAfterMs: tl.after,
      },
    },
    servicePid: { ok: true, value: { pid, created: exact(tl.L + 0.2) } },
    files: [
      {
        path: CRI,
        listing: { ok: true, value: { path: CRI, exists: true, mtime: second(tl.W, 'api') } },
        status: { ok: true, value: { id: 'cri/conf.d/cri.toml', updated: exact(tl.W + 0.3), specVersion: '3' } },
        content: { ok: true, value: { path: CRI, exists: true, auth: { 'ghcr.io': { ...NEW }, 'quay.io': { ...OLD } } } },
      },
    ],
    timeStatus: { ok: true, value: { synced: true, epoch: 0 } },
  };
}

/** CLI path: the same timeline as talosctl prints it and the adapter bounds it. */
export function cliNode(tl: Timeline): EvidenceReadings {
  const pid = tl.pid ?? 1893;
  // talosctl computes the age at some instant of the call; take the middle, round to the second
  const printedAt = (tl.before + tl.after) / 2;
  const age = (t: number): Instant => {
    const ago = Math.round((printedAt - t) / S) * S;
    return { earliestMs: tl.before - ago - 500, latestMs: tl.after - ago + 500, via: 'cli', text: `${ago / S}s ago` };
  };
  const r = apiNode(tl);
  if (!r.criService.ok) throw new Error('fixture');
  r.criService.value.via = 'cli';
  r.criService.value.events = run(tl.L, pid)
    .reverse()
    .map((e) => ({ state: e.state, message: e.message, at: age(e.t) }));
  r.servicePid = { ok: true, value: { pid, created: second(tl.L + 0.2) } };
  const f = r.files[0];
  f.listing = { ok: true, value: { path: CRI, exists: true, lastModText: 'Aug 20 09:00:00', mtime: second(tl.W) } };
  f.status = { ok: true, value: { id: 'cri/conf.d/cri.toml', updated: second(tl.W + 0.3) } };
  return r;
}

export const cri = (r: EvidenceReadings) => {
  if (!r.criService.ok) throw new Error('fixture');
  return r.criService.value;
};
export const listing = (r: EvidenceReadings, i = 0) => {
  const l = r.files[i].listing;
  if (!l.ok) throw new Error('fixture');
  return l.value;
};

// A base timeline: write 3 h before the read, containerd launched 100 ms after it.
export const W = T0 - 3 * H;
export const base: Timeline = { W, L: W + 100, before: T0, after: T0 + 300 };

export type Row = {
  name: string;
  build?: () => EvidenceReadings;
  mutate?: (r: EvidenceReadings) => void;
  /** the hosts the roll is for, each with its desired credential; default ghcr.io's */
  desired?: DesiredCredential[];
  marginMs?: number;
  verdict: 'skip' | 'reboot';
  ordering: 'after' | 'undecidable' | 'before' | 'unknown';
  contradicts: boolean;
  reason: string | RegExp;
};

export const withPart = (r: EvidenceReadings, partWrite: number, auth: Record<string, AuthFields> = { 'ghcr.io': { ...NEW } }) => {
  r.files.push({
    path: PART,
    listing: { ok: true, value: { path: PART, exists: true, lastModText: 'Aug 20 09:00:00', mtime: second(partWrite) } },
    content: { ok: true, value: { path: PART, exists: true, auth } },
  });
};

/** One `it` per row: the verdict, the ordering, whether it contradicts, and the reason (the first failed rule). */
export function expectRows(rows: Row[]): void {
  it.each(rows)('$name', (row) => {
    const r = row.build!();
    row.mutate?.(r);
    const v = rebootEvidence(r, row.desired ?? [ghcr], { marginMs: row.marginMs ?? DEFAULT_EVIDENCE_MARGIN_MS });
    expect({ verdict: v.verdict, ordering: v.ordering, contradicts: v.contradicts }).toEqual({
      verdict: row.verdict,
      ordering: row.ordering,
      contradicts: row.contradicts,
    });
    if (typeof row.reason === 'string') expect(v.reason).toBe(row.reason);
    else expect(v.reason).toMatch(row.reason);
  });
}
