// `talosctl get machineconfig v1alpha1 -o yaml` → the config's multi-document body. talosctl prints
// the resource with `node:`, `metadata:` and the spec as ONE string scalar holding the whole config:
// Talos marshals the MachineConfig spec as that string (v1alpha1Spec.MarshalYAML,
// pkg/machinery/resources/config/machine_config.go), and for an older node whose resource has no
// annotations talosctl prints the raw YAML spec as that string too (mcYamlRepr in
// cmd/talosctl/cmd/talos/output/yaml.go, v1.13.9). The body holds every secret of the cluster: no
// message here quotes it, only a line and column.
import { parseAllDocuments } from 'yaml';
import { ParseError } from '../../../parseError.js';

const FORMAT = 'get machineconfig -o yaml';

export function machineConfigBodyOfGet(text: string): string {
  const docs = parseAllDocuments(text, { schema: 'failsafe' });
  if (docs.length !== 1) throw new ParseError(FORMAT, `expected one resource, got ${docs.length}`);
  const doc = docs[0];
  if (doc.errors.length > 0) {
    const pos = doc.errors[0].linePos?.[0];
    throw new ParseError(FORMAT, `not valid YAML${pos ? ` (line ${pos.line}, column ${pos.col})` : ''}`);
  }
  const o = doc.toJS() as unknown;
  const spec = typeof o === 'object' && o !== null ? (o as Record<string, unknown>).spec : undefined;
  if (typeof spec !== 'string') throw new ParseError(FORMAT, 'the spec is not one string holding the config');
  return spec;
}
