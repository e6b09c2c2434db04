// End to end through the bundle on the API path: the credential patch edits the node's machine config
// in place and decides from the effective credential.
// - The legacy form changes only the text of machine.registries.config.<host>.auth: every other byte
//   stays, the YAML 1.1 octal `permissions: 0644` included (a YAML 1.2 re-render writes `644`, which
//   Talos reads as another mode and refuses to apply without a reboot).
// - Both forms for one host: Talos reads a RegistryAuthConfig document over the legacy map
//   (container.RegistryAuthConfigs), so the form that wins is written, and the other form the node
//   carries gets the new credential too: the old one is never left behind.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SimCluster } from '../../sim/cluster.js';
import { NEW_CREDENTIAL, OLD_CREDENTIAL } from '../../sim/cluster.js';
import { SIM_STALE_LEGACY, SIM_TS_AUTHKEY } from '../../sim/talos/machineconfig.js';
import { act, byName, requireKubectl, startCluster } from './helpers.js';

let c: SimCluster | undefined;
beforeAll(() => requireKubectl());
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

/** what SimCluster.writeAuthPatch writes in the document form */
const DOCUMENT_PATCH = `apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\nusername: ${NEW_CREDENTIAL.username}\npassword: ${NEW_CREDENTIAL.password}\n`;
const NEW = { username: NEW_CREDENTIAL.username, password: NEW_CREDENTIAL.password };
const legacyAuth = (c: SimCluster, n: string) => (c.talos.node(n).machineConfig.v1alpha1.machine as any).registries.config['ghcr.io']?.auth;

/** The lines of `after` that differ from `before` (same line count required), with their numbers. */
function changedLines(before: string, after: string): Array<[number, string, string]> {
  const a = before.split('\n');
  const b = after.split('\n');
  expect(b.length, 'the edit added or removed lines').toBe(a.length);
  return a.flatMap((l, i): Array<[number, string, string]> => (l === b[i] ? [] : [[i, l, b[i]]]));
}

describe('e2e: the machine config edited in place', () => {
  it('a legacy-form patch changes only the auth lines: the octal file mode and every other byte are kept', async () => {
    c = await startCluster({ defaultNodes: false });
    c.addNode({ name: 'worker-1', role: 'worker', version: '1.14', bootedAgoMs: 120_000 });
    const before = c.talos.node('worker-1').machineConfig.text;
    expect(before).toContain('      permissions: 0644\n');
    const run = await act(c, { 'auth-patch': c.writeAuthPatch(NEW_CREDENTIAL, 'legacy.yaml', 'legacy') });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(byName(run)['worker-1'].outcome).toBe('reboot-skipped');
    const after = c.talos.node('worker-1').machineConfig.text;
    // exactly the password line of ghcr.io's auth map differs (the username is the same), at its column
    expect(changedLines(before, after).map(([, a, b]) => [a, b])).toEqual([
      [`          password: ${OLD_CREDENTIAL.password}`, `          password: ${NEW_CREDENTIAL.password}`],
    ]);
    expect(c.talos.applyCalls().map((x) => x.code)).toEqual([0]);
    expect(c.talos.node('worker-1').auth['ghcr.io']).toEqual(NEW);
    expect(run.stdout).toContain('ApplyConfiguration (NO_REBOOT) changed v1alpha1 machine.registries.config.ghcr.io.auth');
  });

  it('a legacy-form patch on a node whose RegistryAuthConfig document wins writes the document too: the credential takes effect', async () => {
    c = await startCluster({ defaultNodes: false });
    c.addNode({ name: 'worker-1', role: 'worker', version: '1.14', bootedAgoMs: 120_000, credentialForm: 'both' });
    expect(c.talos.node('worker-1').auth['ghcr.io']).toMatchObject({ password: OLD_CREDENTIAL.password });
    const run = await act(c, { 'auth-patch': c.writeAuthPatch(NEW_CREDENTIAL, 'legacy.yaml', 'legacy'), 'cri-restart-wait': '5s' });
    expect(run.exitCode, run.stdout).toBe(0);
    const d = byName(run)['worker-1'];
    expect(d.outcome, d.reason).toBe('reboot-skipped');
    const mc = c.talos.node('worker-1').machineConfig;
    expect(mc.registryAuth['ghcr.io']).toEqual(NEW);
    expect(legacyAuth(c, 'worker-1')).toEqual(NEW);
    for (const old of [OLD_CREDENTIAL.password, SIM_STALE_LEGACY.password!]) expect(mc.text).not.toContain(old);
    expect(run.stdout).toContain(
      'ApplyConfiguration (NO_REBOOT) changed RegistryAuthConfig/ghcr.io, v1alpha1 machine.registries.config.ghcr.io.auth',
    );
    // the neighbours are where they were
    expect(mc.text).toContain(`TS_AUTHKEY=${SIM_TS_AUTHKEY}`);
    expect(mc.text).toContain('      permissions: 0644\n');
  });

  it('a document patch on a node with only the legacy map appends the document and leaves no old credential in the map', async () => {
    c = await startCluster({ defaultNodes: false });
    c.addNode({ name: 'worker-1', role: 'worker', version: '1.14', bootedAgoMs: 120_000 });
    const before = c.talos.node('worker-1').machineConfig.text;
    const run = await act(c);
    expect(run.exitCode, run.stdout).toBe(0);
    expect(byName(run)['worker-1'].outcome).toBe('reboot-skipped');
    const mc = c.talos.node('worker-1').machineConfig;
    expect(mc.registryAuth['ghcr.io']).toEqual(NEW);
    expect(legacyAuth(c, 'worker-1')).toEqual(NEW);
    expect(mc.text).not.toContain(OLD_CREDENTIAL.password);
    // the document is appended after the config's last one; the rest is the config's own text but the password line
    const appended = mc.text.slice(mc.text.lastIndexOf('---\napiVersion: v1alpha1\nkind: RegistryAuthConfig'));
    expect(appended).toBe(`---\n${DOCUMENT_PATCH}`);
    expect(changedLines(before, mc.text.slice(0, mc.text.length - appended.length)).map(([, , b]) => b)).toEqual([
      `          password: ${NEW_CREDENTIAL.password}`,
    ]);
  });
});
