// What the api-evidence tests check of a decision: the boot gap the action reported against the one the
// twin laid out, and a node released verified.
import { expect } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { A, ann, node, REVISION, verifiedRev } from './helpers.js';

export const CRI_TOML = '/etc/cri/conf.d/cri.toml';

/** launch − write of the running containerd, on the node's clock, as the twin laid it out */
export const trueGap = (c: SimCluster, name: string) => {
  const n = c.talos.node(name);
  return n.containerd.startedAtMs - n.files.get(CRI_TOML)!.mtimeMs;
};

export const values = (v: unknown) => (v as { values: { readPath?: string; gap?: { lowMs: number; highMs: number } } }).values;

const PRE_LAUNCH = /^(Starting service|Waiting for .*|Running pre state|Creating service runner)$/s;

/**
 * The lower end of the gap the twin's own records give: its newest pre-launch event before the
 * running containerd's launch, against cri.toml's EtcFileStatus update (both kept at the fraction
 * the API serves). On a quiet machine that is a few ms below the truth; on a loaded one a 1.14
 * restart's events are stamped when their timers fire, as a slow node's would be, so the pre-launch
 * event may lie tens of ms before the launch: the truth is not the measure, the records are.
 */
export const twinLowGap = (c: SimCluster, name: string) => {
  const n = c.talos.node(name);
  const pre = n.containerd.events.filter((e) => PRE_LAUNCH.test(e.msg) && e.ts <= n.containerd.startedAtMs).pop();
  const status = n.etcFileStatus.get('cri/conf.d/cri.toml');
  expect(pre, `${name}: a pre-launch event in the twin's cri history`).toBeDefined();
  expect(status, `${name}: cri.toml's EtcFileStatus in the twin`).toBeDefined();
  return pre!.ts - status!.updated;
};

/**
 * The gap the action reported holds the true one, read via the API. Its lower end — the one compared
 * with the margin — is the twin's newest pre-launch event against the EtcFileStatus update (both
 * nanosecond, so within 1 ms after rounding to the ms the report keeps); its upper end may be up to a
 * second wider (the write's earliest is the whole-second mtime).
 */
export function expectApiGap(v: unknown, c: SimCluster, name: string): void {
  const gap = trueGap(c, name);
  const { readPath, gap: range } = values(v);
  expect(readPath).toBe('api');
  expect(range!.lowMs).toBeLessThanOrEqual(gap);
  expect(Math.abs(range!.lowMs - twinLowGap(c, name)), `${name}: reported low end against the twin's records`).toBeLessThan(1);
  expect(range!.highMs).toBeGreaterThanOrEqual(gap);
  expect(range!.highMs - range!.lowMs).toBeLessThan(1020);
}

export function expectReleasedVerified(c: SimCluster, name: string): void {
  const a = ann(c, name);
  expect(verifiedRev(a)).toBe(REVISION);
  expect(a[A.owner]).toBeUndefined();
  expect(a[A.phase]).toBeUndefined();
  expect(node(c, name).spec.unschedulable).toBeFalsy();
}
