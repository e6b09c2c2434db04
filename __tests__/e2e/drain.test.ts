// End to end: the drain against PodDisruptionBudgets, and a drain-timeout kubectl would misread.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { HTTP_DRAIN_GRACE_MS } from '../../src/adapters/kube/http/client.js';
import { STEP } from '../../src/core/steps.js';
import { A, act, byName, node, requireKubectl, startCluster } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

describe('e2e: drain and PodDisruptionBudgets', () => {
  it('a PDB that blocks for a while then allows: the drain waits and the roll succeeds', async () => {
    c = await startCluster();
    c.kube.setPdbAllowed('default', 'web', 0);
    // Lift the budget only once the drain has been refused at least once, whatever the machine's load.
    let refusedAt = 0;
    const t = setInterval(() => {
      if (!refusedAt && c!.kube.requests.some((r) => r.method === 'POST' && r.path.endsWith('/pods/web-1/eviction') && r.status === 429)) {
        refusedAt = Date.now();
        setTimeout(() => c!.kube.setPdbAllowed('default', 'web', 1), 1000);
      }
    }, 100);
    const run = await act(c, { nodes: 'worker-1' });
    clearInterval(t);
    expect(run.exitCode, run.stdout).toBe(0);
    expect(byName(run)['worker-1'].outcome).toBe('rebooted');
    expect(refusedAt).toBeGreaterThan(0);
    expect(c.kube.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pods/web-1/eviction')).map((r) => r.status)).toContain(
      429,
    );
    expect(c.kube.pods().some((p: any) => p.metadata.name === 'web-1')).toBe(false);
  });

  it('a PDB that never allows: the drain times out, schedulability is restored and the step fails', async () => {
    c = await startCluster();
    c.kube.setPdbAllowed('default', 'web', 0);
    const run = await act(c, { nodes: 'worker-1', 'drain-timeout': '6s' });
    expect(run.exitCode).toBe(1);
    expect(run.outputs.result).toBe('failed');
    const d = byName(run)['worker-1'];
    expect(d.outcome).toBe('failed');
    expect(d.reason).toMatch(/drain failed/);
    // it ran to its deadline and no further than the margin the time budget counts for it (the drain
    // ends its own requests at drain-timeout; src/rules/budget.ts, docs/parallel.md)
    const drain = d.steps.find((s: { name: string }) => s.name === STEP.drain);
    expect(drain?.durationMs, JSON.stringify(d.steps)).toBeGreaterThanOrEqual(6000);
    expect(drain?.durationMs).toBeLessThanOrEqual(6000 + HTTP_DRAIN_GRACE_MS);
    const n = node(c, 'worker-1');
    expect(n.spec.unschedulable).toBeFalsy();
    expect(n.metadata.annotations?.[A.owner]).toBeUndefined();
    expect(n.metadata.annotations?.[A.verified]).toBeUndefined();
    expect(c.talos.mutatingCommands().filter((x) => x.command === 'reboot')).toEqual([]);
    expect(c.kube.pods().some((p: any) => p.metadata.name === 'web-1')).toBe(true);
  });
});

describe('e2e: a zero drain-timeout', () => {
  it('is an input error naming the input before any command runs (kubectl would read 0 as "wait forever")', async () => {
    const cluster = (c = await startCluster());
    const run = await act(cluster, { nodes: 'worker-1', 'drain-timeout': '0m' });
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toContain('input "drain-timeout": "0m" must be longer than zero');
    expect(cluster.kube.requests).toEqual([]);
    expect(cluster.talos.commands).toEqual([]);
  });
});
