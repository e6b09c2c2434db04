// Where the credential patch writes on one machine config, deciding from the credential Talos will
// read, not from the form the patch is written in: Talos reads a host's credential from its
// `RegistryAuthConfig` document when there is one, else from the legacy
// `machine.registries.config.<host>.auth` map (container.RegistryAuthConfigs: documents over the
// legacy map; docs/talos-api.md). So every form the node carries for the host is written with the
// desired credential, and the form the patch gives too: the form that wins always carries it, and the
// old credential is never left behind in the other one. What is pending, and what a plan shows of it
// (field by field, never a value). Pure (no I/O).
import type { CredentialChange } from '../../../core/authPatch.js';
import type { CredentialEdit } from '../../../core/model/record.js';
import {
  AUTH_FIELDS,
  documentIndex,
  documentLabel,
  fieldsOf,
  legacyAuthOf,
  legacyLabel,
  parseConfig,
  sameFields,
  v1alpha1Index,
  type Fields,
} from './documents.js';

/** What the patch asks for one host: the credential Talos would read from the patch, and the forms it gives. */
export interface Desired {
  host: string;
  fields: Fields;
  /** the patch's RegistryAuthConfig document for the host (its own text), when it gives one */
  document?: string;
  legacy: boolean;
}

/** Per host, the patch's credential: its document's when it gives one, else its legacy map's (Talos's own order). */
export function desiredOf(changes: CredentialChange[]): Desired[] {
  const out = new Map<string, Desired>();
  const entry = (host: string) => out.get(host) ?? out.set(host, { host, fields: {}, legacy: false }).get(host)!;
  for (const c of changes) {
    if (c.form !== 'legacy') continue;
    const d = entry(c.host);
    d.legacy = true;
    d.fields = fieldsOf(c.auth) ?? {};
  }
  for (const c of changes) {
    if (c.form !== 'document') continue;
    const d = entry(c.name);
    d.document = c.text;
    d.fields = fieldsOf(c.value) ?? {};
  }
  return [...out.values()];
}

/** One place the credential is written: the form, the label, and the fields before (undefined: absent). */
export interface Planned {
  form: 'document' | 'legacy';
  desired: Desired;
  label: string;
  before?: Fields;
  because: string;
}

/** Every place the patch writes on this config: the forms it gives and the forms the node carries for each host. */
export function planFor(values: unknown[], changes: CredentialChange[]): Planned[] {
  const v1 = values[v1alpha1Index(values)];
  const out: Planned[] = [];
  for (const d of desiredOf(changes)) {
    const i = documentIndex(values, d.host);
    const legacy = fieldsOf(legacyAuthOf(v1, d.host));
    if (d.document !== undefined || i >= 0) {
      out.push({
        form: 'document',
        desired: d,
        label: documentLabel(d.host),
        before: i >= 0 ? fieldsOf(values[i]) : undefined,
        because:
          d.document !== undefined
            ? 'the patch gives this document'
            : `the node carries this document, which Talos reads for ${d.host} over machine.registries: it must carry the new credential`,
      });
    }
    if (d.legacy || legacy !== undefined) {
      out.push({
        form: 'legacy',
        desired: d,
        label: legacyLabel(d.host),
        before: legacy,
        because: d.legacy
          ? 'the patch gives this form'
          : `the node carries this form for ${d.host} too: written with the new credential, so the old one is not left behind`,
      });
    }
  }
  return out;
}

export const isPending = (p: Planned) => !sameFields(p.before, p.desired.fields);

export function editOf(p: Planned): CredentialEdit {
  const after = p.desired.fields;
  const before = p.before ?? {};
  const fields = AUTH_FIELDS.filter((k) => before[k] !== undefined || after[k] !== undefined).map((name) => ({
    name,
    change:
      before[name] === undefined
        ? ('added' as const)
        : after[name] === undefined
          ? ('removed' as const)
          : before[name] === after[name]
            ? ('unchanged' as const)
            : ('changed' as const),
  }));
  return { target: p.label, action: p.before === undefined ? 'added' : 'replaced', fields, because: p.because };
}

/** The changes the config does not carry yet, by label (`RegistryAuthConfig/<name>`, `v1alpha1 machine.registries.config.<host>.auth`). */
export function pendingChanges(configText: string, changes: CredentialChange[]): string[] {
  const { values } = parseConfig(configText);
  return planFor(values, changes)
    .filter(isPending)
    .map((p) => p.label);
}

export function changeLabel(c: CredentialChange): string {
  return c.form === 'document' ? documentLabel(c.name) : legacyLabel(c.host);
}
