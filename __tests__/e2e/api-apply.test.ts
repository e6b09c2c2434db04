// End to end: the credential applied through the Talos API (ApplyConfiguration, NO_REBOOT) by the
// built bundle, with no talosctl anywhere on PATH: a roll whose node needs no reboot, and one whose
// node is rebooted (over MachineService.Reboot). The cluster's other secrets in the config read
// back reach no sink.
import { delimiter } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { SIM_CLUSTER_SECRET, SIM_MACHINE_TOKEN } from '../../sim/talos/machineconfig.js';
import { act, byName, requireKubectl, startCluster, TEST_KNOBS } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

/** The run's PATH without the twin's fake talosctl; fails the test if a talosctl is still found. */
function pathWithoutTalosctl(c: SimCluster): string {
  const path = c
    .env()
    .PATH.split(delimiter)
    .filter((d) => d !== c.talos.binDir)
    .join(delimiter);
  const found = spawnSync('sh', ['-c', 'command -v talosctl'], { env: { PATH: path }, encoding: 'utf8' });
  expect(found.stdout.trim(), 'a talosctl is on the PATH meant to have none').toBe('');
  return path;
}

const talosctlCommands = (c: SimCluster) => c.talos.commands.filter((x) => x.command !== '');

describe('e2e: the credential through ApplyConfiguration', () => {
  it('a 1.14 node whose cri restarts after the write is rolled with no talosctl on PATH: applied over the API, no reboot', async () => {
    c = await startCluster({ defaultNodes: false });
    c.addNode({ name: 'worker-1', role: 'worker', version: '1.14', bootedAgoMs: 120_000 });
    const run = await act(c, {}, { env: { ...c.env(), PATH: pathWithoutTalosctl(c), ...TEST_KNOBS } });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.stdout).toMatch(/reading Talos through its API at .*; the credential patch through ApplyConfiguration \(NO_REBOOT\)/);
    expect(run.stdout).toContain('ApplyConfiguration (NO_REBOOT) changed RegistryAuthConfig/ghcr.io');
    const d = byName(run)['worker-1'];
    expect(d.outcome, d.reason).toBe('reboot-skipped');
    expect(c.talos.applyCalls().map((x) => [x.node, x.code])).toEqual([[c.talos.node('worker-1').ip, 0]]);
    expect(talosctlCommands(c)).toEqual([]);
    for (const secret of [SIM_MACHINE_TOKEN, SIM_CLUSTER_SECRET]) {
      for (const [sink, text] of Object.entries({
        // `::add-mask::` hands a secret to the runner's own masking (core.setSecret), which swallows the line
        stdout: run.stdout
          .split('\n')
          .filter((l) => !l.startsWith('::add-mask::'))
          .join('\n'),
        summary: run.summary,
        outputs: JSON.stringify(run.outputs),
        state: JSON.stringify(run.state),
      }))
        expect(text.includes(secret), `${secret} in ${sink}`).toBe(false);
    }
  });

  it('a 1.13 node is patched and rebooted over the API with no talosctl on PATH', async () => {
    c = await startCluster({ defaultNodes: false });
    c.addNode({ name: 'worker-1', role: 'worker', version: '1.13', bootedAgoMs: 120_000 });
    const run = await act(c, {}, { env: { ...c.env(), PATH: pathWithoutTalosctl(c) } });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(byName(run)['worker-1'].outcome).toBe('rebooted');
    expect(c.talos.mutatingCommands().map((x) => [x.via, x.command])).toEqual([
      ['api', 'patch'],
      ['api', 'reboot'],
    ]);
    expect(talosctlCommands(c)).toEqual([]);
    expect(c.talos.applyCalls()).toHaveLength(1);
  });
});
