// Plan mode's preview over the API against the twin's gRPC server: the action's own change list for
// each node's config, built from the config read (COSI Get) and checked locally, with no
// ApplyConfiguration at all (a dry run takes machined's apply lock and cancels a pending try-mode
// rollback: docs/plan.md); a no-op says "no change"; a patch that is not a credential form says why
// there is no list.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../../../../src/adapters/exec.js';
import { classifyCredentialPatch } from '../../../../src/core/authPatch.js';
import { openTalosClient, type OpenedTalos } from '../../../../src/adapters/talos/open.js';
import { TalosSim } from '../../../../sim/talos/index.js';
import { SIM_TS_AUTHKEY } from '../../../../sim/talos/machineconfig.js';
import { recordingHooks } from '../../../sim-talos/helpers.js';

const OLD_CRED = { username: 'ci-bot', password: 'old-token-1' };
const W1 = '10.0.3.1';
const W2 = '10.0.3.2';

let sim: TalosSim;
let work: string;
const opened: OpenedTalos[] = [];

async function open(patch: string): Promise<OpenedTalos> {
  const file = join(work, `patch-${opened.length}.yaml`);
  writeFileSync(file, patch);
  const o = await openTalosClient({
    runner: new Runner(),
    path: sim.talosconfigPath,
    authPatch: { path: file, form: classifyCredentialPatch(patch) },
  });
  opened.push(o);
  return o;
}

beforeAll(async () => {
  sim = await TalosSim.start({ kube: recordingHooks() });
  sim.addNode({ name: 'w-1', ip: W1, role: 'worker', version: '1.14', credential: { 'ghcr.io': OLD_CRED } });
  sim.addNode({ name: 'w-2', ip: W2, role: 'worker', version: '1.13', credential: { 'ghcr.io': OLD_CRED } });
  work = mkdtempSync(join(tmpdir(), 'talos-plan-preview-test-'));
});

afterAll(async () => {
  for (const o of opened) o.close();
  await sim?.stop();
  rmSync(work, { recursive: true, force: true });
});

const rac = (password: string) =>
  `apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\nusername: ci-bot\npassword: ${password}\n`;

describe('previewCredentialPatch (the change list, nothing sent)', () => {
  it('lists the places written field by field, with the local checks, and sends no ApplyConfiguration', async () => {
    sim.applyInTryMode(W1, 'machine:\n  sysctls:\n    vm.max_map_count: "262144"\n', 600_000);
    const before = sim.node('w-1').machineConfig.text;
    const o = await open(rac('new-token-2'));
    const p = await o.client.previewCredentialPatch!(W1);
    expect(p).toEqual({
      shown: true,
      edits: [
        {
          target: 'RegistryAuthConfig/ghcr.io',
          action: 'added',
          fields: [
            { name: 'username', change: 'added' },
            { name: 'password', change: 'added' },
          ],
          because: 'the patch gives this document',
        },
        {
          target: 'v1alpha1 machine.registries.config.ghcr.io.auth',
          action: 'replaced',
          fields: [
            { name: 'username', change: 'unchanged' },
            { name: 'password', change: 'changed' },
          ],
          because: 'the node carries this form for ghcr.io too: written with the new credential, so the old one is not left behind',
        },
      ],
      checks: [
        'the patched config parses: 3 documents, each other one byte for byte as it was',
        'ghcr.io: Talos will read the new credential from RegistryAuthConfig/ghcr.io (a RegistryAuthConfig document wins over machine.registries)',
        'nothing else changes: every byte outside the places written is the config’s own',
      ],
    });
    expect(JSON.stringify(p)).not.toContain('new-token-2');
    expect(JSON.stringify(p)).not.toContain(SIM_TS_AUTHKEY);
    // nothing was sent: no dry run, the try-mode rollback still pending, the config as it was
    expect(sim.applyCalls()).toEqual([]);
    expect(sim.tryRollbackPending(W1)).toBe(true);
    expect(sim.node('w-1').machineConfig.text).toBe(before);
  });

  it('a config already carrying the credential in every form it has: no edits', async () => {
    const o = await open(rac('new-token-3'));
    await o.client.patchMachineConfig(W2);
    const sent = sim.applyCalls().length;
    expect(await o.client.previewCredentialPatch!(W2)).toEqual({ shown: true, edits: [], checks: [] });
    expect(sim.applyCalls()).toHaveLength(sent);
  });

  it('a patch that is not a credential form: no list, and why', async () => {
    const o = await open('machine:\n  sysctls:\n    vm.max_map_count: "262144"\n');
    const sent = sim.applyCalls().length;
    const p = await o.client.previewCredentialPatch!(W1);
    expect(p.shown).toBe(false);
    if (!p.shown)
      expect(p.why).toContain('talosctl would apply the patch (patch document 1 sets more than machine.registries.config.<host>.auth');
    expect(sim.applyCalls()).toHaveLength(sent);
    expect(sim.mutatingCommands().filter((c) => c.nodes.includes(W1))).toEqual([]);
  });
});
