// kubectl drain's output (src/adapters/kube/parse/drainOutput.ts): what a finished drain evicted, and a
// failed drain's stderr → the pods it was still waiting for (the texts kubectl 1.32 prints:
// docs/kubernetes-facts.md#k14-drain-timeout-output).
import { describe, expect, it } from 'vitest';
import { blockedPods, drainEvicted, parseDrainFailure } from '../../../src/adapters/kube/parse/drainOutput.js';
import { drainTimeoutStderr } from '../../fakes/drainText.js';

// Output lines as kubectl drain prints them (src/adapters/kube/parse/drainOutput.ts names the source).
describe('drainEvicted', () => {
  it('a drain that finished: every pod it evicted, none of the DaemonSet pods it ignored', () => {
    const stdout = [
      'node/w1 cordoned',
      'evicting pod default/web-5f6-abcde',
      'evicting pod shop/db-0',
      'pod/db-0 evicted',
      'pod/web-5f6-abcde evicted',
      'node/w1 drained',
    ].join('\n');
    const stderr = 'Warning: ignoring DaemonSet-managed Pods: kube-system/cilium-x2k9q\n';
    expect(drainEvicted(stdout, stderr)).toEqual(['default/web-5f6-abcde', 'shop/db-0']);
  });

  it('a PDB refused, then allowed: evicted', () => {
    const stdout = ['evicting pod default/web-1', 'evicting pod default/web-1', 'pod/web-1 evicted'].join('\n');
    const stderr = `error when evicting pods/"web-1" -n "default" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.\n`;
    expect(drainEvicted(stdout, stderr)).toEqual(['default/web-1']);
  });

  it('timed out while a PDB kept refusing one pod: that pod was not evicted, the others were', () => {
    const stdout = [
      'evicting pod default/web-1',
      'evicting pod default/cache-1',
      'evicting pod default/web-1',
      'pod/cache-1 evicted',
      'pod/web-1',
    ].join('\n');
    const stderr = [
      `error when evicting pods/"web-1" -n "default" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.`,
      `error when evicting pods/"web-1" -n "default" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.`,
      `There are pending pods in node "w1" when an error occurred: error when evicting pods/"web-1" -n "default": global timeout reached: 8s`,
      `error: unable to drain node "w1" due to error: error when evicting pods/"web-1" -n "default": global timeout reached: 8s, continuing command...`,
      'There are pending nodes to be drained:',
      ' w1',
      `error when evicting pods/"web-1" -n "default": global timeout reached: 8s`,
    ].join('\n');
    expect(drainEvicted(stdout, stderr)).toEqual(['default/cache-1']);
  });

  it('the real kubectl (v1.32) against the twin: a retry line printed just before the global timeout is no eviction', () => {
    const stdout = [
      'node/w-1 cordoned',
      'evicting pod default/web-a',
      'evicting pod default/db-0',
      'pod/web-a evicted',
      'evicting pod default/db-0',
      '',
    ].join('\n');
    const stderr = `${drainTimeoutStderr({ node: 'w-1', pending: 'default/db-0', timeout: '3s' })}\n`;
    expect(drainEvicted(stdout, stderr)).toEqual(['default/web-a']);
  });

  it('timed out while an evicted pod was still terminating: it was evicted', () => {
    const stdout = ['evicting pod default/cache-1', 'pod/cache-1'].join('\n');
    const stderr = `There are pending pods in node "w1" when an error occurred: [error when waiting for pod "cache-1" in namespace "default" to terminate: context deadline exceeded]\n`;
    expect(drainEvicted(stdout, stderr)).toEqual(['default/cache-1']);
  });

  it('killed right after an eviction was sent (no answer printed): counted, the gate only waits longer', () => {
    expect(drainEvicted('node/w1 cordoned\nevicting pod default/web-1\n', '')).toEqual(['default/web-1']);
  });

  it('nothing to evict', () => {
    expect(drainEvicted('node/w1 cordoned\nnode/w1 drained\n', '')).toEqual([]);
  });
});

const PDB_TIMEOUT = drainTimeoutStderr({
  node: 'w-1',
  pending: 'default/web-1',
  timeout: '8s',
  refused: ['default/web-1', 'shop/db-0', 'default/web-1'],
});

describe('parseDrainFailure', () => {
  it('a PDB timeout: every pod a PDB refused, and the ones still pending when it gave up', () => {
    const p = parseDrainFailure(PDB_TIMEOUT);
    expect(p).toEqual({ refusedByPdb: ['default/web-1', 'shop/db-0'], pending: ['default/web-1'] });
    // db-0 was evicted in the end: only what was still pending blocked the drain
    expect(blockedPods(p)).toEqual(['default/web-1']);
  });

  it('a pod that never terminated', () => {
    const stderr =
      `There are pending pods in node "w-1" when an error occurred: [error when waiting for pod "cache-1" in namespace "default" to terminate: context deadline exceeded, error when waiting for pod "cache-2" in namespace "default" to terminate: context deadline exceeded]\n` +
      'pod/cache-1\npod/cache-2\n';
    expect(blockedPods(parseDrainFailure(stderr))).toEqual(['default/cache-1', 'default/cache-2']);
  });

  it('a drain killed before its final report: the pods a PDB refused', () => {
    expect(blockedPods(parseDrainFailure(PDB_TIMEOUT.split('\n').slice(0, 3).join('\n')))).toEqual(['default/web-1', 'shop/db-0']);
  });

  it('nothing named', () => {
    expect(blockedPods(parseDrainFailure('error: the server doesn\'t have a resource type "nodes"'))).toEqual([]);
  });
});
