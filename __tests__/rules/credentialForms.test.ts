// A patch Talos's own merge applies (the talosctl path) on a node whose config carries the other
// credential form: the rule that refuses the node before its claim when the form Talos reads would
// keep the old credential (documents win over the legacy map: container.RegistryAuthConfigs).
import { describe, expect, it } from 'vitest';
import { parseAuthPatch } from '../../src/core/authPatch.js';
import { shadowedCredentials } from '../../src/rules/credentialForms.js';

const LEGACY = `machine:\n  registries:\n    config:\n      ghcr.io:\n        auth:\n          username: u\n          password: p\n  sysctls:\n    a: "1"\n`;
const DOCUMENT = `apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\nusername: u\npassword: p\n`;
const DELETE_DOC = `apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\n$patch: delete\n`;
const forms = (text: string) => parseAuthPatch(text, []).credentialForms;

describe('shadowedCredentials', () => {
  it('a legacy-form patch on a node with a RegistryAuthConfig document for the host: refused, naming the conflict and the fix', () => {
    const why = shadowedCredentials('worker-1', forms(LEGACY), { documents: ['ghcr.io'], legacy: ['ghcr.io'] });
    expect(why).toEqual([
      "node worker-1 carries a RegistryAuthConfig document for ghcr.io, which takes precedence over the legacy machine.registries.config.ghcr.io.auth entry this patch sets: put the credential in a RegistryAuthConfig document (name: ghcr.io) in the patch, or remove the node's document (a RegistryAuthConfig document named ghcr.io with `$patch: delete`)",
    ]);
  });

  it("nothing to refuse: the node has no document for the host, or the patch gives the document, or deletes the node's", () => {
    expect(shadowedCredentials('w', forms(LEGACY), { documents: [], legacy: ['ghcr.io'] })).toEqual([]);
    expect(shadowedCredentials('w', forms(LEGACY), { documents: ['quay.io'], legacy: [] })).toEqual([]);
    expect(shadowedCredentials('w', forms(`${LEGACY}---\n${DOCUMENT}`), { documents: ['ghcr.io'], legacy: [] })).toEqual([]);
    expect(shadowedCredentials('w', forms(`${DELETE_DOC}---\n${LEGACY}`), { documents: ['ghcr.io'], legacy: [] })).toEqual([]);
  });

  it('the reverse cannot shadow: a document patch on a node with the legacy map wins', () => {
    expect(forms(DOCUMENT)).toEqual({ documents: ['ghcr.io'], legacy: [], deletedDocuments: [] });
    expect(shadowedCredentials('w', forms(DOCUMENT), { documents: [], legacy: ['ghcr.io'] })).toEqual([]);
  });
});
