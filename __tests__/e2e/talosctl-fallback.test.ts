// End to end: the second talosctl fallback. With a talosconfig that has a client certificate, an
// auth patch that is not one of the two credential forms the API path applies (a RegistryAuthConfig
// document, a legacy machine.registries.config.<host>.auth map) is applied by talosctl, and the log
// says why; the reboot and the reads still go over the API. Without talosctl on PATH that patch is
// refused before anything is mutated.
import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NEW_CREDENTIAL, REGISTRY, type SimCluster } from '../../sim/cluster.js';
import { effectiveAuth, SIM_MACHINE_TOKEN } from '../../sim/talos/machineconfig.js';
import { A, act, ann, byName, node, requireKubectl, startCluster, TEST_KNOBS } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

/** The credential in the legacy form plus a sysctl: more than the API path interprets. */
function writeWiderPatch(c: SimCluster): string {
  const path = join(c.dir, 'registry-auth-and-sysctl.yaml');
  writeFileSync(
    path,
    [
      'machine:',
      '  registries:',
      '    config:',
      `      ${REGISTRY}:`,
      '        auth:',
      `          username: ${NEW_CREDENTIAL.username}`,
      `          password: ${NEW_CREDENTIAL.password}`,
      '  sysctls:',
      '    net.core.somaxconn: "65535"',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  chmodSync(path, 0o600);
  return path;
}

const WHY = 'patch document 1 sets more than machine.registries.config.<host>.auth';

describe('e2e: a patch of another form goes through talosctl, the rest over the API', () => {
  it('talosctl applies the patch (the log says why), the API reboots and reads; the node carries the patch', async () => {
    c = await startCluster({ defaultNodes: false, talosctl: true });
    c.addNode({ name: 'worker-1', role: 'worker', version: '1.13', bootedAgoMs: 120_000 });
    const run = await act(c, { 'auth-patch': writeWiderPatch(c) });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.outputs.result).toBe('processed');
    expect(run.stdout).toContain(`reading Talos through its API at `);
    expect(run.stdout).toContain(`the credential patch through talosctl (${WHY})`);
    expect(byName(run)['worker-1'].outcome).toBe('rebooted');

    expect(c.talos.mutatingCommands().map((x) => [x.via ?? 'talosctl', x.command])).toEqual([
      ['talosctl', 'patch'],
      ['api', 'reboot'],
    ]);
    expect(c.talos.applyCalls()).toEqual([]);
    // every talosctl process was the patch: the reads went over the API
    expect(c.talos.commands.filter((x) => x.command !== '').map((x) => x.command)).toEqual(['patch']);
    // and every talosctl process the bundle started went through the twin's front door (sim/bin/talosctl)
    expect(c.talos.frontDoorCalls).toEqual({ inProcess: c.talos.commands.filter((x) => x.via !== 'api').length, handedBack: 0 });

    const mc = c.talos.node('worker-1').machineConfig;
    expect((mc.v1alpha1.machine as { sysctls?: unknown }).sysctls).toEqual({ 'net.core.somaxconn': '65535' });
    expect(effectiveAuth(mc)[REGISTRY]).toMatchObject({ username: NEW_CREDENTIAL.username, password: NEW_CREDENTIAL.password });
    expect(node(c, 'worker-1').spec?.unschedulable ?? false).toBe(false);
    expect(ann(c, 'worker-1')[A.owner]).toBeUndefined();
  });

  it('talosctl path: a node whose RegistryAuthConfig document would shadow the legacy form the patch sets is refused before its claim', async () => {
    // Talos reads the document over the legacy map (container.RegistryAuthConfigs): merged by talosctl,
    // this patch would leave the old credential in effect (sim/talos/machineconfig.ts effectiveAuth)
    c = await startCluster({ defaultNodes: false, cliPath: true });
    c.addNode({ name: 'worker-1', role: 'worker', version: '1.13', bootedAgoMs: 120_000, credentialForm: 'both' });
    const before = c.talos.node('worker-1').machineConfig.text;
    const run = await act(c, { 'auth-patch': writeWiderPatch(c) });
    expect(run.exitCode, run.stdout).not.toBe(0);
    const d = byName(run)['worker-1'];
    expect(d.outcome).toBe('refused');
    expect(d.reason).toContain(
      `node worker-1 carries a RegistryAuthConfig document for ${REGISTRY}, which takes precedence over the legacy machine.registries.config.${REGISTRY}.auth entry this patch sets: put the credential in a RegistryAuthConfig document`,
    );
    // read with talosctl (the config's secrets masked wherever text leaves), and nothing on the node changed
    expect(c.talos.commands.map((x) => x.command)).toContain('get');
    expect(c.talos.mutatingCommands()).toEqual([]);
    expect(c.talos.node('worker-1').machineConfig.text).toBe(before);
    expect(node(c, 'worker-1').spec?.unschedulable ?? false).toBe(false);
    expect(ann(c, 'worker-1')[A.owner]).toBeUndefined();
    // the config read was registered for masking (the runner's add-mask), and no other line shows it
    expect(run.stdout).toContain(`::add-mask::${SIM_MACHINE_TOKEN}`);
    expect(
      run.stdout
        .split('\n')
        .filter((l) => !l.startsWith('::add-mask::'))
        .join('\n'),
    ).not.toContain(SIM_MACHINE_TOKEN);
  });

  it('without talosctl on PATH the same patch is refused before anything is mutated, naming talosctl', async () => {
    c = await startCluster({ defaultNodes: false });
    c.addNode({ name: 'worker-1', role: 'worker', version: '1.13', bootedAgoMs: 120_000 });
    const path = c
      .env()
      .PATH.split(delimiter)
      .filter((d) => d !== c!.talos.binDir)
      .join(delimiter);
    const found = spawnSync('sh', ['-c', 'command -v talosctl'], { env: { PATH: path }, encoding: 'utf8' });
    expect(found.stdout.trim(), 'a talosctl is on the PATH meant to have none').toBe('');

    const run = await act(c, { 'auth-patch': writeWiderPatch(c) }, { env: { ...c.env(), PATH: path, ...TEST_KNOBS } });
    expect(run.exitCode).not.toBe(0);
    expect(run.stdout).toMatch(/input "auth-patch": .*needs talosctl.*not on PATH/);
    expect(run.stdout).toContain(WHY);
    expect(c.kube.mutatingRequests()).toEqual([]);
    expect(c.talos.mutatingCommands()).toEqual([]);
    expect(node(c, 'worker-1').spec?.unschedulable ?? false).toBe(false);
    expect(ann(c, 'worker-1')[A.owner]).toBeUndefined();
  });
});
