// A patch Talos's own merge applies (talosctl) on a node whose RegistryAuthConfig document would
// shadow the legacy map the patch sets (src/rules/credentialForms.ts): the pipeline reads the node's
// forms before its claim and refuses it untouched; the other nodes roll. Fakes on virtual time.
import { describe, expect, it } from 'vitest';
import type { CredentialForms, PatchForms } from '../../src/core/model/credential.js';
import { keys, makeCluster, roll } from './harness.js';

const LEGACY_PATCH: PatchForms = { documents: [], legacy: ['ghcr.io'], deletedDocuments: [] };

function withForms(c: ReturnType<typeof makeCluster>, byAddress: Record<string, CredentialForms>) {
  const reads: string[] = [];
  const talos = Object.assign(c.talos, {
    readCredentialForms: (address: string) => {
      reads.push(address);
      return Promise.resolve(byAddress[address] ?? { documents: [], legacy: ['ghcr.io'] });
    },
  });
  return { talos, reads };
}

describe('a node whose RegistryAuthConfig document would shadow the patch', () => {
  it('is refused before its claim (not cordoned, not patched, nothing to release); the run stops there as after any refusal', async () => {
    const c = makeCluster([{ name: 'w-a' }, { name: 'w-b' }]);
    const { talos, reads } = withForms(c, { '10.0.0.10': { documents: ['ghcr.io'], legacy: ['ghcr.io'] } });
    const res = await roll(c, {}, { talos, patchForms: LEGACY_PATCH });
    const byNode = Object.fromEntries(res.records.map((r) => [r.node, r]));
    expect(byNode['w-a'].outcome).toBe('refused');
    expect(byNode['w-a'].reason).toMatch(/^node w-a carries a RegistryAuthConfig document for ghcr\.io, which takes precedence/);
    expect(byNode['w-a'].nextStep).toMatch(/not claimed, cordoned or patched/);
    expect(res.result).toBe('failed');
    expect(res.notReached).toEqual(['w-b']);
    expect(reads).toEqual(['10.0.0.10']);
    expect(c.talos.mutatingCalls()).toEqual([]);
    expect(c.kube.calls.filter((x) => x.method === 'patchNode' && x.name === 'w-a')).toEqual([]);
    const a = c.kube.state('w-a');
    expect(a.unschedulable).toBe(false);
    expect(a.annotations[keys.owner]).toBeUndefined();
  });

  it('needs no read when the patch gives no legacy map (a document always wins), or the client writes every form itself', async () => {
    const c = makeCluster([{ name: 'w-a' }]);
    const { talos, reads } = withForms(c, { '10.0.0.10': { documents: ['ghcr.io'], legacy: [] } });
    const res = await roll(c, {}, { talos, patchForms: { documents: ['ghcr.io'], legacy: [], deletedDocuments: [] } });
    expect(res.records[0].outcome).toBe('rebooted');
    expect(reads).toEqual([]);
    const plain = makeCluster([{ name: 'w-a' }]);
    expect((await roll(plain, {}, { patchForms: LEGACY_PATCH })).records[0].outcome).toBe('rebooted');
  });
});
