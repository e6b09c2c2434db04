// End to end: the Kubernetes Events of a roll, through the bundle and the real kubectl against the
// twin: each node's decisions on the Node as `kubectl describe node` shows them, the run's on its
// Lease, and an Event write the cluster refuses leaving the roll green with one warning.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { kubectl, kubectlJson } from '../sim-kube/helpers.js';
import { act, byName, fromAction, requireKubectl, startCluster } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

/** The reasons and messages of the action's Events on a node, as `kubectl describe node` lists them. */
async function describedEvents(cluster: SimCluster, name: string): Promise<Array<{ reason: string; line: string }>> {
  const r = await kubectl(cluster.kube, ['describe', 'node', name]);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout
    .split('Events:')[1]!
    .split('\n')
    .filter((l) => l.includes('registry-auth-rollout'))
    .map((line) => ({ reason: line.trim().split(/\s+/)[1]!, line }));
}

describe('e2e: Kubernetes Events', () => {
  it('a rebooted and a skipped node carry their decisions in order, with the evidence line; the Lease the run end', async () => {
    c = await startCluster();
    const run = await act(c, { nodes: 'worker-1,worker-3' });
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run);
    expect(d['worker-1'].outcome).toBe('rebooted');
    expect(d['worker-3'].outcome).toBe('reboot-skipped');

    const rebooted = await describedEvents(c, 'worker-1');
    expect(rebooted.map((e) => e.reason)).toEqual(['Claimed', 'Drained', 'Rebooted', 'Verified', 'Released']);
    expect(rebooted[2].line).toContain(d['worker-1'].evidence!.reason);
    const skipped = await describedEvents(c, 'worker-3');
    expect(skipped.map((e) => e.reason)).toEqual(['Claimed', 'RebootSkipped', 'Released']);
    expect(skipped[1].line).toContain(`reboot skipped: ${d['worker-3'].reason}`);
    // a node the run did not touch has none
    expect(await describedEvents(c, 'worker-2')).toEqual([]);

    // each Event one request over the run's channel, sent as the action's Event writes
    const creates = c.kube.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/events'));
    expect(creates.length).toBeGreaterThan(0);
    expect(creates.every((r) => fromAction(r, 'event'))).toBe(true);
    const lease = await kubectlJson(c.kube, ['get', 'events', '-n', 'kube-system', '--field-selector', 'involvedObject.kind=Lease']);
    expect(lease.items.map((e: any) => [e.reason, e.involvedObject.name])).toEqual([['RolloutSucceeded', 'registry-auth-rollout']]);
    expect(lease.items[0].message).toBe('the run ended processed (1 rebooted, 1 reboot-skipped)');
    expect(run.annotations.filter((a) => a.kind === 'warning')).toEqual([]);
  });

  it('a cluster that refuses Events (403): the roll stays green, with one warning for the run', async () => {
    c = await startCluster();
    c.kube.failNext(
      { method: 'POST', path: /\/events$/, count: 1000 },
      {
        status: 403,
        reason: 'Forbidden',
        message: 'events is forbidden: User "ci" cannot create resource "events" in API group "" in the namespace "default"',
      },
    );
    const run = await act(c, { nodes: 'worker-1,worker-3' });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('processed');
    const warnings = run.annotations.filter((a) => a.kind === 'warning');
    expect(warnings.map((a) => a.title)).toEqual(['Kubernetes Events not written']);
    expect(warnings[0].message).toMatch(/create.*events/);
    // said once in the log too, though three writes (two nodes, the Lease) were refused
    const said = run.stdout.split('\n').filter((l) => l.includes("could not write the run's Kubernetes Events"));
    expect(said.filter((l) => !l.startsWith('::'))).toHaveLength(1);
    expect(said.filter((l) => l.startsWith('::warning'))).toHaveLength(1);
    expect(
      c.kube.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/events') && r.status === 403).length,
    ).toBeGreaterThanOrEqual(3);
    expect(await describedEvents(c, 'worker-1')).toEqual([]);
  });
});
