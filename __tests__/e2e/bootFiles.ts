// What the boot-files tests check of a rolled node, and the registry part they delete.
import { expect } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { A, type act, ann, byName, node, REVISION, verifiedRev } from './helpers.js';

export const PART = '/etc/cri/conf.d/01-registries.part';

/** Rebooted once, proven, released verified and schedulable, nothing of the claim left. */
export function expectRolled(c: SimCluster, run: Awaited<ReturnType<typeof act>>, name: string): void {
  expect(run.exitCode, run.stdout).toBe(0);
  const d = byName(run)[name] as any;
  expect(d.outcome, d.reason).toBe('rebooted');
  expect(d.proof.incomplete, JSON.stringify(d.proof)).toBeUndefined();
  expect(verifiedRev(ann(c, name))).toBe(REVISION);
  expect(ann(c, name)[A.owner]).toBeUndefined();
  expect(node(c, name).spec.unschedulable ?? false).toBe(false);
}
