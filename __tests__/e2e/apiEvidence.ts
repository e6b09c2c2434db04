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

/**
 * The gap the action reported holds the true one, read via the API. Its lower end — the one compared
 * with the margin — is within a few ms of the truth (a pre-launch event against the EtcFileStatus
 * update, both nanosecond); its upper end may be up to a second wider (the write's earliest is the
 * whole-second mtime).
 */
export function expectApiGap(v: unknown, gap: number): void {
  const { readPath, gap: range } = values(v);
  expect(readPath).toBe('api');
  expect(range!.lowMs).toBeLessThanOrEqual(gap);
  expect(gap - range!.lowMs).toBeLessThan(20);
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
