// End to end through talosctl: a config file or listing seen absent (or unreadable) before the reboot is
// read again after it; the boot's own rendering is what the proof judges (the API side: boot-files.test.ts).
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { act, byName, requireKubectl, startCluster } from './helpers.js';
import { expectRolled, PART } from './bootFiles.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

// Through talosctl `reboot --wait` returns once the machine is ready, so the files are there by the
// first proof reading; what bit there was an absence seen BEFORE the reboot.

describe('e2e: the proof through talosctl after an absence seen before the reboot', () => {
  it('the registry config files missing before the reboot: rebooted, the files the boot rendered read and proven', async () => {
    c = await startCluster({ defaultNodes: false, cliPath: true });
    c.addNode({ name: 'worker-1', role: 'worker', version: '1.13' });
    const n = c.talos.node('worker-1');
    n.files.delete(PART);
    n.etcFileStatus.delete('cri/conf.d/01-registries.part');
    const run = await act(c);
    const d = byName(run)['worker-1'] as any;
    expect(d.evidence.values.files.find((f: any) => f.path === PART).exists).toBe(false);
    expectRolled(c, run, 'worker-1');
    expect(d.proof.verdict).toBe('skip');
  });

  it('the listing of the config directory found nothing before the reboot: rebooted, then proven', async () => {
    c = await startCluster({ defaultNodes: false, cliPath: true });
    c.addNode({ name: 'worker-1', role: 'worker', version: '1.13' });
    // the reading before the patch: `talosctl ls -l /etc/cri/conf.d` answers as for a missing directory
    c.talos.failNext(
      { command: 'ls', node: 'worker-1' },
      { stderr: 'error listing: rpc error: code = Unknown desc = lstat /etc/cri/conf.d: no such file or directory\n', exitCode: 1 },
    );
    const run = await act(c);
    const d = byName(run)['worker-1'] as any;
    expect(d.evidence.reason).toMatch(/none of the CRI config files exists/);
    expectRolled(c, run, 'worker-1');
    expect(d.proof.verdict).toBe('skip');
  });

  it('the listing failed before the reboot (Unavailable): rebooted, then proven', async () => {
    c = await startCluster({ defaultNodes: false, cliPath: true });
    c.addNode({ name: 'worker-1', role: 'worker', version: '1.13' });
    c.talos.failNext(
      { command: 'ls', node: 'worker-1' },
      { stderr: 'error listing: rpc error: code = Unavailable desc = connection error\n', exitCode: 1 },
    );
    const run = await act(c);
    const d = byName(run)['worker-1'] as any;
    expect(d.evidence.reason).toMatch(/^listing .* failed/);
    expectRolled(c, run, 'worker-1');
  });
});
