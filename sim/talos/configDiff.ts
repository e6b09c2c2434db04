// machined's dry-run diff (v1alpha1_server.go generateDiff → configdiff.DiffConfigs → textdiff.Diff):
// the whole config of each side encoded as Talos encodes it, without comments (not the bytes stored), compared as a unified diff with
// `--- a` / `+++ b` headers and hunks of 3 context lines; "No changes." when the texts are equal.
// Values are shown as they are, credentials included: a client must redact what it quotes.
import { encodeConfig } from './machineconfig.js';
import { unifiedDiff } from './textDiff.js';
import type { MachineConfigState } from './types.js';

/** "Config diff:\n\n" and the unified diff of the two configs' texts, as ApplyConfiguration's dry run answers it. */
export function configDiff(a: MachineConfigState, b: MachineConfigState): string {
  const body = unifiedDiff(encodeConfig(a), encodeConfig(b));
  return `Config diff:\n\n${body || 'No changes.'}`;
}

export { unifiedDiff };
