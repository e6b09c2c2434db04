// Plan mode's diff: ApplyConfiguration with dry_run of the config the apply would send, against the
// twin's gRPC server (which answers machined's unified diff with every value in clear): the answer is
// redacted, nothing on the node changes, a dry run is no mutation, a no-op sends nothing, and a patch
// that is not a credential form says why no diff is shown.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../../src/adapters/exec.js';
import { openTalosClient, type OpenedTalos } from '../../src/adapters/talos/open.js';
import { TalosSim } from '../../sim/talos/index.js';
import { SIM_CLUSTER_SECRET, SIM_MACHINE_TOKEN } from '../../sim/talos/machineconfig.js';
import { recordingHooks } from '../sim-talos/helpers.js';

const OLD_CRED = { username: 'ci-bot', password: 'old-token-1' };
const W1 = '10.0.3.1';
const W2 = '10.0.3.2';

let sim: TalosSim;
let work: string;
const opened: OpenedTalos[] = [];

async function open(patch: string): Promise<OpenedTalos> {
  const file = join(work, `patch-${opened.length}.yaml`);
  writeFileSync(file, patch);
  const o = await openTalosClient({ runner: new Runner(), path: sim.talosconfigPath, authPatch: file });
  opened.push(o);
  return o;
}

beforeAll(async () => {
  sim = await TalosSim.start({ kube: recordingHooks() });
  sim.addNode({ name: 'w-1', ip: W1, role: 'worker', version: '1.14', credential: { 'ghcr.io': OLD_CRED } });
  sim.addNode({ name: 'w-2', ip: W2, role: 'worker', version: '1.13', credential: { 'ghcr.io': OLD_CRED } });
  work = mkdtempSync(join(tmpdir(), 'talos-plan-diff-test-'));
});

afterAll(async () => {
  for (const o of opened) o.close();
  await sim?.stop();
  rmSync(work, { recursive: true, force: true });
});

const rac = (password: string) =>
  `apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\nusername: ci-bot\npassword: ${password}\n`;

describe('previewCredentialPatch (ApplyConfiguration dry run)', () => {
  it("returns machined's diff with every credential redacted, and changes nothing", async () => {
    const before = JSON.stringify(sim.node('w-1').machineConfig);
    const o = await open(rac('new-token-2'));
    const p = await o.client.previewCredentialPatch!(W1);
    if (!p.shown || p.details === undefined) throw new Error(`expected a diff, got ${JSON.stringify(p)}`);
    expect(p.details).toMatch(
      /^Dry run summary:\nApplied configuration without a reboot \(skipped in dry-run\)\.\nConfig diff:\n\n--- a\n\+\+\+ b\n@@ -\d+,\d+ \+\d+,\d+ @@\n/,
    );
    // the node's config has no RegistryAuthConfig yet: the whole document is added, its values masked
    expect(p.details).toContain('\n+kind: RegistryAuthConfig\n+name: ghcr.io\n+username: ***\n+password: ***\n');
    for (const secret of ['old-token-1', 'new-token-2', SIM_CLUSTER_SECRET, SIM_MACHINE_TOKEN]) expect(p.details).not.toContain(secret);
    // the dry run was sent, and is no mutation: the node's config is as it was
    expect(sim.applyCalls().filter((c) => c.node === W1 && c.dryRun)).toHaveLength(1);
    expect(sim.mutatingCommands()).toEqual([]);
    expect(JSON.stringify(sim.node('w-1').machineConfig)).toBe(before);
  });

  it('a config already carrying the credential sends nothing and says no change', async () => {
    const o = await open(rac('new-token-3'));
    await o.client.patchMachineConfig(W2, 'unused');
    const sent = sim.applyCalls().length;
    expect(await o.client.previewCredentialPatch!(W2)).toEqual({ shown: true, details: undefined });
    expect(sim.applyCalls()).toHaveLength(sent);
  });

  it('a patch that is not a credential form: no dry run, and why', async () => {
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
