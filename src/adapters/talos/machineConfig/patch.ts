// The credential patch applied to a machine config's multi-document text, without Talos's merge:
// - Every place plan.ts names (the forms the patch gives and the forms the node carries for the
//   host, so the form Talos reads always carries the new credential) is written with the desired one.
// - A `RegistryAuthConfig` document is replaced whole, or appended (Talos's merge never clears a
//   field with a zero value, so switching `auth` <-> `username/password` by merging would keep the
//   old field); the legacy map is edited in the text, only its own span (yamlEdit.ts): every other
//   byte of the config is kept, so Go's YAML reads every other value as before (`0644` stays 0644).
// - The patched text is then checked, without the node (verify.ts): it parses, each host's
//   effective credential is the desired one, and nothing else changed.
// Only the two credential forms are applied here (the patch's form: src/core/authPatch.ts); any other
// patch is left to talosctl. Used by the Talos API path only (src/adapters/talos/api/applyConfig.ts).
// Pure (no I/O). The config holds every credential of the cluster: no error here quotes its text,
// only document numbers, kinds, names and line/column positions.
import type { CredentialChange } from '../../../core/authPatch.js';
import type { CredentialEdit } from '../../../core/model/record.js';
import { setMapAt, YamlEditError } from './yamlEdit.js';
import {
  AUTH_FIELDS,
  LEGACY_PATH,
  MachineConfigError,
  documentIndex,
  parseConfig,
  pieceOf,
  v1alpha1Index,
  withNewline,
} from './documents.js';
import { editOf, isPending, planFor, type Desired } from './plan.js';
import { verifyParsed } from './verify.js';

export interface PatchedConfig {
  /** the config text to send; undefined when the config already carries every change (send nothing) */
  text?: string;
  /** the places changed, by label */
  changed: string[];
  /** what each changed place gets, field by field (no value): the plan's preview */
  edits: CredentialEdit[];
  /** what verifyPatched checked on the patched text, one line each */
  checks: string[];
}

/**
 * Applies the changes to the config text: each place planFor names is written with the host's desired
 * credential. A RegistryAuthConfig document is replaced by the patch's own document (or, when the
 * patch gives the host in the legacy form only, by a document rendered from its fields), or appended;
 * the legacy map is set in the v1alpha1 document's text, its own span only. Every other document
 * keeps its exact text and order. The result is checked (verifyPatched) before it is returned.
 * Throws MachineConfigError when the config is not YAML, has no v1alpha1 document for a legacy
 * change, cannot take the edit, or the patched text fails a check.
 */
export function applyCredentialChanges(configText: string, changes: CredentialChange[]): PatchedConfig {
  const before = parseConfig(configText);
  const { docs, values } = before;
  const pending = planFor(values, changes).filter(isPending);
  if (pending.length === 0) return { changed: [], edits: [], checks: [] };
  const pieces = docs.map((_d, i) => pieceOf(configText, docs, i));
  const appended: string[] = [];
  for (const p of pending) {
    if (p.form === 'document') {
      const doc = p.desired.document ?? renderDocument(p.desired);
      const i = documentIndex(values, p.desired.host);
      if (i >= 0) pieces[i] = `${i > 0 || pieces[0].startsWith('---') ? '---\n' : ''}${withNewline(doc)}`;
      else appended.push(`---\n${withNewline(doc)}`);
      continue;
    }
    const i = v1alpha1Index(values);
    if (i < 0) throw new MachineConfigError(`the node's machine config has no v1alpha1 document to carry ${p.label}`, 'v1alpha1');
    try {
      pieces[i] = setMapAt(pieces[i], LEGACY_PATH(p.desired.host), p.desired.fields);
    } catch (e) {
      if (e instanceof YamlEditError)
        throw new MachineConfigError(`the node's v1alpha1 document cannot take ${p.label}: ${e.message}`, 'v1alpha1');
      throw e;
    }
  }
  let text = pieces.map(withNewline).join('');
  if (appended.length > 0) text = withNewline(text) + appended.join('');
  const checks = verifyParsed(configText, before, text, parseConfig(text, 'the patched machine config'), changes);
  return { text, changed: pending.map((p) => p.label), edits: pending.map(editOf), checks };
}

/** A RegistryAuthConfig document carrying the host's desired credential (values double-quoted). */
function renderDocument(d: Desired): string {
  const q = (s: string) => JSON.stringify(s);
  return [
    'apiVersion: v1alpha1',
    'kind: RegistryAuthConfig',
    `name: ${q(d.host)}`,
    ...AUTH_FIELDS.filter((k) => d.fields[k] !== undefined).map((k) => `${k}: ${q(d.fields[k]!)}`),
    '',
  ].join('\n');
}
