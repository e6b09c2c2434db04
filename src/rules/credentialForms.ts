// May a patch that Talos's own merge applies (talosctl patch machineconfig) put the credential where
// Talos reads it on this node? Talos reads a host's credential from its RegistryAuthConfig document
// when the config has one, else from the legacy machine.registries.config.<host>.auth map
// (Container.RegistryAuthConfigs in siderolabs/talos pkg/machinery/config/container/container.go,
// v1.12.0 through v1.14.0-rc.1: the v1alpha1 map first, each document set over it by name; the CRI
// config is rendered from that map, internal/app/machined/pkg/controllers/cri/registries_config.go).
// The merge writes the forms the patch gives and leaves the others as they are. So a patch that
// sets a host's legacy map, on a node whose config carries a RegistryAuthConfig document for the
// host, changes nothing Talos reads: the old credential stays in effect, the node would be drained
// and rebooted for nothing, its proof would fail and it would be left fenced. Refused before the
// claim instead, the node untouched. The reverse cannot happen: a document the patch gives always
// wins over the node's legacy map, and a patch that also deletes the node's document
// (`$patch: delete`) leaves the legacy map it sets in effect. Pure: data in, reasons out.
// Tested in __tests__/rules/credentialForms.test.ts; end to end in __tests__/e2e/talosctl-fallback.test.ts.
import type { CredentialForms, PatchForms } from '../core/model/credential.js';

/** One reason per host whose credential the patch would leave shadowed on this node; empty when none. */
export function shadowedCredentials(node: string, patch: PatchForms, config: CredentialForms): string[] {
  const out: string[] = [];
  for (const host of patch.legacy) {
    if (patch.documents.includes(host) || patch.deletedDocuments.includes(host)) continue;
    if (!config.documents.includes(host)) continue;
    out.push(
      `node ${node} carries a RegistryAuthConfig document for ${host}, which takes precedence over the legacy ` +
        `machine.registries.config.${host}.auth entry this patch sets: put the credential in a RegistryAuthConfig document ` +
        `(name: ${host}) in the patch, or remove the node's document (a RegistryAuthConfig document named ${host} with \`$patch: delete\`)`,
    );
  }
  return out;
}
