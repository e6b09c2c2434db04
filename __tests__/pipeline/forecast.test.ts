// plan's drain forecast in the pipeline, on the fakes: only planned reboots get one; one list, then one
// dry-run eviction per pod a drain would evict (never a refused or skipped pod); a list that fails
// leaves the plan standing with the forecast saying why; the settle prediction reuses the pods.
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/errors.js';
import type { DecisionRecord } from '../../src/core/model/record.js';
import { makeCluster, roll } from './harness.js';

const forecastOf = (records: DecisionRecord[], node: string) => records.find((r) => r.node === node)?.drainForecast;

describe('drain forecast (plan, fakes)', () => {
  it('asks a dry run only for the pods a drain would evict, and names what blocks each node', async () => {
    const c = makeCluster([{ name: 'w1' }, { name: 'w2' }, { name: 'w3', current: true }]);
    c.kube.podOwners = [
      {
        namespace: 'shop',
        name: 'db-0',
        nodeName: 'w1',
        phase: 'Running',
        mirror: false,
        terminating: false,
        ready: true,
        controller: { kind: 'StatefulSet', name: 'db' },
      },
      {
        namespace: 'kube-system',
        name: 'cilium-w1',
        nodeName: 'w1',
        phase: 'Running',
        mirror: false,
        terminating: false,
        ready: true,
        controller: { kind: 'DaemonSet', name: 'cilium' },
      },
      { namespace: 'default', name: 'bare', nodeName: 'w2', phase: 'Running', mirror: false, terminating: false, ready: true },
      {
        namespace: 'shop',
        name: 'web-3',
        nodeName: 'w3',
        phase: 'Running',
        mirror: false,
        terminating: false,
        ready: true,
        controller: { kind: 'ReplicaSet', name: 'web' },
      },
    ];
    c.kube.daemonSets = ['kube-system/cilium'];
    c.kube.evictionAnswer = (pod) => (pod === 'shop/db-0' ? { kind: 'blocked', message: 'no' } : { kind: 'allowed' });
    const res = await roll(c, { mode: 'plan' });
    expect(res.result).toBe('planned');
    expect(c.kube.calls.filter((x) => x.method === 'evictDryRun').map((x) => x.name)).toEqual(['shop/db-0']);
    expect(c.kube.calls.filter((x) => x.method === 'listDrainInputs')).toHaveLength(1);
    expect(forecastOf(res.records, 'w1')).toMatchObject({
      ok: false,
      evictions: 1,
      blocked: [{ pod: 'shop/db-0', budgets: [], message: 'no' }],
    });
    expect(forecastOf(res.records, 'w2')).toMatchObject({ ok: false, evictions: 0, refusals: [{ pod: 'default/bare' }] });
    // w3 is current: planned-skip, no drain, no forecast, no dry run for its pod
    expect(res.records.find((r) => r.node === 'w3')?.outcome).toBe('planned-skip');
    expect(forecastOf(res.records, 'w3')).toBeUndefined();
    // a plan never drains, patches or deletes
    expect(c.kube.calls.some((x) => ['drain', 'patchNode', 'deletePod', 'createPod'].includes(x.method))).toBe(false);
  });

  it('a list that fails: the plan stands, each planned reboot says why there is no forecast', async () => {
    const c = makeCluster([{ name: 'w1' }]);
    c.kube.listDrainInputs = async () => {
      throw new ToolError({
        tool: 'kubectl',
        command: 'kubectl get pods,daemonsets.apps,poddisruptionbudgets.policy -A',
        kind: 'forbidden',
        exitCode: 1,
        stderr: 'Error from server (Forbidden): daemonsets.apps is forbidden',
      });
    };
    const res = await roll(c, { mode: 'plan' });
    expect(res.result).toBe('planned');
    expect(forecastOf(res.records, 'w1')).toMatchObject({ ok: false, unknown: expect.stringMatching(/could not be listed: .*forbidden/) });
  });

  it('no planned reboot: nothing listed for the forecast', async () => {
    const c = makeCluster([{ name: 'w1', current: true }]);
    const res = await roll(c, { mode: 'plan', settleTimeoutMs: 0 });
    expect(res.result).toBe('planned');
    expect(c.kube.calls.some((x) => x.method === 'listDrainInputs')).toBe(false);
  });
});
