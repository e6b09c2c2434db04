// The fleet behaviour.test.ts and reboot.test.ts drive the fake talosctl against: four workers (w-3 on
// 1.14) and a control plane holding the OLD credential, and the two forms of the patch that replaces it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TalosSim } from '../../sim/talos/index.js';
import { recordingHooks, until } from './helpers.js';

export const OLD = { username: 'ci-bot', password: 'token-1' };

export interface Fleet {
  sim: TalosSim;
  hooks: ReturnType<typeof recordingHooks>;
  /** the document form (RegistryAuthConfig) of the new credential */
  newPatch: string;
  /** the legacy form (machine.registries.config) of the new credential */
  legacyPatch: string;
  /** the temporary directory the patches are in */
  work: string;
  stop(): Promise<void>;
}

export async function startFleet(): Promise<Fleet> {
  const hooks = recordingHooks();
  const sim = await TalosSim.start({ kube: hooks, rebootMs: 1200, criRestartMs: 400 });
  for (const [name, ip, version] of [
    ['w-1', '10.0.1.1', '1.13'],
    ['w-2', '10.0.1.2', '1.13'],
    ['w-3', '10.0.1.3', '1.14'],
    ['w-4', '10.0.1.4', '1.13'],
  ] as const) {
    sim.addNode({ name, ip, role: 'worker', version, credential: { 'ghcr.io': OLD } });
  }
  sim.addNode({ name: 'cp-1', ip: '10.0.1.10', role: 'control-plane', credential: { 'ghcr.io': OLD } });
  sim.setRegistryCredential('ghcr.io', OLD);
  const work = mkdtempSync(join(tmpdir(), 'sim-talos-test-'));
  const newPatch = join(work, 'registry-auth.yaml');
  writeFileSync(newPatch, 'apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\nusername: ci-bot\npassword: token-2\n');
  const legacyPatch = join(work, 'legacy.yaml');
  writeFileSync(
    legacyPatch,
    'machine:\n  registries:\n    config:\n      ghcr.io:\n        auth:\n          username: ci-bot\n          password: token-2\n',
  );
  return {
    sim,
    hooks,
    newPatch,
    legacyPatch,
    work,
    async stop() {
      await sim.stop();
      rmSync(work, { recursive: true, force: true });
    },
  };
}

/** A rebooted node answers before it loads cri: wait until cri is launched and its first check passed. */
export const criUp = (sim: TalosSim, name: string) =>
  until(async () => (sim.node(name).containerd.health.healthy ? true : undefined), 30_000, 20);
